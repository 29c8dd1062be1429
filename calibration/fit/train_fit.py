"""Fit class ``depthwise_grad`` (PyTorch's depthwise-convolution dgrad and wgrad kernels) on training steps.

No inference network runs them, and the forward's ``depthwise`` class (cuDNN's kernels) prices them far too
cheaply at large batch: MobileNetV3's backward at fp32 batch 32 measured 10.3 ms against 7.1 ms predicted with it.
Model, per training-split case with a CUDA-graph backward phase whose network has depthwise convolutions
(calibration/data/h200/training; mobilenet_v3_large at fp32 and tf32, batch 8 and 32; held-out networks are never
read): measured backward = the rest of the predicted backward + for each depthwise_grad node
kernels x (t0 + graph gap) + max(FLOPs time / eff_compute, HBM time / eff_memory, L2 time, L1 time), its ideal
times taken from one prediction with the class at (t0 ~ 0, 1, 1). (t0, eff_compute, eff_memory) by least squares
on the log time, one set for every precision (the kernels are CUDA-core ones at fp32 and tf32 alike; 16-bit has no
measured case and takes it too). Ignores: which of dgrad and wgrad is the slow one (one efficiency for both).
"""
from __future__ import annotations

import numpy as np

from predictor.fitted import FittedCalibration
from predictor.graph.opclass import DEPTHWISE_GRAD_OP
from predictor.machine.profile import load_profile

CLASS = "depthwise_grad"
PROBE = {"t0_s": 1e-12, "eff_compute": 1.0, "eff_memory": 1.0}


def depthwise_grad_samples(doc: dict) -> list[dict]:
    """Per case: measured backward s, the rest of the predicted backward s, and per depthwise_grad op its kernels
    and ideal compute / HBM / cache times."""
    from calibration.training_accuracy import _impl, _num, load_cases, training_graph
    from predictor.train import predict_training_file

    from .fit import _zoo_split

    profile = load_profile("h200")
    cal = FittedCalibration({**doc, "classes": {**doc["classes"], CLASS: {"*": PROBE}}}, "<probe>")
    out = []
    for case, _env, _src, _mem in load_cases():
        meas = _num(case.get("graph_backward_median_s"))
        model = training_graph(case["network"])
        if meas is None or model is None or _zoo_split(case["network"]) != "train":
            continue
        pred = predict_training_file(str(model), profile, case["precision"], int(case["batch"]), calibration=cal,
                                     optimizer=case.get("optimizer") or "adamw", impl=_impl(case), loss="mse",
                                     max_batch=False)
        bwd = [o for o, ph in zip(pred.ops, pred.op_phases) if ph == "backward"]
        ops = [o for o in bwd if o.cost.kernels and o.cost.op_type == DEPTHWISE_GRAD_OP]
        if not ops:
            continue
        rest = sum(o.time_s for o in bwd) - sum(o.time_s for o in ops)
        out.append({"case": f"{case['network']} {case['precision']} b{case['batch']}", "measured_s": meas,
                    "rest_s": rest, "kernels": np.array([o.cost.kernels for o in ops], dtype=float),
                    "compute_s": np.array([o.level_time_s["compute"] for o in ops]),
                    "hbm_s": np.array([o.level_time_s["HBM"] for o in ops]),
                    "cache_s": np.array([max(o.level_time_s["L1"], o.level_time_s["L2"]) for o in ops])})
    return out


def fit_depthwise_grad(doc: dict, log=print) -> dict:
    """The ``depthwise_grad`` class entry ({"fp32", "tf32", "*"}: one parameter set), or {} without samples."""
    from scipy.optimize import least_squares

    samples = depthwise_grad_samples(doc)
    if len(samples) < 3:
        return {}
    gap = float(doc["kernel_gap_s"])

    def model(theta):
        t0, ec, em = np.exp(theta)
        return np.array([s["rest_s"] + np.sum(s["kernels"] * (t0 + gap)
                                              + np.maximum(np.maximum(s["compute_s"] / ec, s["hbm_s"] / em),
                                                           s["cache_s"]))
                         for s in samples])

    meas = np.array([s["measured_s"] for s in samples])
    sol = least_squares(lambda th: np.log(model(th) / meas), np.log([3e-6, 0.1, 0.3]),
                        bounds=(np.log([2e-7, 1e-3, 0.02]), np.log([1e-4, 1.0, 3.0])))
    t0, ec, em = (float(v) for v in np.exp(sol.x))
    err = model(sol.x) / meas - 1
    log(f"{CLASS}: {len(samples)} training backward phases ({', '.join(s['case'] for s in samples)}), t0_s {t0:.3g}, "
        f"eff_compute {ec:.3g}, eff_memory {em:.3g}; errors " + ", ".join(f"{e:+.1%}" for e in err))
    entry = {"t0_s": t0, "eff_compute": ec, "eff_memory": em}
    return {"fp32": dict(entry), "tf32": dict(entry), "*": dict(entry)}
