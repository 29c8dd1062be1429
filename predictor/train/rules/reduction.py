"""Reduction and softmax backward.

    Softmax      1 kernel: dX = y * (dY - sum(dY * y)), 4 FLOPs per element; saves the output
    LogSoftmax   1 kernel: dX = dY - exp(y) * sum(dY), 7 FLOPs per element; saves the output
    ReduceSum / ReduceMean   1 kernel writing dX = dY expanded (/ count): nothing saved
    ReduceMax / ReduceMin    2 kernels: mask (x == y), then dY * mask / count; saves x and y
    ReduceSumSquare          1 kernel: 2 x dY; saves x.   ReduceL2: 1 kernel: x dY / y; saves x and y
    ReduceL1                 1 kernel: sign(x) dY; saves x
"""
from __future__ import annotations

from ...graph.ops._common import TRANSCENDENTAL as T
from ..registry import backward


@backward("Softmax", diff=(0,))
def softmax(ctx):
    y, gy = ctx.output(0), ctx.grad_out(0)
    ctx.save(y)
    return [ctx.kernel("bwd", (gy, y), (ctx.grad_in(0),), vector=4 * ctx.numel(y))]


@backward("LogSoftmax", diff=(0,))
def log_softmax(ctx):
    y, gy = ctx.output(0), ctx.grad_out(0)
    ctx.save(y)
    return [ctx.kernel("bwd", (gy, y), (ctx.grad_in(0),), vector=(T + 3) * ctx.numel(y))]


@backward("ReduceSum", "ReduceMean", diff=(0,))
def reduce_sum(ctx):
    return [ctx.kernel("bwd", (ctx.grad_out(0),), (ctx.grad_in(0),), vector=ctx.numel(ctx.input(0)))]


@backward("ReduceMax", "ReduceMin", diff=(0,))
def reduce_max(ctx):
    x, y = ctx.input(0), ctx.output(0)
    ctx.save(x, y)
    mask = ctx.temp("mask", x, dtype="bool")
    n = ctx.numel(x)
    return [ctx.kernel("mask", (x, y), (mask,), vector=n),
            ctx.kernel("bwd", (ctx.grad_out(0), mask), (ctx.grad_in(0),), vector=2 * n)]


@backward("ReduceSumSquare", diff=(0,))
def reduce_sum_square(ctx):
    x = ctx.input(0)
    ctx.save(x)
    return [ctx.kernel("bwd", (ctx.grad_out(0), x), (ctx.grad_in(0),), vector=2 * ctx.numel(x))]


@backward("ReduceL2", diff=(0,))
def reduce_l2(ctx):
    x, y = ctx.input(0), ctx.output(0)
    ctx.save(x, y)
    return [ctx.kernel("bwd", (ctx.grad_out(0), x, y), (ctx.grad_in(0),), vector=2 * ctx.numel(x))]


@backward("ReduceL1", diff=(0,))
def reduce_l1(ctx):
    x = ctx.input(0)
    ctx.save(x)
    return [ctx.kernel("bwd", (ctx.grad_out(0), x), (ctx.grad_in(0),), vector=2 * ctx.numel(x))]
