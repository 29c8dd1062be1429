"""The ``gemm_thin`` class (linear layers with a tiny K or N) fitted on its own kernel sweep (CPU only).

    python -m calibration.fit.thin_gemm_fit

A linear layer whose K or N is a few elements (CaiT's 4 x 4 talking-heads mixing over B x 196 x 196 rows, ConViT's
3 -> 4 positional projection over B x 196 x 196) runs cuBLAS's small-tile kernels (CUTLASS wmma, SIMT xmma, nvjet
8-wide tiles): its time follows the tile steps (predictor/graph/ops/matmul.thin_linear_steps, OpWork.rows), not its
FLOPs or bytes. The ``linear_thin`` microbenchmark (calibration/networks/microbench.py; measured on the H100, the
device's card that session: calibration/data/h100/microbench/run18, run16 an earlier repeat) holds F.linear of
(K, N) in (4, 4), (4, 64), (64, 4), (12, 12), (3, 96), (96, 3), (8, 8), (64, 64) over 8 k to 1.23 M rows at every
precision, CUDA-graph replays (each call holds one graph gap). Per precision, (t0_s, eff_compute, eff_memory, row_s
per tile step per SM) by least squares on the log call time under predictor/timing's kernel_time with the H100's
ceilings (its ERT-measured profile as predict transfers to it; the K loop is in the tile steps, so the features give
no gemm_k and gemm_k_half does not enter); the 64 x 64 calls are class ``gemm``, not read. The main fit (calibration/fit/fit.py)
holds the class at these values; no network is read, so grouped cross-validation leaves nothing out. Ignores: the
kernel changes of cuBLAS's heuristics between row counts (fp32's 4 x 4 layer over 65 k rows takes twice its time over
393 k rows), the second kernel cuBLAS launches above 2^20 rows.
"""
from __future__ import annotations

import argparse
import math
from dataclasses import dataclass

import numpy as np

from .pinned_report import determined, summary, with_mean_entry

CLASS = "gemm_thin"
FAMILY = "linear_thin"
GPU = "h100"
PARAMS = ("t0_s", "eff_compute", "eff_memory", "row_s")
STARTS = ((3e-6, 0.3, 0.6, 2e-7), (1e-6, 0.05, 0.9, 5e-8), (5e-6, 0.7, 0.3, 5e-7))


@dataclass(frozen=True)
class Sample:
    """One microbenchmark call: its measured time and its kernel's features on the measuring GPU."""

    precision: str
    m: int
    n: int
    k: int
    measured_s: float
    kernels: float
    compute_s: float
    gemm_k: float
    hbm_s: float
    l2_s: float
    l1_s: float
    rows_per_sm: float


def samples() -> list[Sample]:
    """Every linear_thin call of the H100's microbenchmark folder (the last run's row of a repeated case)."""
    from predictor.graph.cost import cost_graph
    from predictor.graph.opclass import kernel_class
    from predictor.graph.traffic import traffic_for
    from predictor.machine.profile import load_profile
    from predictor.machine.transfer import transfer_profile
    from predictor.precision import policy
    from predictor.timing.features import kernel_features
    from predictor.types import DEFAULT_OPSET

    from .dataset import DATA
    from .kernel_samples import linear_node
    from .micro_fit import microbench_rows, row_params

    profile = transfer_profile(load_profile(GPU)).profile
    traffic = traffic_for(profile)
    out = []
    for r in microbench_rows((FAMILY,), DATA / GPU / "microbench"):
        p, prec = row_params(r), r["precision"]
        node = linear_node(p)
        if kernel_class(node) != CLASS:
            continue
        c = cost_graph([node], policy(prec), DEFAULT_OPSET, traffic, frozenset({"x"})).costs[0]
        f = kernel_features(c, profile, prec, node)
        out.append(Sample(prec, p["M"], p["N"], p["K"], float(r["time_s"]), f.kernels, f.compute_s, f.gemm_k,
                          f.hbm_s, f.l2_s, f.l1_s, f.rows_per_sm))
    return sorted(out, key=lambda s: (s.precision, s.k, s.n, s.m))


def model_times(vals: dict, x: dict, gap_s: float, gemm_k_half: float) -> np.ndarray:
    """Call times of samples ``x`` (arrays of Sample fields) under class parameters ``vals``: predictor/timing's
    kernel_time plus one graph gap per kernel (eff_l2 1)."""
    from types import SimpleNamespace

    from predictor.timing.model import NUMPY_OPS, kernel_time

    zeros = np.zeros(len(x["measured_s"]))
    f = SimpleNamespace(kernels=x["kernels"], gemm_k=x["gemm_k"], compute_s=x["compute_s"], hbm_s=x["hbm_s"],
                        l2_s=x["l2_s"], l1_s=x["l1_s"], rows_per_sm=x["rows_per_sm"], walk_bytes_per_sm=zeros,
                        loop_steps=zeros, walk_waves=zeros)
    fixed, body, _ = kernel_time(f, SimpleNamespace(**{"eff_l2": 1.0, "block_s": 0.0, "row_s": 0.0, **vals}),
                                 gemm_k_half, NUMPY_OPS)
    return fixed + body + gap_s * x["kernels"]


def fit_precision(ss: list[Sample], gap_s: float, gemm_k_half: float, cls: str = CLASS, gpu: str = GPU,
                  params: tuple[str, ...] = PARAMS, starts: tuple = STARTS) -> tuple[dict, dict]:
    """(t0_s, eff_compute, eff_memory, row_s: ``params``) of one precision's samples of class ``cls`` and a report
    (samples, MAPE, median, relative standard errors, which the data determined: an efficiency no sample depends on
    goes back to its start). ``starts``: one start per row, in the order of ``params``."""
    from scipy.optimize import least_squares

    from predictor.timing.params import PARAMS as SPEC, param_bounds

    PARAMS = params  # noqa: N806 (the fitted names)
    x = {k: np.array([getattr(s, k) for s in ss], dtype=float)
         for k in ("measured_s", "kernels", "compute_s", "gemm_k", "hbm_s", "l2_s", "l1_s", "rows_per_sm")}
    lo = np.log([max(param_bounds(n, cls, ss[0].precision)[0], 1e-12) for n in PARAMS])
    hi = np.log([param_bounds(n, cls, ss[0].precision)[1] for n in PARAMS])

    def resid(th):
        return np.log(model_times(dict(zip(PARAMS, np.exp(th))), x, gap_s, gemm_k_half) / x["measured_s"])

    best = None
    for start in starts:  # a max has flat regions: several starts
        sol = least_squares(resid, np.clip(np.log(start), lo + 1e-6, hi - 1e-6), bounds=(lo, hi))
        if best is None or sol.cost < best.cost:
            best = sol
    s2 = 2.0 * float(best.cost) / max(len(ss) - len(PARAMS), 1)
    se = np.sqrt(np.maximum(np.diag(np.linalg.pinv(best.jac.T @ best.jac) * s2), 0.0))
    col = np.linalg.norm(best.jac, axis=0)
    active = col > 1e-6 * max(float(col.max()), 1e-300)
    x_end = best.x.copy()
    for i, name in enumerate(PARAMS):
        if active[i] or name not in ("eff_compute", "eff_memory"):
            continue
        trial = x_end.copy()
        trial[i] = math.log(min(max(SPEC[name].start, math.exp(lo[i])), math.exp(hi[i])))
        if np.allclose(resid(trial), resid(x_end), rtol=0, atol=1e-12):
            x_end = trial
    vals = {n: float(v) for n, v in zip(PARAMS, np.exp(x_end))}
    err = model_times(vals, x, gap_s, gemm_k_half) / x["measured_s"] - 1
    report = {"samples": len(ss), "gpu": gpu, "mape": float(np.mean(np.abs(err))),
              "median_abs_error": float(np.median(np.abs(err))), "worst": float(np.max(np.abs(err))),
              "stderr_rel": {n: float(e) for n, e in zip(PARAMS, se)},
              "determined": determined(PARAMS, se, lo, hi, best.x, active)}
    return vals, report


def fit_thin_gemm(all_samples: list[Sample], exclude: frozenset[str] = frozenset(), log=print, gap_s: float = 0.0,
                  gemm_k_half: float = 256.0) -> tuple[dict, dict]:
    """The main fit's pinned-class interface: ({precision: params, "*": their geometric mean}, {precision: report}).
    ``exclude`` (left-out networks) does not apply: no network is read."""
    entry, report = {}, {}
    for prec in sorted({s.precision for s in all_samples}):
        ss = [s for s in all_samples if s.precision == prec]
        entry[prec], report[prec] = fit_precision(ss, gap_s, gemm_k_half)
        log(summary(CLASS, prec, f"{report[prec]['samples']} calls ({GPU})", entry[prec], report[prec]))
    return with_mean_entry(entry, PARAMS), report


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m calibration.fit.thin_gemm_fit", description=__doc__.splitlines()[0])
    ap.parse_args(argv)
    import json
    from pathlib import Path

    doc = json.loads((Path(__file__).resolve().parents[2] / "predictor" / "data" / "calibration_h200.json").read_text())
    fit_thin_gemm(samples(), gap_s=doc["kernel_gap_s"], gemm_k_half=doc["gemm_k_half"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
