"""The ``gemv`` class (linear layers of one row) fitted on its own kernels, on two GPUs (CPU only).

    python -m calibration.fit.gemv_fit

A linear layer of one row (a classifier head at batch 1, a decoder's step: graph/opclass._one_row_linear) runs
cuBLAS's matrix-vector kernels at fp32 and tf32 (``gemv``/``gemvx`` in the kernel tables), not the tiled GEMM kernels
the ``gemm`` class is fitted on: ~2.6 us for a 2048 x 1000 fp32 head on the
H200 where the fp32 GEMM class's fixed cost alone is 5.6 us. The H200 and H100 kernel tables (calibration/data/<gpu>/
timing, eager rows with the profiler's input shapes) hold them inside the measured networks: every ``aten::linear``
kernel whose input has one row, but cuBLAS's split-K reduction and memset kernels (a call's second kernel, left out).
At 16-bit cuBLAS runs its 8-row nvjet GEMM tiles instead, whose time grows with K over too few tiles (a gemv fit of
them was 36% off kernel by kernel): those layers stay in the op's GEMM class (opclass.GEMV_PRECISIONS) and are not
read here. One sample per (GPU, network, precision, K, N): the median kernel, its features those of a one-row MatMul on that
GPU's profile (the H100's: its ERT-measured profile as predict transfers to it). Per precision, (t0_s, eff_compute,
eff_memory) by least squares on the log kernel time under predictor/timing's kernel_time (thin_gemm_fit's
fit_precision, no graph gap: eager kernel durations; the K loop's share at the main fit's starting gemm_k_half of 256,
as it pins the class, where predict applies the fitted one: the compute term, with eff_compute at its bound, stays far
below the kernels' fixed cost and weight reads either way); an efficiency no sample depends on goes back to its start.
The main fit (calibration/fit/fit.py) holds the class at these values. Only training-split networks' tables are read
(``exclude`` leaves further networks out: grouped cross-validation). Ignores: the split-K reduction kernel some
16-bit calls add, the bias epilogue, weights the L2 still holds from an earlier step (a decoder loop's).
"""
from __future__ import annotations

import argparse
import statistics
from collections import defaultdict

from predictor.graph.opclass import GEMV_PRECISIONS

from .pinned_report import summary
from .thin_gemm_fit import Sample, fit_precision

CLASS = "gemv"
GPUS = ("h200", "h100")
PARAMS = ("t0_s", "eff_compute", "eff_memory")
STARTS = ((3e-6, 0.3, 0.6), (1.5e-6, 0.05, 0.9), (5e-6, 0.7, 0.5))
EXTRA_KERNELS = ("splitkreduce", "memset", "reduce")  # a call's second kernel, not the matrix-vector product


def _one_row(shapes) -> tuple[int, int] | None:
    """(K, N) of an ``aten::linear`` call on a one-row input ``x [1.., K]`` with ``W [N, K]``, else None."""
    if len(shapes) < 2 or not isinstance(shapes[0], list) or not isinstance(shapes[1], list):
        return None
    x, w = shapes[0], shapes[1]
    if not x or len(w) != 2 or any(int(d) != 1 for d in x[:-1]) or int(x[-1]) != int(w[1]):
        return None
    return int(w[1]), int(w[0])


def samples(gpus: tuple[str, ...] = GPUS) -> list[tuple[str, Sample]]:
    """(network, sample) per (GPU, network, precision, K, N) of the training-split networks: the median kernel."""
    from calibration.evaluate.broadcast_kernels import eager_kernels
    from predictor.graph.cost import cost_graph
    from predictor.graph.traffic import traffic_for
    from predictor.machine.profile import load_profile
    from predictor.machine.transfer import transfer_profile
    from predictor.precision import policy
    from predictor.timing.features import kernel_features
    from predictor.types import DEFAULT_OPSET

    from .dataset import zoo_split
    from .kernel_samples import linear_node

    profiles = {"h200": load_profile("h200"), "h100": transfer_profile(load_profile("h100")).profile}
    times: dict[tuple, list[float]] = defaultdict(list)
    for gpu in gpus:
        for r, shapes, dur in eager_kernels(gpu, lambda r: r.get("aten_op") == "aten::linear"):
            name = r["kernel_name"].lower()
            kn = _one_row(shapes)
            if kn is None or dur <= 0 or any(x in name for x in EXTRA_KERNELS):
                continue
            times[(gpu, r["network"], r["precision"], kn)].append(dur)
    out, feats = [], {}
    for (gpu, net, prec, (k, n)), ts in sorted(times.items()):
        if zoo_split(net) != "train" or prec not in GEMV_PRECISIONS:
            continue
        key = (gpu, prec, k, n)
        if key not in feats:
            node = linear_node({"M": 1, "K": k, "N": n})
            prof = profiles[gpu]
            c = cost_graph([node], policy(prec), DEFAULT_OPSET, traffic_for(prof), frozenset({"x"})).costs[0]
            feats[key] = kernel_features(c, prof, prec, node)
        f = feats[key]
        out.append((net, Sample(prec, 1, n, k, statistics.median(ts), f.kernels, f.compute_s, f.gemm_k, f.hbm_s,
                                f.l2_s, f.l1_s, f.rows_per_sm)))
    return out


def fit_gemv(all_samples: list[tuple[str, Sample]], exclude: frozenset[str] = frozenset(), log=print,
             gap_s: float = 0.0, gemm_k_half: float = 256.0) -> tuple[dict, dict]:
    """The main fit's pinned-class interface: ({precision: params}, {precision: report}), GEMV_PRECISIONS only.
    ``gap_s`` does not apply (eager kernel durations hold no graph gap)."""
    entry, report = {}, {}
    kept = [(net, s) for net, s in all_samples if net not in exclude]
    for prec in sorted({s.precision for _, s in kept}):
        ss = [s for _, s in kept if s.precision == prec]
        entry[prec], report[prec] = fit_precision(ss, 0.0, gemm_k_half, cls=CLASS, gpu="+".join(GPUS),
                                                  params=PARAMS, starts=STARTS)
        r = report[prec]
        r["networks"] = len({net for net, s in kept if s.precision == prec})
        log(summary(CLASS, prec, f"{r['samples']} kernels of {r['networks']} networks", entry[prec], r))
    return entry, report


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m calibration.fit.gemv_fit", description=__doc__.splitlines()[0])
    ap.parse_args(argv)
    fit_gemv(samples())  # as the main fit pins it (its starting gemm_k_half)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
