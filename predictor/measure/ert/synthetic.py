"""Synthetic raw ERT data with known levels and peaks: for tests and chart previews on a CPU.

Never a measurement: ``provenance.gpu`` says "synthetic" and ``provenance.synthetic`` is True.
The curves follow the shapes a real sweep shows: a launch/latency-bound ramp at tiny working
sets, a staircase of levels with smooth transitions at the capacities, multiplicative noise.
"""
from __future__ import annotations

import math

import numpy as np

SYNTHETIC_LEVELS_BPS = {"L1": 25e12, "L2": 10e12, "HBM": 4e12}
SYNTHETIC_SM_COUNT = 132
SYNTHETIC_L2_BYTES = 62914560


def staircase_curve(x_bytes, levels: list[tuple[float, float]], *, ramp_bytes: float = 0.0,
                    transition: float = 1.5) -> np.ndarray:
    """Bandwidth at working sets ``x_bytes`` for ``levels`` = [(bandwidth_Bps, capacity_bytes),
    ..., (last_bandwidth_Bps, inf)]: level i up to its capacity, then a log-linear fall to the next
    level over a factor ``transition`` in size; times a ramp x / (x + ramp_bytes)."""
    x = np.asarray(x_bytes, dtype=float)
    y = np.full_like(x, levels[-1][0])
    for i in range(len(levels) - 2, -1, -1):
        bw, cap = levels[i]
        nxt = levels[i + 1][0]
        t = np.clip(np.log(x / cap) / math.log(transition), 0.0, 1.0)
        y = np.where(x <= cap * transition, bw * (nxt / bw) ** t, y)
    if ramp_bytes > 0:
        y = y * x / (x + ramp_bytes)
    return y


def _series(x, y, **meta) -> dict:
    pts = [{"working_set_bytes": float(a), "bandwidth_Bps": float(b), "trials": 1,
            "time_s": float(a) / float(b)} for a, b in zip(x, y)]
    return dict(meta, points=pts, truncated=False)


def synthetic_raw(seed: int = 0, noise: float = 0.01) -> dict:
    """A full raw-data dict shaped like ``run.characterise`` output (H200-like numbers)."""
    rng = np.random.default_rng(seed)

    def noisy(y):
        return y * (1.0 + noise * rng.standard_normal(len(y)))

    lv = SYNTHETIC_LEVELS_BPS
    x = 4096 * 1.1 ** np.arange(0, int(math.log(2**32 / 4096) / math.log(1.1)) + 1)
    rmw = staircase_curve(x, [(lv["L2"], 40e6), (lv["HBM"], math.inf)], ramp_bytes=2e4)
    slices = 2048 * 1.1 ** np.arange(0, int(math.log(2048) / math.log(1.1)) + 1)
    grid = SYNTHETIC_SM_COUNT * 4
    xl1 = slices * grid
    l1 = staircase_curve(xl1, [(lv["L1"], 26e6), (lv["L2"], 40e6), (lv["HBM"], math.inf)],
                         ramp_bytes=5e5)
    bandwidth = {
        "rmw_fp32": _series(x, noisy(rmw), kernel="ert_rmw_fp32", variant="rmw", dtype="fp32",
                            scope="global", sm_count=SYNTHETIC_SM_COUNT),
        "l1_read_fp32x4": _series(xl1, noisy(l1), kernel="ert_l1_read_fp32x4", variant="read",
                                  dtype="fp32x4", scope="block-local", blocks_per_sm=4,
                                  sm_count=SYNTHETIC_SM_COUNT),
    }
    compute = []
    for prec, peak in (("fp64", 3.3e13), ("fp32", 6.6e13), ("fp16", 1.3e14), ("bf16", 1.3e14)):
        for op, scale in (("fma", 1.0), ("add", 0.5)):
            pts = []
            for f in (2 ** k for k in range(0, 11)):
                ai = f / (2 * (8 if prec == "fp64" else 4))
                fl = min(peak * scale, ai * lv["L2"]) * (1.0 + noise * rng.standard_normal())
                pts.append({"kernel": f"ert_{op}_{prec}_f{f}", "nominal_flops": f,
                            "flops_per_element": f, "ai_flops_per_byte": ai, "flops_per_s": fl})
            compute.append({"precision": prec, "op": op, "unit": "cuda", "points": pts,
                            "peak_flops_per_s": max(p["flops_per_s"] for p in pts)})
    tensor = {
        name: {"case": name, "precision": prec, "unit": "tensor", "method": "synthetic",
               "flops_per_s": v, "error": None}
        for name, prec, v in (("fp16", "fp16", 7.8e14), ("bf16", "bf16", 7.7e14),
                              ("tf32", "tf32", 3.9e14), ("int8", "int8", 1.2e15),
                              ("fp64", "fp64", 5.9e13), ("bf16_torch", "bf16", 7.9e14))}
    tensor["wmma_fp16"] = {"case": "wmma_fp16", "precision": "fp16", "unit": "tensor",
                           "method": "synthetic", "flops_per_s": 5.6e14, "error": None}
    tensor["fp8"] = {"case": "fp8", "precision": "fp8", "unit": "tensor", "flops_per_s": None,
                     "error": "synthetic: not measured"}
    return {
        "schema": "ert-raw/1",
        "provenance": {"date": "2026-01-01T00:00:00Z", "command": "synthetic", "gpu": "synthetic",
                       "synthetic": True, "cupy": "none", "cuda_runtime": "none",
                       "gpu_info": {"name": "synthetic", "sm_count": SYNTHETIC_SM_COUNT,
                                    "l2_bytes": SYNTHETIC_L2_BYTES, "compute_capability": "9.0"}},
        "config": {"canonical_series": "rmw_fp32", "l1_series": "l1_read_fp32x4"},
        "clocks": {"start": {"driver_version": "0.0", "sm_clock_mhz": 1980.0}},
        "bandwidth": bandwidth, "compute": compute, "tensor": tensor,
        "launch": {"eager_per_launch_s": 4.0e-6, "graph_per_kernel_s": 1.0e-6},
        "errors": [],
    }
