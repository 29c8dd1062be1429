"""Fit the multi-tensor optimizer kernels (class ``optimizer``) on the training-split networks' training steps.

PyTorch's fused and foreach optimizers walk a list of tensors in chunks; each tensor adds a partial chunk and
metadata, which the bytes-over-bandwidth model of the kernel misses (regnet_y_1_6gf's ~11 M parameters in
many small tensors take 0.42 ms where 28 B per parameter at HBM speed are 0.08 ms). Model, per case:
measured optimizer phase = fixed + bytes time / eff_memory + c x tensors walked, with the kernels' t0 the
elementwise class's (all precisions: ``*``); eff_memory and c by non-negative least squares (the phase is affine in
1 / eff_memory and in c) over the cases of training-split networks with a CUDA-graph optimizer phase
(calibration/data/h200/training, the phase's event nodes inside the captured step). Held-out networks are never
read. Before this class the kernels took the elementwise class's fp32 bandwidth, which the inference fit moves
(0.97 -> 0.75 of HBM between two fits) with nothing of the optimizer in its data.
"""
from __future__ import annotations

import numpy as np

from predictor.machine.profile import load_profile

from .dataset import ONNX_DIR
from .train_fit import probe_calibration


PROBE_S = 1e-6  # a per-tensor cost that makes the tensors walked visible: phase(c) is affine in c
PROBE_EFF = 0.5  # an eff_memory that makes the bytes time visible: phase is affine in 1 / eff_memory


def optimizer_class(doc: dict, eff_memory: float) -> dict:
    """The ``optimizer`` class entry: the elementwise class's t0 and eff_compute (all precisions), this eff_memory."""
    ew = doc["classes"]["elementwise"]["*"]
    return {"*": {"t0_s": ew["t0_s"], "eff_compute": ew["eff_compute"], "eff_memory": eff_memory}}


def tensor_cost_samples(doc: dict) -> list[tuple[float, float, float, float, str]]:
    """(measured optimizer s, predicted at eff_memory 1 and no per-tensor cost s, bytes time at eff_memory 1 s,
    tensors walked, case) per training case."""
    from calibration.evaluate.training_accuracy import finite_number as _num, load_cases, optimizer_impl as _impl
    from predictor.train import predict_training_file

    from .dataset import zoo_split as _zoo_split

    profile = load_profile("h200")
    probes = ((1.0, 0.0), (PROBE_EFF, 0.0), (1.0, PROBE_S))
    cals = [probe_calibration(doc, "optimizer", optimizer_class(doc, eff)["*"], multi_tensor_per_tensor_s=c)
            for eff, c in probes]
    out = []
    for case, _env, _src, _mem in load_cases():
        meas = _num(case.get("graph_optimizer_median_s"))
        if meas is None or _zoo_split(case["network"]) != "train" or _impl(case) == "forloop":
            continue
        model = ONNX_DIR / f"{case['network']}.torchscript.onnx"
        t = [next(p for p in predict_training_file(
            str(model), profile, case["precision"], int(case["batch"]), calibration=cal,
            optimizer=case.get("optimizer") or "adamw", impl=_impl(case), loss="mse", max_batch=False).phases
            if p.name == "optimizer").time_s for cal in cals]
        bytes_s = (t[1] - t[0]) / (1.0 / PROBE_EFF - 1.0)
        out.append((meas, t[0], bytes_s, (t[2] - t[0]) / PROBE_S,
                    f"{case['network']} {case['precision']} b{case['batch']}"))
    return out


def fit_optimizer(doc: dict, log=print) -> tuple[dict, float]:
    """(the ``optimizer`` class entry, multi_tensor_per_tensor_s) fitted on the training steps."""
    from scipy.optimize import nnls

    samples = tensor_cost_samples(doc)
    if not samples:
        return optimizer_class(doc, doc["classes"]["elementwise"]["*"]["eff_memory"]), 0.0
    # measured - fixed = bytes_s x (1 / eff) + tensors x c, weighted by 1 / measured (relative errors)
    w = np.asarray([1.0 / m for m, *_ in samples])
    a = np.asarray([[b, n] for _, _, b, n, _ in samples]) * w[:, None]
    y = np.asarray([m - (p - b) for m, p, b, _, _ in samples]) * w
    (inv_eff, c), _ = nnls(a, y)
    eff = float(min(max(1.0 / inv_eff, 0.05), 1.0)) if inv_eff > 0 else 1.0  # an efficiency is in (0, 1]
    pred = [(p - b) + b / eff + n * c for _, p, b, n, _ in samples]
    mape = float(np.mean([abs(q / m - 1) for q, (m, *_) in zip(pred, samples)]))
    log(f"optimizer class: {len(samples)} training cases, eff_memory {eff:.3f}, {c * 1e9:.0f} ns per tensor "
        f"walked; MAPE {mape:.1%}")
    return optimizer_class(doc, eff), float(c)
