"""Training at a precision: what the parameters, gradients and optimizer state are stored in.

    fp32, tf32        parameters, gradients, optimizer state fp32
    amp, amp-bf16     torch.autocast: fp32 parameters (the master copy) and gradients; the 16-bit weight
                      copies are the graph's own AmpCast nodes (predictor/amp.py), cast once per forward
                      and saved for the backward, whose cast gradients come back to fp32
    fp16, bf16        16-bit parameters and gradients (the forward and backward run on them) with an fp32
                      master copy the optimizer updates (state fp32), copied back to the 16-bit weights
                      after each step (a cast kernel reading 4 and writing 2 bytes per parameter)
fp16 and amp (float16) run torch.amp.GradScaler: the loss is scaled before the backward (1 kernel), the
gradients are checked for inf/NaN and unscaled (a multi-tensor pass reading and writing every gradient),
found_inf is reduced and the scale updated (tiny kernels). bf16 needs no scaler.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..precision import PrecisionPolicy
from ..types import PredictorError

TRAINABLE = ("fp32", "tf32", "fp16", "bf16", "amp", "amp-bf16")
_SCALED = frozenset({"fp16", "amp"})
STATE_BYTES = 4  # optimizer state (momentum, Adam moments) in fp32


@dataclass(frozen=True)
class TrainPrecision:
    name: str
    param_bytes: int     # bytes per element of the parameters the forward reads
    master_bytes: int    # bytes per element of a separate fp32 master copy (0: the parameters are the master)
    grad_bytes: int      # bytes per element of a parameter gradient
    state_bytes: int     # bytes per element of one optimizer state tensor
    grad_scaler: bool

    @property
    def update_bytes(self) -> int:
        """Bytes per element of the weights the optimizer updates (the master copy when there is one)."""
        return self.master_bytes or self.param_bytes


def train_precision(policy: PrecisionPolicy) -> TrainPrecision:
    if policy.name not in TRAINABLE:
        raise PredictorError(f"--mode train supports precisions {', '.join(TRAINABLE)}, not '{policy.name}'")
    p = policy.dtype_bytes("float32")  # parameters are exported as float32: the policy's storage (or 4)
    return TrainPrecision(policy.name, p, 4 if p < 4 else 0, p, STATE_BYTES, policy.name in _SCALED)
