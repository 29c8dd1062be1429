"""Fit op classes that no training network exercises from the op microbenchmarks (CPU only, committed data).

Grouped convolutions (1 < groups < channels: RegNet, ResNeXt) run cuDNN kernels of their own, far slower
than their FLOPs and bytes say (a 3x3 conv of 120 channels in 5 groups at 28x28 takes ~36 us at batch 1 on
the H200, fp16), and no training network has one. Their class ``grouped`` (graph/opclass.kernel_class) is
fitted here on the ``conv_grouped`` and ``conv_grouped_width`` microbenchmark families
(calibration/data/h200/microbench*/microbench.csv: group widths 4 to 64, batch 1 and 32): per precision
the mean kernel count less one becomes the hidden kernels of ``Conv:grouped`` and (t0, eff_compute,
eff_memory) are fitted by least squares on the log of the measured time (CUDA-graph replays, so the
inter-kernel gap is in it) with the model of predictor/fitted.py, hidden kernels priced with the main fit's
``layout`` class. Ignores: the grouped convolutions' dependence on layout (channels-last runs others).
"""
from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np

from predictor.fitted import gemm_tiles, hidden_bytes_share, precision_tile, tile_padding, wave_efficiency
from predictor.graph.cost import cost_graph
from predictor.graph.traffic import HierarchicalTraffic
from predictor.precision import policy
from predictor.roofline import level_times_s
from predictor.types import MemLevel, Node, TensorInfo, frozen_map

MICROBENCH = Path(__file__).resolve().parents[1] / "data" / "h200" / "microbench"
GROUPED_FAMILIES = ("conv_grouped", "conv_grouped_width")
MIN_ROWS = 4


def microbench_rows(families: tuple[str, ...], root: Path = MICROBENCH) -> list[dict]:
    """Rows of the given families from every microbench.csv under ``root`` without an error; a case measured
    in several runs keeps the last run's row (runs sorted by folder name)."""
    out: dict[tuple, dict] = {}
    for path in sorted(root.glob("**/microbench.csv"), key=lambda p: str(p.parent)):
        with path.open(newline="") as f:
            for r in csv.DictReader(f):
                if r["family"] in families and not r.get("error") and r.get("time_s"):
                    out[(r["op"], r["precision"], r["params"])] = r
    return list(out.values())


def conv_node(params: dict) -> Node:
    """The microbenchmark's F.conv2d call as one ONNX Conv node (fp32 graph; the precision policy sets storage)."""
    n, c, h, w, k = params["N"], params["C"], params["H"], params["W"], params["K"]
    r, s, g, st, pad = params["R"], params["S"], params["groups"], params["stride"], params["pad"]
    x = TensorInfo("x", "float32", (n, c, h, w))
    wt = TensorInfo("w", "float32", (k, c // g, r, s), is_initializer=True)
    y = TensorInfo("y", "float32", (n, k, params["Ho"], params["Wo"]))
    attrs = frozen_map({"group": g, "strides": (st, st), "pads": (pad, pad, pad, pad), "kernel_shape": (r, s),
                        "dilations": (1, 1)})
    return Node(name="conv", op_type="Conv", domain="", inputs=(x, wt), outputs=(y,), attrs=attrs)


def _columns(rows: list[dict], precision: str, profile) -> dict[str, np.ndarray]:
    cols = {k: [] for k in ("kernels", "compute_s", "gemm_k", "memory_s", "cache_s", "hidden_s", "measured_s",
                            "measured_kernels")}
    pol = policy(precision)
    for r in rows:
        node = conv_node(json.loads(r["params"]))
        gc = cost_graph([node], pol, 21, HierarchicalTraffic(profile.l2_bytes, profile.arch), frozenset({"x"}))
        c = gc.costs[0]
        ideal = level_times_s(c, profile, 0.0)
        wave = wave_efficiency(gemm_tiles(c.work.gemm, precision_tile(precision)), profile.sm_count,
                               c.work.gemm[3]) if c.work.gemm else 1.0
        from predictor.fitted import _hidden_bytes

        cols["kernels"].append(c.kernels)
        cols["compute_s"].append(ideal["compute"] * tile_padding(c.work.gemm) / wave)
        cols["gemm_k"].append(float(c.work.gemm[3]) if c.work.gemm else 0.0)
        cols["memory_s"].append(ideal[MemLevel.HBM.value])
        cols["cache_s"].append(max(ideal[MemLevel.L1.value], ideal[MemLevel.L2.value]))
        cols["hidden_s"].append(_hidden_bytes(c, "io") / profile.bandwidth(MemLevel.HBM))
        cols["measured_s"].append(float(r["time_s"]))
        cols["measured_kernels"].append(float(r["n_kernels"] or c.kernels))
    return {k: np.asarray(v, dtype=float) for k, v in cols.items()}


def fit_grouped(classes: dict, gemm_k_half: float, kernel_gap_s: float, profile, log=print,
                root: Path = MICROBENCH) -> tuple[dict, dict]:
    """(class params by precision, hidden kernel count by precision) of grouped convolutions."""
    from scipy.optimize import least_squares

    rows = microbench_rows(GROUPED_FAMILIES, root)
    params: dict[str, dict] = {}
    hidden: dict[str, float] = {}
    for prec in ("fp32", "tf32", "fp16", "bf16"):
        sel = [r for r in rows if r["precision"] == prec]
        if len(sel) < MIN_ROWS:
            continue
        x = _columns(sel, prec, profile)
        n_hidden = round(max(0.0, float(np.mean(x["measured_kernels"] - x["kernels"]))), 2)
        lay = classes.get("layout", {}).get(prec) or classes["default"]["*"]
        k_eff = np.where(x["gemm_k"] > 0, x["gemm_k"] / (x["gemm_k"] + gemm_k_half), 1.0)
        extra = n_hidden * lay["t0_s"] + hidden_bytes_share(n_hidden) * x["hidden_s"] / lay["eff_memory"] \
            + kernel_gap_s * (x["kernels"] + n_hidden)

        def model(theta):
            t0, ec, em = np.exp(theta)
            body = np.maximum(np.maximum(x["compute_s"] / (ec * k_eff), x["memory_s"] / em), x["cache_s"])
            return x["kernels"] * t0 + body + extra

        sol = least_squares(lambda th: np.log(model(th) / x["measured_s"]), np.log([5e-6, 0.2, 0.5]),
                            bounds=(np.log([2e-7, 1e-3, 0.02]), np.log([1e-4, 1.0, 3.0])))
        err = np.abs(model(sol.x) / x["measured_s"] - 1)
        t0, ec, em = (float(v) for v in np.exp(sol.x))
        params[prec] = {"t0_s": t0, "eff_compute": ec, "eff_memory": em, "n_nodes": len(sel)}
        hidden[prec] = n_hidden
        log(f"grouped conv {prec}: {len(sel)} microbenchmarks, t0 {t0 * 1e6:.2f} us, eff_compute {ec:.3f}, "
            f"eff_memory {em:.3f}, hidden kernels {n_hidden}; MAPE {np.mean(err):.1%}, worst {np.max(err):.1%}")
    if params:
        params["*"] = {k: float(np.exp(np.mean([math.log(v[k]) for v in params.values()])))
                       for k in ("t0_s", "eff_compute", "eff_memory")}
    return params, hidden
