"""The recurrent classes ``rnn`` and ``rnn_gemv`` and ``rnn_overlap``, fitted on LSTM/GRU calls (CPU only).

    python -m calibration.fit.rnn_fit

One recurrent layer is one cuDNN call of 1 + 2 x sequence kernels (predictor/graph/ops/rnn.py): the input GEMM, then
per time step a recurrent GEMM (a GEMV at batch 1: class ``rnn_gemv``, else ``rnn``) and a pointwise cell kernel.
The op microbenchmark ``rnn_steps`` (calibration/data/h200/microbench/run4: nn.LSTM and nn.GRU, hidden = input
256/512/1024, batch 1 and 32, sequence 32, one and two layers, fp32/tf32/fp16/bf16, CUDA-graph replays) times such
calls over a range of widths that the one recurrent training network (an LSTM 256->512 of two layers) cannot span.
Per (class, precision) (t0_s, eff_compute, eff_memory, eff_l2), and one ``rnn_overlap`` (the share of a stacked
layer's fixed costs, t0 and graph gaps, hidden under the layer before it: graph/runtime.py ``stacked_rnn``), by least
squares on the log of the measured call time under predictor/timing's kernel_time with the graph-replay gap per
kernel, as predicted (predictor/fitted.py: ``rnn_gemv`` never slower than ``rnn``). The main fit
(calibration/fit/fit.py) holds the classes and the overlap at these values, so no training network decides them.
An efficiency no call depends on is reported undetermined and put back at its start or upper bound.
Ignores: the 3 one-layer fp16 LSTM calls at batch 32, which cuDNN runs with its persistent algorithm (6 kernels,
PyTorch's heuristic: fp16, one unidirectional layer, widths multiples of 128, batch a multiple of 8 up to 128; not
modelled, left out), the ~35 extra kernels cuDNN adds to some fp32 calls at batch 32 (100 kernels for widths 256-512,
68 at 1024: one class cannot price both), bidirectional layers (``rnn_bidir_overlap``: rnn_bidir_fit.py).
"""
from __future__ import annotations

import argparse
import functools
import math
from dataclasses import dataclass

import numpy as np

FAMILY = "rnn_steps"
CLASSES = ("rnn", "rnn_gemv")
PRECISIONS = ("fp32", "tf32", "fp16", "bf16")
PARAMS = ("t0_s", "eff_compute", "eff_memory", "eff_l2")


@dataclass(frozen=True)
class Sample:
    """One measured call: its layers' kernel features (predictor/timing/features.KernelFeatures) as fixed-order tuples."""

    op: str
    precision: str
    batch: int
    hidden: int
    layers: int
    measured_s: float
    cls: str
    features: tuple  # per layer: the KernelFeatures


def persistent_lstm(op: str, precision: str, p: dict) -> bool:
    """Whether PyTorch runs this nn.LSTM call with cuDNN's persistent algorithm (aten/src/ATen/native/cudnn/RNN.cpp,
    get_algo on an sm_90 GPU of >= 98 SMs): fp16, one unidirectional layer, hidden and input sizes multiples of 128,
    batch a multiple of 8 up to 128."""
    return (op == "lstm" and precision == "fp16" and p["layers"] == 1 and not p.get("bidirectional")
            and p["hidden"] % 128 == 0 and p["input"] % 128 == 0 and p["batch"] % 8 == 0 and p["batch"] <= 128)


def samples() -> list[Sample]:
    """Every error-free unidirectional ``rnn_steps`` call but the persistent ones, its layers costed on the H200."""
    from predictor.graph.cost import cost_graph
    from predictor.graph.traffic import traffic_for
    from predictor.machine.profile import load_profile
    from predictor.precision import policy
    from predictor.timing.features import kernel_features
    from predictor.types import DEFAULT_OPSET

    from .micro_fit import microbench_rows, rnn_node, row_params

    profile = load_profile("h200")
    traffic = traffic_for(profile)
    out = []
    for r in microbench_rows((FAMILY,)):
        p = {**row_params(r), "op": r["op"]}
        if r["precision"] not in PRECISIONS or p.get("bidirectional") or persistent_lstm(r["op"], r["precision"], p):
            continue
        feats = []
        for layer in range(int(p["layers"])):
            node = rnn_node(p if layer == 0 else {**p, "input": p["hidden"]})
            cost = cost_graph([node], policy(r["precision"]), DEFAULT_OPSET, traffic, frozenset({"x"})).costs[0]
            feats.append(kernel_features(cost, profile, r["precision"], node))
        out.append(Sample(r["op"], r["precision"], int(p["batch"]), int(p["hidden"]), int(p["layers"]),
                          float(r["time_s"]), "rnn_gemv" if p["batch"] == 1 else "rnn", tuple(feats)))
    return out


def _groups() -> list[tuple[str, str]]:
    return [(c, p) for c in CLASSES for p in PRECISIONS]


def call_time(s: Sample, params: dict, overlap: float, gap_s: float, gemm_k_half: float) -> float:
    """A call's time under per-(class, precision) ``params``: each layer's kernel_time plus its graph gaps, the second
    layer's fixed costs less ``overlap`` of them, a GEMV layer never slower than the batched class prices it."""
    from types import SimpleNamespace

    from predictor.timing.model import kernel_time

    def layer(f, cls):
        fixed, body, _ = kernel_time(f, SimpleNamespace(row_s=0.0, block_s=0.0, **params[(cls, s.precision)]),
                                     gemm_k_half)
        return fixed + f.kernels * gap_s, body

    total = 0.0
    for i, f in enumerate(s.features):
        fixed, body = layer(f, s.cls)
        if s.cls == "rnn_gemv":
            fixed_b, body_b = layer(f, "rnn")
            if fixed_b + body_b < fixed + body:
                fixed, body = fixed_b, body_b
        total += body + fixed * (1.0 - overlap if i > 0 else 1.0)
    return total


def _bounds(cls: str, prec: str) -> list[tuple[float, float]]:
    from predictor.timing.params import param_bounds

    return [param_bounds(n, cls, prec) for n in PARAMS]


@functools.lru_cache(maxsize=4)
def _fit_cached(ss: tuple[Sample, ...], gap_s: float, gemm_k_half: float) -> tuple[dict, dict]:
    from scipy.optimize import least_squares

    from predictor.timing.params import PARAMS as SPEC

    groups = [g for g in _groups() if any((s.cls, s.precision) == g for s in ss)]
    gi = {g: i for i, g in enumerate(groups)}
    # a batch-1 call reads the rnn class too (the GEMV-or-GEMM minimum): its group must exist
    groups += [("rnn", p) for c, p in list(groups) if c == "rnn_gemv" and ("rnn", p) not in gi]
    gi = {g: i for i, g in enumerate(groups)}
    lo = np.log([max(b[0], 1e-12) for g in groups for b in _bounds(*g)] + [1e-3])
    hi = np.log([b[1] for g in groups for b in _bounds(*g)] + [0.95])
    start = np.log([min(max(SPEC[n].start, b[0]), b[1]) for g in groups for n, b in zip(PARAMS, _bounds(*g))] + [0.5])
    meas = np.array([s.measured_s for s in ss])

    def unpack(th):
        v = np.exp(th)
        return {g: dict(zip(PARAMS, v[4 * i:4 * i + 4])) for i, g in enumerate(groups)}, float(v[-1])

    def resid(th):
        params, ov = unpack(th)
        return np.log(np.array([call_time(s, params, ov, gap_s, gemm_k_half) for s in ss]) / meas)

    best = None
    for t0 in (2e-6, 1e-6):  # a max has flat regions: two starts
        th0 = start.copy()
        th0[0:-1:4] = math.log(t0)
        sol = least_squares(resid, np.clip(th0, lo + 1e-6, hi - 1e-6), bounds=(lo, hi))
        if best is None or sol.cost < best.cost:
            best = sol
    jac = best.jac
    col = np.linalg.norm(jac, axis=0)
    active = col > 1e-6 * max(float(col.max()), 1e-300)
    x_end = best.x.copy()
    for i in range(len(x_end) - 1):  # an efficiency no call depends on goes back to its start, else its upper bound
        name = PARAMS[i % 4]
        if active[i] or name == "t0_s":
            continue
        g = groups[i // 4]
        for v in (SPEC[name].start, _bounds(*g)[i % 4][1]):
            trial = x_end.copy()
            trial[i] = math.log(min(max(v, math.exp(lo[i])), math.exp(hi[i])))
            if np.allclose(resid(trial), resid(x_end), rtol=0, atol=1e-12):
                x_end = trial
                break
    s2 = 2.0 * float(best.cost) / max(len(ss) - len(x_end), 1)
    se = np.sqrt(np.maximum(np.diag(np.linalg.pinv(jac.T @ jac) * s2), 0.0))
    params, overlap = unpack(x_end)
    err = np.exp(resid(x_end)) - 1
    determined = {f"{g[0]}.{g[1]}.{n}": bool(se[4 * i + k] < 0.5 and active[4 * i + k]
                                              and lo[4 * i + k] + 1e-6 < best.x[4 * i + k] < hi[4 * i + k] - 1e-6)
                  for i, g in enumerate(groups) for k, n in enumerate(PARAMS)}
    report = {"samples": len(ss), "mape": float(np.mean(np.abs(err))), "median_abs_error": float(np.median(np.abs(err))),
              "mape_by_class": {c: float(np.mean(np.abs(err[[s.cls == c for s in ss]]))) for c in CLASSES
                                if any(s.cls == c for s in ss)},
              "rnn_overlap": overlap, "rnn_overlap_determined": bool(se[-1] < 0.5 and active[-1]),
              "stderr_rel": {f"{g[0]}.{g[1]}.{n}": float(se[4 * i + k]) for i, g in enumerate(groups)
                             for k, n in enumerate(PARAMS)},
              "determined": determined, "gap_s": gap_s}
    return params, report


def fit_rnn(ss: list[Sample], gap_s: float, gemm_k_half: float, log=print) -> tuple[dict, dict]:
    """({class: {precision: params, "*": geometric mean}}, report with ``rnn_overlap``) of the calls ``ss``."""
    params, report = _fit_cached(tuple(ss), float(gap_s), float(gemm_k_half))
    entry: dict[str, dict] = {}
    for (cls, prec), v in params.items():
        entry.setdefault(cls, {})[prec] = {k: float(x) for k, x in v.items()}
    for by_p in entry.values():
        by_p["*"] = {k: float(np.exp(np.mean([math.log(v[k]) for v in by_p.values()]))) for k in PARAMS}
    log(f"rnn, rnn_gemv: {report['samples']} LSTM/GRU calls, MAPE {report['mape']:.1%} (median "
        f"{report['median_abs_error']:.1%}; " + ", ".join(f"{c} {m:.1%}" for c, m in report["mape_by_class"].items())
        + f"), rnn_overlap {report['rnn_overlap']:.3f}; undetermined: "
        + (", ".join(k for k, d in report["determined"].items() if not d) or "none"))
    return entry, report


def pinned_fit(cls: str):
    """The main fit's pinned-class interface for ``cls``: fit(samples, exclude, log, gap_s, gemm_k_half) ->
    ({precision: params}, report). ``exclude`` (left-out networks) does not apply: no network is read."""
    def fit(ss: list[Sample], exclude: frozenset[str] = frozenset(), log=print, gap_s: float = 0.0,
            gemm_k_half: float = 256.0) -> tuple[dict, dict]:
        if not ss:
            return {}, {}
        entry, report = fit_rnn(ss, gap_s, gemm_k_half, log=log if cls == CLASSES[0] else (lambda *_: None))
        by_prec = {prec: {"stderr_rel": {n: report["stderr_rel"][f"{cls}.{prec}.{n}"] for n in PARAMS},
                          "determined": {n: report["determined"][f"{cls}.{prec}.{n}"] for n in PARAMS}}
                   for prec in entry.get(cls, {}) if prec != "*"}
        return entry.get(cls, {}), {**by_prec, "rnn_overlap": report["rnn_overlap"],
                                    "rnn_overlap_determined": report["rnn_overlap_determined"]}

    return fit


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m calibration.fit.rnn_fit", description=__doc__.splitlines()[0])
    ap.parse_args(argv)
    import json
    from pathlib import Path

    doc = json.loads((Path(__file__).resolve().parents[2] / "predictor" / "data" / "calibration_h200.json").read_text())
    fit_rnn(samples(), doc["kernel_gap_s"], doc["gemm_k_half"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
