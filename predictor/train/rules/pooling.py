"""Pooling and resize backward.

    MaxPool / GlobalMaxPool  1 kernel: dX from dY and the int64 indices the forward wrote (PyTorch saves the
                             input and the indices; max_pool2d_with_indices_backward)
    AveragePool              1 kernel spreading dY over each window (saves the input, for its shape)
    GlobalAveragePool        1 kernel: dX = dY expanded / (H*W) (``mean`` backward; saves nothing)
    Resize nearest           1 kernel (upsample_nearest backward gathers per input element)
    Resize linear / cubic    2 kernels: zero-fill of dX, then atomic adds of every tap (2 FLOPs a tap)
"""
from __future__ import annotations

from ...graph.ops._common import prod
from ...graph.ops.resize import TAPS_PER_AXIS
from ..registry import backward


def _indices(ctx):
    if len(ctx.node.outputs) > 1 and ctx.node.outputs[1].name:
        return ctx.node.outputs[1]
    return ctx.internal("indices", "int64", ctx.shape(ctx.output(0)))


@backward("MaxPool", "GlobalMaxPool", diff=(0,))
def max_pool(ctx):
    x, gy = ctx.input(0), ctx.grad_out(0)
    idx = _indices(ctx)
    ctx.save(x, idx)
    return [ctx.kernel("bwd", (gy, idx), (ctx.grad_in(0),), vector=ctx.numel(x))]


@backward("AveragePool", diff=(0,))
def average_pool(ctx):
    x, gy = ctx.input(0), ctx.grad_out(0)
    window = prod(int(k) for k in ctx.attr("kernel_shape", ()) or ())
    ctx.save(x)
    return [ctx.kernel("bwd", (gy,), (ctx.grad_in(0),), vector=ctx.numel(gy) * (window + 1))]


@backward("GlobalAveragePool", diff=(0,))
def global_average_pool(ctx):
    return [ctx.kernel("bwd", (ctx.grad_out(0),), (ctx.grad_in(0),), vector=ctx.numel(ctx.input(0)))]


@backward("Resize", "Upsample", diff=(0,))
def resize(ctx):
    x, y, gy = ctx.input(0), ctx.output(0), ctx.grad_out(0)
    mode = str(ctx.attr("mode", "nearest") or "nearest")
    mode = mode.decode() if isinstance(mode, bytes) else mode
    taps = TAPS_PER_AXIS.get(mode.lower(), 2)
    gx = ctx.grad_in(0)
    if taps == 0:
        return [ctx.kernel("bwd", (gy,), (gx,))]
    k = sum(1 for a, b in zip(ctx.shape(x), ctx.shape(y)) if a != b)
    fill = ctx.kernel("zero", (), (gx,))
    acc = ctx.kernel("bwd", (gy, gx), (gx,), vector=2 * taps ** k * ctx.numel(y))
    return [fill, acc]

