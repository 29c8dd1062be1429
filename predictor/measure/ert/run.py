"""The whole characterisation: stages in order, each with a time budget, each failure recorded.

``characterise`` returns the raw-data dict (JSON-able); ``checkpoint`` is called after every stage
so a crash later keeps what was measured.
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Callable

from .device import gpu_info, import_cupy, pci_bus_id, provenance, read_clocks


@dataclass(frozen=True)
class RunConfig:
    """Sizes, repeat counts and time budgets (seconds) of one run."""

    quick: bool
    min_time_s: float
    repeats: int
    # (variant, dtype, growth, budget_s); the first is the canonical ERT series
    bandwidth_series: tuple[tuple[str, str, float, float], ...]
    min_bytes: int
    max_bytes: int
    l1_growth: float
    l1_max_slice_bytes: int
    l1_budget_s: float
    compute_precisions: tuple[str, ...]
    compute_step: int
    max_nominal_flops: int
    compute_working_set_bytes: int
    compute_budget_s: float  # per precision and op
    gemm_size: int
    gemm_repeats: int
    tensor_budget_s: float
    launch_count: int
    graph_kernels: int
    total_budget_s: float
    warm_up_s: float = 0.3
    plateaus: dict = field(default_factory=lambda: {"tolerance": 0.05, "min_points": 6,
                                                    "drop": 0.15, "max_outliers": 1})

    @property
    def canonical_series(self) -> str:
        v, d = self.bandwidth_series[0][:2]
        return f"{v}_{d}"

    def to_dict(self) -> dict:
        d = asdict(self)
        d["canonical_series"] = self.canonical_series
        d["l1_series"] = "l1_read_fp32x4"
        return d


FULL = RunConfig(
    quick=False, min_time_s=5e-3, repeats=3,
    bandwidth_series=(("rmw", "fp32", 1.1, 30.0), ("rmw", "fp32x4", 1.2, 12.0),
                      ("copy", "fp32x4", 1.2, 12.0), ("read", "fp32x4", 1.2, 12.0)),
    min_bytes=4096, max_bytes=4 << 30,
    l1_growth=1.1, l1_max_slice_bytes=4 << 20, l1_budget_s=15.0,
    compute_precisions=("fp64", "fp32", "fp16", "bf16"), compute_step=2, max_nominal_flops=1024,
    compute_working_set_bytes=8 << 20, compute_budget_s=6.0,
    gemm_size=8192, gemm_repeats=10, tensor_budget_s=40.0,
    launch_count=2000, graph_kernels=1000, total_budget_s=170.0)

QUICK = RunConfig(
    quick=True, min_time_s=1e-3, repeats=2,
    bandwidth_series=(("rmw", "fp32", 1.5, 8.0),),
    min_bytes=4096, max_bytes=1 << 30,
    l1_growth=1.5, l1_max_slice_bytes=2 << 20, l1_budget_s=5.0,
    compute_precisions=("fp64", "fp32", "fp16", "bf16"), compute_step=4, max_nominal_flops=1024,
    compute_working_set_bytes=8 << 20, compute_budget_s=2.0,
    gemm_size=4096, gemm_repeats=3, tensor_budget_s=20.0,
    launch_count=200, graph_kernels=100, total_budget_s=60.0)


def _fmt_bw(series: dict) -> str:
    pts = series.get("points") or []
    if not pts:
        return "no points"
    top = max(p["bandwidth_Bps"] for p in pts)
    last = pts[-1]
    text = (f"{len(pts)} points, max {top / 1e12:.2f} TB/s, at {last['working_set_bytes'] / 2**20:.1f}"
            f" MiB {last['bandwidth_Bps'] / 1e12:.2f} TB/s")
    return text + (" (truncated)" if series.get("truncated") else "")


def _fmt_tensor(rec: dict) -> str:
    parts = []
    for name, r in rec.items():
        parts.append(f"{name} {r['flops_per_s'] / 1e12:.0f}T" if r.get("flops_per_s") else f"{name} failed")
    return ", ".join(parts)


def characterise(config: RunConfig, *, command: str,
                 progress: Callable[[str], None] = print,
                 checkpoint: Callable[[dict], None] | None = None) -> dict:
    """Run every stage; returns the raw data. Needs CuPy and a GPU (import_cupy raises otherwise)."""
    from . import sweep
    from .gemm import tensor_core_ceilings

    t_start = time.monotonic()
    cp = import_cupy()
    gpu = gpu_info(cp)
    pci = pci_bus_id(cp)
    raw: dict = {"schema": "ert-raw/1", "provenance": provenance(cp, gpu, command),
                 "config": config.to_dict(), "clocks": {"start": read_clocks(pci)},
                 "bandwidth": {}, "compute": [], "tensor": {}, "launch": {}, "errors": [],
                 "stage_times_s": {}}
    progress(f"[{0.0:6.1f}s] device: {gpu.name}, {gpu.sm_count} SMs, L2 {gpu.l2_bytes / 2**20:.0f} MiB, "
             f"cc {gpu.compute_capability}, CuPy {raw['provenance']['cupy']}, "
             f"CUDA runtime {raw['provenance']['cuda_runtime']}")

    def remaining() -> float:
        return config.total_budget_s - (time.monotonic() - t_start)

    def stage(name: str, fn: Callable[[float], object], describe: Callable[[object], str]):
        budget = remaining()
        if budget <= 0:
            msg = "skipped: total time budget spent"
            raw["errors"].append({"stage": name, "error": msg})
            progress(f"[{time.monotonic() - t_start:6.1f}s] {name}: {msg}")
            return {"error": msg}
        t0 = time.monotonic()
        try:
            result = fn(budget)
        except Exception as e:  # one stage's failure never stops the run
            msg = f"{type(e).__name__}: {e}"[:500]
            raw["errors"].append({"stage": name, "error": msg})
            result = {"error": msg}
        if isinstance(result, dict) and result.get("error"):
            text = f"FAILED {str(result['error'])[:200]}"
        else:
            try:
                text = describe(result)
            except Exception:
                text = "done"
        dt = time.monotonic() - t0
        raw["stage_times_s"][name] = dt
        progress(f"[{time.monotonic() - t_start:6.1f}s] {name}: {text} ({dt:.1f}s)")
        if checkpoint is not None:
            try:
                checkpoint(raw)
            except Exception as e:
                progress(f"warning: checkpoint failed: {type(e).__name__}: {e}")
        return result

    c = config
    raw["warm_up"] = stage("warm-up", lambda left: sweep.warm_up(seconds=c.warm_up_s),
                           lambda r: f"{r['seconds']:.2f} s of read-modify-write")
    for variant, dtype, growth, budget in c.bandwidth_series:
        key = f"{variant}_{dtype}"
        raw["bandwidth"][key] = stage(
            f"bandwidth {key}",
            lambda left, v=variant, d=dtype, g=growth, b=budget: sweep.bandwidth_sweep(
                v, d, min_bytes=c.min_bytes, max_bytes=c.max_bytes, growth=g,
                min_time_s=c.min_time_s, repeats=c.repeats, budget_s=min(b, left)),
            _fmt_bw)
    raw["bandwidth"]["l1_read_fp32x4"] = stage(
        "bandwidth l1_read_fp32x4 (block-local)",
        lambda left: sweep.l1_sweep(max_slice_bytes=c.l1_max_slice_bytes, growth=c.l1_growth,
                                    min_time_s=c.min_time_s, repeats=c.repeats,
                                    budget_s=min(c.l1_budget_s, left)),
        _fmt_bw)
    for prec in c.compute_precisions:
        for fma in (True, False):
            res = stage(
                f"compute {prec} {'fma' if fma else 'add'}",
                lambda left, p=prec, f=fma: sweep.compute_sweep(
                    p, f, max_nominal_flops=c.max_nominal_flops, step=c.compute_step,
                    working_set_bytes=c.compute_working_set_bytes, min_time_s=c.min_time_s,
                    repeats=c.repeats, budget_s=min(c.compute_budget_s, left)),
                lambda r: f"peak {r['peak_flops_per_s'] / 1e12:.2f} TFLOP/s over {len(r['points'])} points")
            if isinstance(res, dict) and "precision" not in res:
                res = dict(res, precision=prec, op="fma" if fma else "add", unit="cuda", points=[])
            raw["compute"].append(res)
    raw["clocks"]["after_compute"] = read_clocks(pci)
    raw["tensor"] = stage(
        "tensor-core GEMMs",
        lambda left: tensor_core_ceilings(size=c.gemm_size, repeats=c.gemm_repeats,
                                          budget_s=min(c.tensor_budget_s, left),
                                          min_time_s=c.min_time_s),
        _fmt_tensor)
    raw["launch"] = stage(
        "launch overhead",
        lambda left: sweep.launch_overhead(n_launches=c.launch_count, graph_kernels=c.graph_kernels),
        lambda r: (f"eager {r['eager_per_launch_s'] * 1e6:.2f} us/launch, graph "
                   f"{r['graph_per_kernel_s'] * 1e6:.2f} us/kernel"))
    raw["clocks"]["end"] = read_clocks(pci)
    raw["total_time_s"] = time.monotonic() - t_start
    return raw
