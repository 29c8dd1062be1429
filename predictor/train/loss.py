"""The loss on the network's output and its backward: the first kernels of the backward phase.

    cross_entropy   forward: log_softmax over the last axis (1 kernel, 8 FLOPs per element, output saved) and
                    nll_loss (1 kernel reading the target and one log-probability per row); backward: the
                    seed (fill of the scalar gradient), nll_loss_backward (zero fill of the log-probability
                    gradient + scatter of one value per row: 2 kernels), log_softmax_backward (1 kernel, 7
                    FLOPs per element). Target: one int64 class per row.
    mse             ``mse_loss(out.float(), target)`` (what calibration/training/measure.py runs): the cast to
                    fp32 when the output is 16-bit (1 kernel), the elementwise (x - t)^2 (3 FLOPs per element)
                    and the mean (2 kernels); backward: the seed, mse_loss_backward (2 (x - t) g / n: 1
                    kernel reading x and t) and the cast of the gradient back (16-bit output). Target: fp32,
                    the output's shape.
With a GradScaler the backward starts by scaling the loss (1 tiny kernel).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..graph.ops._common import TRANSCENDENTAL as T
from ..precision import PrecisionPolicy
from ..types import PredictorError, TensorInfo
from .kernel import Kernel, grad_of, make_work, numel, tiny

LOSSES = ("cross_entropy", "mse")


@dataclass(frozen=True)
class LossPlan:
    forward: tuple[Kernel, ...]
    backward: tuple[Kernel, ...]
    target: TensorInfo


def _k(name, kind, op_type, phase, reads, writes, policy, vector=0.0, kernels=1, times=None) -> Kernel:
    work = make_work(reads, writes, policy, vector=vector, kernels=kernels, times=times)
    return Kernel(f"loss::{name}", kind, op_type, phase, work, tuple(reads), tuple(writes), policy=policy)


def loss_plan(y: TensorInfo, loss: str, policy: PrecisionPolicy, grad_scaler: bool = False) -> LossPlan:
    if loss not in LOSSES:
        raise PredictorError(f"unknown loss '{loss}' (known: {', '.join(LOSSES)})")
    if y is None or y.shape is None or not y.shape:
        raise PredictorError("--mode train needs the network's first output to have a known shape (the loss reads it)")
    n = numel(y)
    scalar = TensorInfo("loss::value", "float32", ())
    gy = grad_of(y)
    seed = tiny("loss::seed", "seed", "backward", policy, "ConstantOfShape")
    scale = [tiny("loss::scale", "scaler", "backward", policy, "Mul")] if grad_scaler else []
    if loss == "cross_entropy":
        rows = n // y.shape[-1] if y.shape[-1] else 0
        target = TensorInfo("loss::target", "int64", tuple(y.shape[:-1]) or (1,))
        logp = TensorInfo("loss::log_probs", y.dtype, y.shape)
        glogp = grad_of(logp)
        fwd = (_k("log_softmax", "log_softmax", "LogSoftmax", "forward", (y,), (logp,), policy, vector=8 * n),
               _k("nll_loss", "nll_loss", "GatherElements", "forward", (logp, target), (scalar,), policy,
                  vector=rows, times={logp.name: rows / max(n, 1)}))
        bwd = (seed, *scale,
               _k("nll_loss_backward", "nll_loss_backward", "ScatterElements", "backward", (target,), (glogp,),
                  policy, kernels=2),
               _k("log_softmax_backward", "log_softmax_backward", "LogSoftmax", "backward", (glogp, logp), (gy,),
                  policy, vector=(T + 3) * n))
        return LossPlan(fwd, bwd, target)
    y32 = TensorInfo("loss::output_fp32", "float32", y.shape) if y.dtype != "float32" else y
    target = TensorInfo("loss::target", "float32", y.shape)
    sq = TensorInfo("loss::squared_error", "float32", y.shape)
    fwd = ((_k("cast", "cast", "Cast", "forward", (y,), (y32,), policy),) if y32 is not y else ()) + (
        _k("squared_error", "mse", "Sub", "forward", (y32, target), (sq,), policy, vector=3 * n),
        _k("mean", "mean", "ReduceMean", "forward", (sq,), (scalar,), policy, vector=n))
    gy32 = grad_of(y32)
    bwd = (seed, *scale,
           _k("mse_loss_backward", "mse_backward", "Sub", "backward", (y32, target), (gy32,), policy, vector=4 * n))
    if y32 is not y:
        bwd += (_k("cast_backward", "cast", "Cast", "backward", (gy32,), (gy,), policy),)
    return LossPlan(fwd, bwd, target)
