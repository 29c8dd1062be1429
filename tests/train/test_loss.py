"""The loss on the output: cross-entropy and MSE kernels, the GradScaler's scaling."""
import pytest

from predictor.precision import policy
from predictor.train.loss import loss_plan
from predictor.types import PredictorError, TensorInfo, WorkKind

VEC = WorkKind.VECTOR


def test_cross_entropy():
    y = TensorInfo("logits", "float32", (8, 10))
    lp = loss_plan(y, "cross_entropy", policy("fp32"))
    assert [k.name for k in lp.forward] == ["loss::log_softmax", "loss::nll_loss"]
    assert [k.name for k in lp.backward] == ["loss::seed", "loss::nll_loss_backward", "loss::log_softmax_backward"]
    assert lp.forward[0].work.flops == {VEC: 8 * 80} and lp.backward[1].work.kernels == 2
    assert lp.target.dtype == "int64" and lp.target.shape == (8,)
    assert [t.name for t in lp.backward[-1].writes] == ["grad::logits"]


def test_mse_casts_a_16_bit_output_and_scales_with_a_grad_scaler():
    y = TensorInfo("out", "float16", (4, 16, 32))
    lp = loss_plan(y, "mse", policy("amp"), grad_scaler=True)
    assert [k.kind for k in lp.forward] == ["cast", "mse", "mean"]
    assert [k.name for k in lp.backward] == ["loss::seed", "loss::scale", "loss::mse_loss_backward",
                                             "loss::cast_backward"]
    assert lp.backward[2].work.bytes_read == 2 * 2048 * 4  # fp32 x and target
    assert lp.target.dtype == "float32" and lp.target.shape == y.shape


def test_bad_loss():
    with pytest.raises(PredictorError, match="unknown loss"):
        loss_plan(TensorInfo("y", "float32", (2,)), "hinge", policy("fp32"))
