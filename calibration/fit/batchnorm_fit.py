"""The ``batchnorm`` class (inference batch norm) fitted on its own kernels, on two GPUs (CPU only).

    python -m calibration.fit.batchnorm_fit

An inference batch norm runs one kernel of its own per call: PyTorch's ``batch_norm_transform_input_kernel`` on a
16-bit model (16-bit parameters: cuDNN is not called), cuDNN's ``bn_fw_inf_1C11_kernel_NCHW`` at fp32 and tf32. The
H200 and H100 kernel tables (calibration/data/<gpu>/timing, eager rows with the profiler's input shapes) hold them
inside the measured networks. On one GPU a kernel's time cannot tell an element rate from a memory bandwidth; on
two memory systems of the same SMs and clocks it can: at 16-bit the largest maps run ~460 G elements/s on the H200
and ~430 on the H100, whose HBM is 33% slower. PyTorch's transform kernel gives each (channel, slice of the batch) a
block whose threads loop over the plane with one dependent load per iteration, so its time follows that loop and the
blocks' scheduling (predictor/graph/ops/normalization.transform_grid), not the bytes. Per precision, (t0_s,
eff_compute, eff_memory, row_s per dependent step, block_s per wave of blocks) by least squares on the log kernel time
under predictor/timing's kernel_time, with each GPU's own ceilings (the H100's: its ERT-measured profile as predict
transfers to it), over one sample per (GPU, network, input shape) (the median kernel), each network's samples weighted
to one in all; an efficiency no sample depends on is reported undetermined and put back at its start or bound. The
main fit (calibration/fit/fit.py) holds the class at these values. Only training-split networks' tables are read
(``exclude`` leaves further networks out: grouped cross-validation). Ignores: the per-channel parameter kernels of a
call (the fit's hidden kernels), autocast's batch norm (class ``norm_amp``), training mode (``norm_train``).
"""
from __future__ import annotations

import argparse
import math
import statistics
from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from .pinned_report import determined

KERNELS = {"fp16": "batch_norm_transform_input_kernel", "bf16": "batch_norm_transform_input_kernel",
           "fp32": "bn_fw_inf_1C11_kernel_NCHW", "tf32": "bn_fw_inf_1C11_kernel_NCHW"}
GPUS = ("h200", "h100")
CLASS = "batchnorm"
MIN_NETWORKS = 3  # a precision with kernels of fewer networks is not fitted (the class's "*" entry serves it)


@dataclass(frozen=True)
class Sample:
    """One (GPU, network, precision, input shape): the median kernel time and the kernel's ideal level times."""

    gpu: str
    network: str
    precision: str
    shape: tuple[int, ...]
    measured_s: float
    compute_s: float
    hbm_s: float
    l2_s: float
    l1_s: float
    loop_steps: float  # the kernel's dependent iterations by waves (predictor/graph/ops/normalization.transform_grid)
    walk_waves: float  # waves of its blocks


def _profiles() -> dict:
    from predictor.machine.profile import load_profile
    from predictor.machine.transfer import transfer_profile

    return {"h200": load_profile("h200"), "h100": transfer_profile(load_profile("h100")).profile}


def bn_node(shape: tuple[int, ...]):
    """An inference BatchNormalization of input ``shape`` [N, C, ...] (fp32 graph: the policy sets storage)."""
    from predictor.types import Node, TensorInfo, frozen_map

    c = shape[1]
    ins = [TensorInfo("x", "float32", shape)] + [TensorInfo(n, "float32", (c,), is_initializer=True)
                                                 for n in ("scale", "bias", "mean", "var")]
    return Node(name="bn", op_type="BatchNormalization", domain="", inputs=tuple(ins),
                outputs=(TensorInfo("y", "float32", shape),), attrs=frozen_map({"epsilon": 1e-5}))


def _ideal(shape: tuple[int, ...], precision: str, profile) -> tuple[float, ...]:
    from predictor.graph.cost import cost_graph
    from predictor.graph.traffic import traffic_for
    from predictor.precision import policy
    from predictor.timing.features import kernel_features
    from predictor.types import DEFAULT_OPSET

    node = bn_node(shape)
    c = cost_graph([node], policy(precision), DEFAULT_OPSET, traffic_for(profile), frozenset({"x"})).costs[0]
    f = kernel_features(c, profile, precision, node)
    return f.compute_s, f.hbm_s, f.l2_s, f.l1_s, f.loop_steps, f.walk_waves


def samples(gpus: tuple[str, ...] = GPUS) -> list[Sample]:
    """The median batch-norm kernel per (GPU, network, precision, input shape) of the training-split networks."""
    from calibration.evaluate.broadcast_kernels import eager_kernels

    from .dataset import zoo_split

    profiles = _profiles()
    times: dict[tuple, list[float]] = defaultdict(list)
    for gpu in gpus:
        for r, shapes, dur in eager_kernels(gpu, lambda r: "batch_norm" in (r.get("leaf_op") or "")):
            prec = r["precision"]
            x = shapes[0] if shapes and isinstance(shapes[0], list) else None
            if prec not in KERNELS or KERNELS[prec] not in r["kernel_name"] or not x or len(x) < 3 or dur <= 0:
                continue
            times[(gpu, r["network"], prec, tuple(int(d) for d in x))].append(dur)
    out, ideal = [], {}
    for (gpu, net, prec, shape), ts in sorted(times.items()):
        if zoo_split(net) != "train":
            continue
        key = (gpu, prec, shape)
        if key not in ideal:
            ideal[key] = _ideal(shape, prec, profiles[gpu])
        out.append(Sample(gpu, net, prec, shape, statistics.median(ts), *ideal[key]))
    return out


PARAMS = ("t0_s", "eff_compute", "eff_memory", "row_s", "block_s")
STARTS = ((2e-6, 0.03, 0.6, 2e-7, 5e-8), (1e-6, 0.01, 0.9, 1e-7, 2e-8), (3e-6, 0.3, 0.3, 3e-7, 1e-7))


def model_times(vals: dict, x: dict) -> np.ndarray:
    """Kernel times of samples ``x`` (arrays of Sample fields) under class parameters ``vals``: predictor/timing's
    kernel_time (one kernel; eff_l2 1)."""
    from types import SimpleNamespace

    from predictor.timing.model import NUMPY_OPS, kernel_time

    n = len(x["measured_s"])
    f = SimpleNamespace(kernels=np.ones(n), gemm_k=np.zeros(n), compute_s=x["compute_s"], hbm_s=x["hbm_s"],
                        l2_s=x["l2_s"], l1_s=x["l1_s"], rows_per_sm=np.zeros(n), walk_bytes_per_sm=np.zeros(n),
                        loop_steps=x["loop_steps"], walk_waves=x["walk_waves"])
    prm = SimpleNamespace(eff_l2=1.0, **vals)
    fixed, body, _ = kernel_time(f, prm, 1.0, NUMPY_OPS)
    return fixed + body


def fit_precision(ss: list[Sample]) -> tuple[dict, dict]:
    """(t0_s, eff_compute, eff_memory, row_s per loop step, block_s per wave of blocks) of one precision's samples and a
    report (samples, networks, MAPE per GPU, relative standard errors, which the data determined)."""
    from scipy.optimize import least_squares

    from predictor.timing.params import PARAMS as PARAMS_SPEC, param_bounds

    n_per = defaultdict(int)
    for s in ss:
        n_per[(s.gpu, s.network)] += 1
    w = np.array([1.0 / math.sqrt(n_per[(s.gpu, s.network)]) for s in ss])
    x = {k: np.array([getattr(s, k) for s in ss]) for k in ("measured_s", "compute_s", "hbm_s", "l2_s", "l1_s",
                                                             "loop_steps", "walk_waves")}
    lo = np.log([max(param_bounds(n, CLASS)[0], 1e-12) for n in PARAMS])
    hi = np.log([param_bounds(n, CLASS)[1] for n in PARAMS])

    def resid(th):
        return w * np.log(model_times(dict(zip(PARAMS, np.exp(th))), x) / x["measured_s"])

    best = None
    for start in STARTS:  # a max has flat regions: several starts
        sol = least_squares(resid, np.clip(np.log(start), lo + 1e-6, hi - 1e-6), bounds=(lo, hi))
        if best is None or sol.cost < best.cost:
            best = sol
    jac = best.jac
    s2 = 2.0 * float(best.cost) / max(len(ss) - len(PARAMS), 1)
    se = np.sqrt(np.maximum(np.diag(np.linalg.pinv(jac.T @ jac) * s2), 0.0))
    # a parameter no sample's time depends on (a ceiling that never binds: zero gradient) is not determined; such an
    # efficiency goes back to its start (or up to its bound) where the samples' times stay the same, so that an
    # arbitrary solver end point cannot bind on shapes outside the data
    col = np.linalg.norm(jac, axis=0)
    active = col > 1e-6 * max(float(col.max()), 1e-300)
    x_end = best.x.copy()
    for i, name in enumerate(PARAMS):
        if active[i] or name not in ("eff_compute", "eff_memory"):
            continue
        for v in (PARAMS_SPEC[name].start, PARAMS_SPEC[name].upper):
            trial = x_end.copy()
            trial[i] = math.log(v)
            if np.allclose(resid(trial), resid(x_end), rtol=0, atol=1e-12):
                x_end = trial
                break
    vals = {n: float(v) for n, v in zip(PARAMS, np.exp(x_end))}
    err = model_times(vals, x) / x["measured_s"] - 1
    gpus = np.array([s.gpu for s in ss])
    per_gpu = {g: float(np.mean(np.abs(err[gpus == g]))) for g in sorted(set(gpus))}
    report = {"samples": len(ss), "networks": {g: len({s.network for s in ss if s.gpu == g}) for g in per_gpu},
              "mape_by_gpu": per_gpu, "median_abs_error": float(np.median(np.abs(err))),
              "stderr_rel": {n: float(e) for n, e in zip(PARAMS, se)},
              "determined": determined(PARAMS, se, lo, hi, best.x, active)}
    return vals, report


def fit_batchnorm(all_samples: list[Sample], exclude: frozenset[str] = frozenset(), log=print, gap_s: float = 0.0,
                  gemm_k_half: float = 0.0) -> tuple[dict, dict]:
    """The class entry by precision (and ``*``, the geometric mean) and the report; networks in ``exclude`` left out.
    ``gap_s`` and ``gemm_k_half`` (the main fit's pinned-class interface) do not enter: profiler kernel durations hold
    no replay gap, and a batch norm has no GEMM K."""
    by_p: dict[str, list[Sample]] = defaultdict(list)
    for s in all_samples:
        if s.network not in exclude:
            by_p[s.precision].append(s)
    entry, report = {}, {}
    for prec, ss in sorted(by_p.items()):
        if len({s.network for s in ss}) < MIN_NETWORKS:
            continue
        entry[prec], report[prec] = fit_precision(ss)
        r = report[prec]
        log(f"{CLASS} {prec}: {r['samples']} kernel samples ({r['networks']}), "
            + ", ".join(f"{k} {v:.3g}" for k, v in entry[prec].items()) + "; MAPE "
            + ", ".join(f"{g} {m:.1%}" for g, m in r["mape_by_gpu"].items())
            + f", median {r['median_abs_error']:.1%}; undetermined: "
            + (", ".join(k for k, d in r["determined"].items() if not d) or "none"))
    if entry:
        entry["*"] = {k: float(np.exp(np.mean([math.log(v[k]) for v in entry.values()]))) for k in PARAMS}
    return entry, report


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m calibration.fit.batchnorm_fit", description=__doc__.splitlines()[0])
    ap.parse_args(argv)
    fit_batchnorm(samples())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
