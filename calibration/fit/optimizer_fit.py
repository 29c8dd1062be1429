"""Fit the per-tensor cost of multi-tensor optimizer kernels on the training-split networks' training steps.

PyTorch's fused and foreach optimizers walk a list of tensors in chunks; each tensor adds a partial chunk and
metadata, which the bytes-over-bandwidth model of the kernel misses (regnet_y_1_6gf's ~11 M parameters in
many small tensors take 0.42 ms where 28 B per parameter at HBM speed are 0.08 ms). Model: measured optimizer
phase = predicted phase (per-tensor cost 0) + c x tensors walked; c by least squares through the origin over
the cases of training-split networks with a CUDA-graph optimizer phase (calibration/data/h200/training, the
phase's event nodes inside the captured step). Held-out networks are never read.
"""
from __future__ import annotations

from predictor.fitted import FittedCalibration
from predictor.machine.profile import load_profile

from .dataset import ONNX_DIR


PROBE_S = 1e-6  # a per-tensor cost that makes the tensors walked visible: phase(c) is affine in c


def tensor_cost_samples(doc: dict) -> list[tuple[float, float, float, str]]:
    """(measured optimizer s, predicted without a per-tensor cost s, tensors walked, case) per training case."""
    from calibration.training_accuracy import _impl, _num, load_cases
    from predictor.train import predict_training_file

    from .fit import _zoo_split

    profile = load_profile("h200")
    cals = [FittedCalibration({**doc, "multi_tensor_per_tensor_s": c}, "<fit>") for c in (0.0, PROBE_S)]
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
        out.append((meas, t[0], (t[1] - t[0]) / PROBE_S, f"{case['network']} {case['precision']} b{case['batch']}"))
    return out


def fit_tensor_cost(doc: dict, log=print) -> float:
    samples = tensor_cost_samples(doc)
    num = sum((m - p) * n for m, p, n, _ in samples if n)
    den = sum(n * n for _, _, n, _ in samples if n)
    c = max(num / den, 0.0) if den else 0.0
    log(f"multi-tensor optimizer: {len(samples)} training cases, {c * 1e9:.0f} ns per tensor walked")
    return c
