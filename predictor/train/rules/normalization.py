"""Normalisation backward: two passes over X and dY, a reduction and an apply.

    BatchNormalization (training)  reduce: per-channel sums of dY and dY * x_hat (-> dscale, dbias), 4 FLOPs
                                   per element; apply: dX from dY, x, the statistics and the sums, 5 per
                                   element (cuDNN's and PyTorch's native batch-norm backward, 2 kernels).
                                   Saves X, the scale and the batch mean / inverse std (C floats each).
    LayerNormalization             apply: dX row by row (8 per element); reduce: dscale, dbias over rows
                                   (4 per element); saves X, the scale, mean and rstd (one float per row).
    RMSNormalization               as LayerNorm without the mean (6 and 3 per element).
    GroupNormalization             reduce: per (N, C) sums (4), parameter gradients (tiny), apply (5): 3 kernels
                                   (also F.group_norm as graph/runtime.py folds the exporter's decomposition).
    InstanceNormalization          as batch norm on the [1, N*C, ...] view, plus 2 tiny kernels summing the
                                   repeated scale/bias gradients.
Statistics are fp32. The apply pass runs only when X needs a gradient; the reduce pass runs always (the
apply pass uses its sums).
"""
from __future__ import annotations

from dataclasses import replace

from ...graph.opclass import BN_BACKWARD_ATTR
from ...graph.ops._common import norm_axis
from ...types import frozen_map
from ..registry import backward


def _params(ctx, idx) -> tuple:
    return tuple(ctx.grad_in(i) for i in idx if ctx.has_input(i) and ctx.needs_grad(i))


def _two_pass(ctx, stats, channels: tuple[int, ...], reduce_fpe: float, apply_fpe: float, param_idx=(1, 2),
              extra_kernels: int = 0) -> list:
    x, gy = ctx.input(0), ctx.grad_out(0)
    scale = ctx.input(1) if ctx.has_input(1) else None
    n = ctx.numel(x)
    ctx.save(x, scale)
    writes = _params(ctx, param_idx) or (ctx.temp("sums", dtype="float32", shape=(2,) + channels),)
    out = [ctx.kernel("reduce", (gy, x, *stats), writes, vector=reduce_fpe * n, kernels=1 + extra_kernels)]
    if ctx.needs_grad(0):
        out.append(ctx.kernel("apply", (gy, x, scale, *stats), (ctx.grad_in(0),), vector=apply_fpe * n))
    return out


@backward("BatchNormalization", diff=(0, 1, 2))
def batch_norm(ctx):
    """Its two kernels are marked BN_BACKWARD_ATTR: class ``norm`` (graph/opclass.hidden_key), not the inference
    transform kernel's ``batchnorm``."""
    c = ctx.shape(ctx.input(0))[1]
    stats = (ctx.internal("save_mean", "float32", (c,)), ctx.internal("save_invstd", "float32", (c,)))
    marked = frozen_map({BN_BACKWARD_ATTR: 1})
    return [replace(k, attrs=marked) for k in _two_pass(ctx, stats, (c,), 4, 5)]


@backward("InstanceNormalization", diff=(0, 1, 2))
def instance_norm(ctx):
    xs = ctx.shape(ctx.input(0))
    nc = xs[0] * xs[1]
    stats = (ctx.internal("save_mean", "float32", (nc,)), ctx.internal("save_invstd", "float32", (nc,)))
    return _two_pass(ctx, stats, (nc,), 4, 5, extra_kernels=2)


def _rows(ctx) -> tuple[int, ...]:
    xs = ctx.shape(ctx.input(0))
    axis = norm_axis(int(ctx.attr("axis", -1)), len(xs))
    return tuple(xs[:axis])


@backward("LayerNormalization", diff=(0, 1, 2))
def layer_norm(ctx):
    rows = _rows(ctx)
    stats = (ctx.internal("mean", "float32", rows), ctx.internal("rstd", "float32", rows))
    return _apply_then_reduce(ctx, stats, 8, 4)


@backward("RMSNormalization", "SimplifiedLayerNormalization", diff=(0, 1))
def rms_norm(ctx):
    stats = (ctx.internal("rstd", "float32", _rows(ctx)),)
    return _apply_then_reduce(ctx, stats, 6, 3, param_idx=(1,))


def _apply_then_reduce(ctx, stats, apply_fpe, reduce_fpe, param_idx=(1, 2)) -> list:
    """PyTorch's layer-norm backward: the row-wise input gradient first, then the column reduction."""
    x, gy = ctx.input(0), ctx.grad_out(0)
    scale = ctx.input(1) if ctx.has_input(1) else None
    n = ctx.numel(x)
    ctx.save(x, scale)
    out = []
    if ctx.needs_grad(0):
        out.append(ctx.kernel("apply", (gy, x, scale, *stats), (ctx.grad_in(0),), vector=apply_fpe * n))
    params = _params(ctx, param_idx)
    if params:
        out.append(ctx.kernel("reduce", (gy, x, *stats), params, vector=reduce_fpe * n))
    return out


@backward("GroupNormalization", "FusedGroupNorm", diff=(0, 1, 2))
def group_norm(ctx):
    """native_group_norm_backward. ``FusedGroupNorm``: F.group_norm as graph/runtime.py folds the exporter's
    Reshape / InstanceNormalization / Reshape / Mul / Add (inputs x, weight, bias): its group count is not an
    attribute, so its two statistics take one value per image (they are N x G floats: a few bytes either way)."""
    x, gy = ctx.input(0), ctx.grad_out(0)
    xs = ctx.shape(x)
    groups = int(ctx.attr("num_groups", 1) or 1)
    stats = (ctx.internal("mean", "float32", (xs[0], groups)), ctx.internal("rstd", "float32", (xs[0], groups)))
    sums = ctx.temp("sums", dtype="float32", shape=(2, xs[0], xs[1]))
    scale = ctx.input(1) if ctx.has_input(1) else None
    n = ctx.numel(x)
    ctx.save(x, scale)
    out = [ctx.kernel("reduce", (gy, x), (sums,), vector=4 * n)]
    params = _params(ctx, (1, 2))
    if params:
        out.append(ctx.kernel("params", (sums, *stats), params, vector=4 * xs[0] * xs[1]))
    if ctx.needs_grad(0):
        out.append(ctx.kernel("apply", (gy, x, scale, sums, *stats), (ctx.grad_in(0),), vector=5 * n))
    return out

