"""Fit the classes only training steps run: ``depthwise_grad`` (PyTorch's depthwise-convolution dgrad and wgrad
kernels) on training steps' backward phases, and ``norm_train`` (batch norm with batch statistics) on the kernel
tables of training-mode forwards (:func:`fit_norm_train`).

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

import json
from pathlib import Path

import numpy as np

from predictor.fitted import FittedCalibration, channel_walk_units, walk_waves
from predictor.graph.opclass import DEPTHWISE_GRAD_OP
from predictor.machine.profile import load_profile

CLASS = "depthwise_grad"
PROBE = {"t0_s": 1e-12, "eff_compute": 1.0, "eff_memory": 1.0}


def probe_calibration(doc: dict, cls: str, entry: dict | None = None, **fields) -> FittedCalibration:
    """The calibration ``doc`` with class ``cls`` set to ``entry`` for every precision (default PROBE: t0 ~ 0 and
    efficiencies 1, so a prediction's level times are the ideal ones) and any top-level ``fields`` replaced."""
    return FittedCalibration({**doc, "classes": {**doc["classes"], cls: {"*": entry or PROBE}}, **fields}, "<probe>")


def walk_features(op, sm_count: int) -> dict[str, float]:
    """An op's block walk (OpWork.channel_walk): bytes one SM walks and waves of blocks."""
    return {"walk": channel_walk_units(op.cost.work.channel_walk, sm_count),
            "waves": float(walk_waves(op.cost.work.channel_walk, sm_count))}


def ideal_times(op) -> dict[str, float]:
    """An op's compute, HBM and cache (slower of L1, L2) times as predicted with the probe."""
    t = op.level_time_s
    return {"compute_s": t["compute"], "hbm_s": t["HBM"], "cache_s": max(t["L1"], t["L2"])}


def depthwise_grad_samples(doc: dict) -> list[dict]:
    """Per case: measured backward s, the rest of the predicted backward s, and per depthwise_grad op its kernels
    and ideal compute / HBM / cache times."""
    from calibration.evaluate.training_accuracy import finite_number as _num, load_cases, optimizer_impl as _impl
    from calibration.evaluate.training_accuracy import training_graph
    from predictor.train import predict_training_file

    from .dataset import zoo_split as _zoo_split

    profile = load_profile("h200")
    cal = probe_calibration(doc, CLASS)
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
        times = [ideal_times(o) for o in ops]
        out.append({"case": f"{case['network']} {case['precision']} b{case['batch']}", "measured_s": meas,
                    "rest_s": rest, "kernels": np.array([o.cost.kernels for o in ops], dtype=float),
                    **{k: np.array([t[k] for t in times]) for k in times[0]}})
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
                        bounds=(np.log([2e-7, 1e-3, 0.02]), np.log([1e-4, 1.0, 1.0])))
    t0, ec, em = (float(v) for v in np.exp(sol.x))
    err = model(sol.x) / meas - 1
    log(f"{CLASS}: {len(samples)} training backward phases ({', '.join(s['case'] for s in samples)}), t0_s {t0:.3g}, "
        f"eff_compute {ec:.3g}, eff_memory {em:.3g}; errors " + ", ".join(f"{e:+.1%}" for e in err))
    entry = {"t0_s": t0, "eff_compute": ec, "eff_memory": em}
    return {"fp32": dict(entry), "tf32": dict(entry), "*": dict(entry)}


FORWARD_KERNELS = Path(__file__).resolve().parents[1] / "data" / "h200" / "training" / "forward_kernels" / \
    "forward_kernels.json"
NORM_TRAIN = "norm_train"
MIN_SCOPES = 8


def norm_train_samples(doc: dict, path: Path = FORWARD_KERNELS) -> dict[str, list[dict]]:
    """{precision: [per batch-norm module scope of a training-split network's training-mode forward (the kernel tables
    of calibration/training/forward_kernels.py): measured batch_norm kernel time s, kernels, bytes one SM walks
    (OpWork.channel_walk), ideal compute / HBM / cache s, hidden kernels' s]}."""
    from calibration.evaluate.training_accuracy import training_graph
    from predictor.train import predict_training_file

    from .dataset import graph_for, normalise_scope
    from .dataset import zoo_split as _zoo_split

    if not path.is_file():
        return {}
    profile = load_profile("h200")
    cal = probe_calibration(doc, NORM_TRAIN)
    out: dict[str, list[dict]] = {}
    for case in json.loads(path.read_text()).get("cases", []):
        net = case.get("network", "")
        if case.get("mode") != "train" or case.get("error") or _zoo_split(net) != "train":
            continue
        model, graph = training_graph(net), graph_for(net, int(case["batch"]))
        if model is None or graph is None:
            continue
        scopes: dict[str, list[dict]] = {}
        for r in case.get("rows", []):
            if r.get("leaf_op") != "Activity Buffer Request" and r["aten_op"] == "aten::batch_norm":
                scopes.setdefault(normalise_scope(r["module_path"]), []).append(r)
        pred = predict_training_file(str(model), profile, case["precision"], int(case["batch"]), calibration=cal,
                                     loss="mse", max_batch=False)
        nodes = {n.name: n for n in graph.nodes}
        for o, ph in zip(pred.ops, pred.op_phases):
            node = nodes.get(o.cost.name)
            if ph != "forward" or node is None or o.cost.work.channel_walk is None or not o.cost.kernels:
                continue
            rows = scopes.get(normalise_scope(node.scope))
            if not rows:
                continue
            out.setdefault(case["precision"], []).append({
                "measured_s": sum(r["duration_us"] for r in rows) * 1e-6, "kernels": float(o.cost.kernels),
                **walk_features(o, profile.sm_count), **ideal_times(o),
                "hidden_s": o.extra_time_s})
    return out


def fit_norm_train(doc: dict, log=print) -> dict:
    """The ``norm_train`` class entry by precision (and ``*``), or {} without enough scopes (:func:`fit_walk_class`)."""
    return fit_walk_class(norm_train_samples(doc), NORM_TRAIN, "batch-norm scopes of training-mode forwards", log)


def fit_walk_class(samples_by_precision: dict[str, list[dict]], cls: str, what: str, log=print) -> dict:
    """A block-walk class's entry by precision (and ``*``, the geometric mean), from precisions with at least
    MIN_SCOPES samples: (t0, row_s per walked byte, block_s per wave of blocks, eff_memory) by least squares on the log
    of each scope's kernel time (kernels x t0 + walk x row_s + waves x block_s + max(compute, HBM / eff_memory, cache)
    + hidden kernels); {} without any."""
    from scipy.optimize import least_squares

    params = {}
    for prec, samples in sorted(samples_by_precision.items()):
        if len(samples) < MIN_SCOPES:
            continue
        x = {k: np.array([s[k] for s in samples]) for k in samples[0]}

        def model(theta):
            t0, row, block, em = np.exp(theta)
            return x["kernels"] * t0 + x["walk"] * row + x["waves"] * block \
                + np.maximum(np.maximum(x["compute_s"], x["hbm_s"] / em), x["cache_s"]) + x["hidden_s"]

        sol = least_squares(lambda th: np.log(model(th) / x["measured_s"]), np.log([2e-6, 1e-11, 1e-8, 0.5]),
                            bounds=(np.log([2e-7, 1e-14, 1e-11, 0.02]), np.log([1e-4, 1e-7, 1e-5, 1.0])))
        t0, row, block, em = (float(v) for v in np.exp(sol.x))
        err = np.abs(model(sol.x) / x["measured_s"] - 1)
        log(f"{cls} {prec}: {len(samples)} {what}, t0_s {t0:.3g}, row_s {row:.3g} per byte walked, block_s "
            f"{block:.3g} per wave, eff_memory {em:.3g}; MAPE {np.mean(err):.1%}, median {np.median(err):.1%}")
        params[prec] = {"t0_s": t0, "eff_compute": 0.7, "eff_memory": em, "row_s": row, "block_s": block}
    if params:
        keys = ("t0_s", "eff_compute", "eff_memory", "row_s", "block_s")
        params["*"] = {k: float(np.exp(np.mean([np.log(v[k]) for v in params.values()]))) for k in keys}
    return params
