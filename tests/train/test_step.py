"""A whole training step: phases, kernels in order, unsupported backward ops, mixed precision."""
import numpy as np
import pytest
from onnx import helper

from predictor.fitted import bundled_calibration
from predictor.graph.loader import load
from predictor.machine.profile import load_profile
from predictor.train import TrainingPrediction
from predictor.types import NetworkPrediction, PredictorError
from tests.train.util import graph_of, mlp, plan, rng_w, train


def test_mlp_step_phases():
    pred = train(mlp(), loss="mse", batch=128)
    assert isinstance(pred, NetworkPrediction) and isinstance(pred, TrainingPrediction) and pred.mode == "train"
    assert [p.name for p in pred.phases] == ["forward", "backward", "optimizer"]
    assert len(pred.op_phases) == len(pred.ops)
    fwd, bwd, opt = pred.phases
    # forward: fc1, relu, fc2 + the loss's (x - t)^2 and mean; backward: seed, mse backward, fc2 dA/dB/bias,
    # relu, fc1 dB/bias; optimizer: step counters + fused AdamW
    assert (fwd.kernels, bwd.kernels, opt.kernels) == (5, 8, 2)
    assert pred.kernels == 15 and pred.total_time_s == pytest.approx(fwd.time_s + bwd.time_s + opt.time_s)
    # backward GEMM FLOPs: fc2 dA and dB (2 x 2*128*128*512), fc1 dB (2*128*512*256)
    mm = sum(f.flops for o, ph in zip(pred.ops, pred.op_phases) if ph == "backward" for f in o.cost.flops
             if f.unit.value == "cuda" and o.cost.op_type == "Gemm")
    assert mm == 2 * 2 * 128 * 128 * 512 + 2 * 128 * 512 * 256
    assert pred.unsupported == {}


def test_eager_time_per_phase_adds_up():
    prof = load_profile("h200")
    pred = train(mlp(), gpu="h200", calibration=bundled_calibration(prof), loss="mse", batch=128)
    assert pred.eager_time_s == pytest.approx(sum(p.eager_time_s for p in pred.phases))
    assert pred.eager_time_s >= pred.total_time_s * 0.99


def test_an_op_without_a_backward_rule_is_reported_and_strict_fails():
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"], name="lin"),
             helper.make_node("LpNormalization", ["h"], ["n"], name="lp"),
             helper.make_node("Relu", ["n"], ["y"], name="relu")]
    g = graph_of(nodes, [("x", "float32", [2, 4])], [("y", "float32", None)], {"w": rng_w(4, 4)})
    pred = train(g, loss="mse", batch=2)
    assert pred.unsupported == {"LpNormalization (no backward rule)": 1}
    assert any(ph == "backward" and o.cost.name == "relu::bwd" for o, ph in zip(pred.ops, pred.op_phases))
    with pytest.raises(PredictorError, match="LpNormalization \\(no backward rule\\) x1"):
        train(g, loss="mse", batch=2, strict=True)


def test_lstm_backward_is_costed():
    g = load("calibration/data/networks/onnx/lstm.torchscript.onnx", batch=2)
    pred = train(g, loss="mse", batch=2, strict=True)
    assert pred.unsupported == {}
    kinds = {o.cost.name.split("::")[-1] for o, ph in zip(pred.ops, pred.op_phases) if ph == "backward"}
    assert {"bwd_data_steps", "wgrad_w", "wgrad_r", "bgrad"} <= kinds


def test_amp_casts_weights_once_and_their_gradients_back():
    p = plan(mlp(), precision="amp", gpu="h200")
    assert all(t.dtype == "float32" for t in p.autograd.params.values())  # fp32 master parameters
    casts = [k for k in p.backward if k.op_type == "AmpCast"]
    weight_grads = {t.name for k in casts for t in k.writes} & {f"grad::{n}" for n in p.autograd.params}
    assert {"grad::W1", "grad::W2"} <= weight_grads  # ToCopyBackward: fp16 weight gradient -> fp32
    assert p.precision.grad_scaler and [k.name for k in p.loss.backward][:2] == ["loss::seed", "loss::scale"]


def test_fp16_storage_has_master_weights_and_their_copy():
    p = plan(mlp(), precision="fp16", gpu="h200")
    assert p.precision.master_bytes == 4 and p.optimizer[-2].name == "optimizer::copy_to_model_weights"


def test_unknown_optimizer_or_precision():
    with pytest.raises(PredictorError, match="unknown optimizer"):
        train(mlp(), optimizer="rmsprop")
    with pytest.raises(PredictorError, match="--mode train supports"):
        train(mlp(), precision="int8")


def test_resnet18_kernel_counts_and_analysis_time():
    import time

    t = time.perf_counter()
    g = load("calibration/data/networks/onnx/resnet18.torchscript.onnx", batch=8)
    pred = train(g, gpu="h200", batch=8, loss="mse")
    assert time.perf_counter() - t < 5.0
    fwd, bwd, opt = (p.kernels for p in pred.phases)
    # forward: 20 conv, 20 batch norms + their counters, 17 ReLU, max pool, 8 adds, pool, fc, loss (2) = 90
    # (the H200 profile counted 91); optimizer: 2 fused AdamW launches + the step counters (measured: 3)
    assert fwd == 90 and opt == 3
    # backward: loss 2, fc 3, pool 1, 20 wgrad + 19 dgrad, 40 batch-norm passes, 17 ReLU, max pool 1,
    # 8 residual accumulations
    assert bwd == 2 + 3 + 1 + 39 + 40 + 17 + 1 + 8
    assert np.isfinite(pred.total_time_s)
