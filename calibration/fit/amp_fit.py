"""Fit the classes only autocast runs, on the training networks' autocast kernel tables
(calibration/data/h200/whatif/amp_kernels, taken by calibration/networks/amp_kernels.py; held-out networks are never
read): ``norm_amp`` (:func:`fit_norm_amp`) and ``elementwise_mixed`` (:func:`fit_elementwise_mixed`).

``norm_amp``: batch norm under autocast (16-bit input, fp32 parameters). At fp16 cuDNN runs it as
bn_fw_inf_1C11_kernel_NCHW, whose time follows the waves of (image, channel) planes, not the bytes: ResNet-50's batch
norms at batch 32 take 1.07 ms where PyTorch's native fp16 kernels take 0.41 ms (2048 channels of 32 x 7 x 7: 41 us
for 6.4 MB; 128 of 32 x 56 x 56: 29.8 us for 51 MB). At bf16 PyTorch keeps its native path (three kernels).
Samples: each batch-norm module scope, measured as the sum of its kernels; the ideal times come from one prediction
with the class at (t0 ~ 0, 1, 1). Model and fit: train_fit.fit_walk_class (planes as the walking blocks), per
precision.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from predictor.amp import autocast
from predictor.machine.profile import load_profile
from predictor.predict import predict_graph

from .train_fit import MIN_SCOPES, fit_walk_class, ideal_times, probe_calibration, walk_features

NORM_AMP = "norm_amp"
AMP_KERNELS = Path(__file__).resolve().parents[1] / "data" / "h200" / "whatif" / "amp_kernels" / "amp_kernels.json"
MODES = {"amp": ("amp", "fp16"), "amp_bf16": ("amp-bf16", "bf16")}  # kernel-table mode: (policy, precision)


def _autocast_forwards(doc: dict, cls: str, path: Path = AMP_KERNELS):
    """Per training-split autocast case of the kernel tables: (label, precision, measured kernel rows by module scope,
    [(node, op)] of the predicted forward's kernels with class ``cls`` at the probe calibration)."""
    from .dataset import graph_for, normalise_scope
    from .dataset import zoo_split as _zoo_split

    if not path.is_file():
        return
    profile = load_profile("h200")
    cal = probe_calibration(doc, cls)
    for case in json.loads(path.read_text()).get("cases", []):
        net, mode = case.get("network", ""), case.get("mode", "")
        if mode not in MODES or case.get("error") or _zoo_split(net) != "train":
            continue
        graph = graph_for(net, int(case["batch"]))
        if graph is None:
            continue
        policy, prec = MODES[mode]
        measured: dict[str, list[dict]] = {}
        for r in case.get("rows", []):
            if r.get("leaf_op") != "Activity Buffer Request":
                measured.setdefault(normalise_scope(r["module_path"].removeprefix("model.")), []).append(r)
        nodes = {n.name: n for n in autocast(graph, policy).graph.nodes}
        ops = [(nodes[o.cost.name], o) for o in predict_graph(graph, profile, policy, cal, batch=int(case["batch"])).ops
               if o.cost.name in nodes and o.cost.kernels]
        yield f"{net} {mode} b{case['batch']}", prec, measured, ops


def _measured_s(rows: list[dict]) -> float:
    return sum(r["duration_us"] for r in rows) * 1e-6


def norm_amp_samples(doc: dict, path: Path = AMP_KERNELS) -> dict[str, list[dict]]:
    """{precision: [per batch-norm module scope: measured s, kernels, bytes one SM walks, ideal compute / HBM /
    cache s, hidden kernels' s]}."""
    from .dataset import normalise_scope

    sm_count = load_profile("h200").sm_count
    out: dict[str, list[dict]] = {}
    for _label, prec, measured, ops in _autocast_forwards(doc, NORM_AMP, path):
        for node, o in ops:
            if node.op_type != "BatchNormalization" or o.cost.work.channel_walk is None:
                continue
            rows = [r for r in measured.get(normalise_scope(node.scope), []) if r["aten_op"] == "aten::batch_norm"]
            if rows:
                out.setdefault(prec, []).append({"measured_s": _measured_s(rows), "kernels": float(o.cost.kernels),
                                                 **walk_features(o, sm_count), **ideal_times(o),
                                                 "hidden_s": o.extra_time_s})
    return out


def fit_norm_amp(doc: dict, log=print) -> dict:
    """The ``norm_amp`` class entry by precision (and ``*``), or {} without enough scopes."""
    return fit_walk_class(norm_amp_samples(doc), NORM_AMP, "batch-norm scopes of autocast forwards", log)


ELEMENTWISE_MIXED = "elementwise_mixed"


def fit_elementwise_mixed(doc: dict, log=print) -> dict:
    """The ``elementwise_mixed`` class entry: (t0, eff_memory; eff_compute held at 0.7) by least squares on the log
    kernel time of the training networks' autocast scopes that hold one such node (BERT's residual adds of an fp16
    branch to the fp32 stream: 3.1 us at batch 1, 12.1 us for 3.1M elements at batch 32), each node's ideal times
    from the probe calibration. Keyed ``fp32`` (the policy autocast gives a node with an fp32 output) and ``*``; {}
    with fewer than MIN_SCOPES scopes. The ``elementwise_mixed`` microbenchmarks (run 5) agree on the fixed cost: a
    mixed add of 65536 elements takes 2.95 us in a CUDA graph, one of a single dtype 1.76 us."""
    from scipy.optimize import least_squares

    samples = scope_samples(doc, ELEMENTWISE_MIXED)
    if len(samples) < MIN_SCOPES:
        return {}
    x = {k: np.array([s[k] for s in samples]) for k in ("measured_s", "kernels", "compute_s", "hbm_s", "cache_s")}

    def model(theta):
        t0, em = np.exp(theta)
        return x["kernels"] * t0 + np.maximum(np.maximum(x["compute_s"], x["hbm_s"] / em), x["cache_s"])

    sol = least_squares(lambda th: np.log(model(th) / x["measured_s"]), np.log([2e-6, 0.5]),
                        bounds=(np.log([2e-7, 0.02]), np.log([1e-4, 1.0])))
    t0, em = (float(v) for v in np.exp(sol.x))
    err = np.abs(model(sol.x) / x["measured_s"] - 1)
    cases = sorted({s["case"] for s in samples})
    log(f"{ELEMENTWISE_MIXED}: {len(samples)} autocast scopes ({', '.join(cases)}), t0_s {t0:.3g}, eff_memory "
        f"{em:.3g}; MAPE {np.mean(err):.1%}, worst {np.max(err):.1%}")
    entry = {"t0_s": t0, "eff_compute": 0.7, "eff_memory": em}
    return {"fp32": dict(entry), "*": dict(entry)}


def scope_samples(doc: dict, cls: str, path: Path = AMP_KERNELS) -> list[dict]:
    """Per module scope of a training-split network's autocast forward whose costed nodes are all of class ``cls``
    (one node each): measured kernel sum s, kernels, ideal compute / HBM / cache s (probe calibration)."""
    from predictor.graph.opclass import kernel_class

    from .dataset import normalise_scope

    out = []
    for label, _prec, measured, ops in _autocast_forwards(doc, cls, path):
        by_scope: dict[str, list] = {}
        for node, o in ops:
            by_scope.setdefault(normalise_scope(node.scope), []).append((node, o))
        for scope, pairs in by_scope.items():
            rows = measured.get(scope)
            if not rows or len(pairs) != 1 or kernel_class(pairs[0][0]) != cls or len(rows) != pairs[0][1].cost.kernels:
                continue
            o = pairs[0][1]
            out.append({"measured_s": _measured_s(rows), "kernels": float(o.cost.kernels), **ideal_times(o),
                        "case": label})
    return out
