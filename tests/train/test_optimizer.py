"""Optimizer step: bytes and FLOPs per parameter, state, kernels, mixed precision and the GradScaler."""
import pytest

from predictor.precision import policy
from predictor.train.optimizer import (bytes_per_param, flops_per_param, optimizer_kernels, passes, state_bytes,
                                       temp_bytes)
from predictor.train.precision import train_precision
from predictor.types import PredictorError, WorkKind

FP32 = train_precision(policy("fp32"))
FP16 = train_precision(policy("fp16"))
AMP = train_precision(policy("amp"))


@pytest.mark.parametrize("opt, impl, read, written, flops", [
    ("adamw", "fused", 16, 12, 14),     # reads p, g, m, v; writes p, m, v (fp32)
    ("adam", "fused", 16, 12, 13),
    ("sgd", "fused", 12, 8, 4),         # reads p, g, momentum; writes p, momentum
    ("adamw", "foreach", 52, 32, 14),   # 8 foreach passes, 84 bytes per parameter
    ("adam", "foreach", 48, 28, 13),
    ("sgd", "foreach", 20, 12, 5),      # mul_(buf), add_(buf, g), add_(p, buf)
    ("lamb", "fused", 36, 16, 25),      # grad norm (4), stage 1 (16 -> 12, the update over g), 2 norms, stage 2
])
def test_bytes_and_flops_per_fp32_parameter(opt, impl, read, written, flops):
    assert bytes_per_param(opt, impl, FP32) == (read, written)
    assert flops_per_param(opt, impl, FP32) == flops


def test_master_weights_with_16_bit_storage():
    # fused AdamW reads the fp16 gradient (2 B) and fp32 master p, m, v; then copies p to the fp16 weights
    assert bytes_per_param("adamw", "fused", FP16) == (4 + 2 + 4 + 4 + 4, 12 + 2)
    assert [p.label for p in passes("adamw", "fused", FP16)] == ["adamw", "copy_to_model_weights"]
    # foreach first casts the gradients to fp32 master gradients
    assert passes("adamw", "foreach", FP16)[0].label == "cast_grads"
    assert (FP16.param_bytes, FP16.master_bytes, FP16.grad_bytes, FP16.grad_scaler) == (2, 4, 2, True)
    assert (AMP.param_bytes, AMP.master_bytes, AMP.grad_bytes, AMP.grad_scaler) == (4, 0, 4, True)
    assert not train_precision(policy("bf16")).grad_scaler and not train_precision(policy("amp-bf16")).grad_scaler


def test_state_and_temporaries():
    numels = [1000, 24]
    assert state_bytes("adamw", "fused", numels, FP32) == 2 * 1024 * 4 + 2 * 4  # moments + device step counters
    assert state_bytes("adamw", "foreach", numels, FP32) == 2 * 1024 * 4      # counters on the host
    assert state_bytes("sgd", "fused", numels, FP32) == 1024 * 4
    assert temp_bytes("adamw", "fused", numels, FP32) == 0
    assert temp_bytes("adamw", "foreach", numels, FP32) == 1024 * 4          # sqrt(v)
    assert temp_bytes("lamb", "foreach", numels, FP32) == 2 * 1024 * 4       # sqrt(v) and the update


def test_kernels_of_a_fused_adamw_step():
    numels = [65536] * 40  # 40 one-chunk tensors: 36 + 4 at depth 4
    ks = optimizer_kernels("adamw", "fused", numels, FP32, policy("fp32"))
    assert [k.name for k in ks] == ["optimizer::step_counters", "optimizer::adamw"]
    adamw = ks[1]
    n = 40 * 65536
    assert adamw.work.kernels == 2 and adamw.phase == "optimizer"
    assert adamw.work.bytes_read == 16 * n and adamw.work.bytes_written == 12 * n
    assert adamw.work.flops[WorkKind.VECTOR] == 14 * n
    assert ks[0].work.kernels == 1  # 40 one-element counters, 110 per launch


def test_forloop_is_one_kernel_per_tensor_and_scaler_kernels():
    ks = optimizer_kernels("sgd", "forloop", [10, 20, 30], FP32, policy("fp32"))
    assert [k.work.kernels for k in ks] == [3, 3, 3]
    ks = optimizer_kernels("adamw", "fused", [10, 20], AMP, policy("amp"))
    assert [k.name for k in ks] == ["optimizer::scaler_fills", "optimizer::unscale_check_inf", "optimizer::found_inf",
                                    "optimizer::step_counters", "optimizer::adamw", "optimizer::update_scale"]


def test_unknown_optimizer():
    with pytest.raises(PredictorError, match="unknown optimizer 'rmsprop'"):
        passes("rmsprop", "fused", FP32)
    with pytest.raises(PredictorError, match="--mode train supports"):
        train_precision(policy("fp8"))
