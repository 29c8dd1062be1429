"""Pooling: MaxPool, AveragePool, LpPool, GlobalAveragePool, GlobalMaxPool, GlobalLpPool.

FLOPs (strides, pads, dilations and ceil_mode enter through the inferred output shape):

    MaxPool            out_numel * prod(kernel_shape)          (one compare per window element)
    AveragePool        out_numel * (prod(kernel_shape) + 1)    (adds, then one divide)
    LpPool             out_numel * (2 * prod(kernel_shape) + 4)  (|x|^p accumulate as an FMA; root)
    GlobalAveragePool  in_numel + out_numel
    GlobalMaxPool      in_numel
    GlobalLpPool       2 * in_numel + 4 * out_numel

Kernels and bytes (PyTorch eager): one kernel each, compulsory bytes (overlapping windows re-read
from cache), except
* MaxPool / GlobalMaxPool: ``max_pool2d`` on CUDA always runs ``max_pool2d_with_indices`` (and
  adaptive max pooling also computes indices): the int64 indices are written even when the ONNX
  node does not ask for them (counted; when the Indices output is requested it is already counted).
* LpPool: ``F.lp_pool2d`` = pow (X-sized), avg_pool, then sign, abs, relu, mul, mul, pow on the
  output: 8 kernels.
NB: 1-D pooling is run as 2-D in PyTorch; same counts.
"""
from __future__ import annotations

from ...types import OpWork
from ..context import OpContext
from ._common import INT64_BYTES, TRANSCENDENTAL, attr, out_requested, prod, register, work_plan


def _window(ctx: OpContext) -> int:
    return prod(int(k) for k in attr(ctx, "kernel_shape", ()))


def _max_pool_work(ctx: OpContext, flops: int) -> OpWork:
    extra = 0 if out_requested(ctx, 1) else ctx.out_numel() * INT64_BYTES
    return ctx.work(vector_flops=flops, bytes_written=ctx.all_out_bytes() + extra)


@register("MaxPool", cls="pool")
def max_pool(ctx: OpContext) -> OpWork:
    """out_numel * window compares; 1 kernel; writes int64 indices too (PyTorch CUDA)."""
    return _max_pool_work(ctx, ctx.out_numel() * _window(ctx))


@register("GlobalMaxPool", cls="pool")
def global_max_pool(ctx: OpContext) -> OpWork:
    """in_numel compares; 1 kernel (adaptive_max_pool, which writes int64 indices)."""
    return _max_pool_work(ctx, ctx.in_numel(0))


@register("AveragePool", cls="pool")
def average_pool(ctx: OpContext) -> OpWork:
    """out_numel * (window + 1); 1 kernel; compulsory bytes."""
    return ctx.work(vector_flops=ctx.out_numel() * (_window(ctx) + 1))


@register("GlobalAveragePool", cls="pool")
def global_average_pool(ctx: OpContext) -> OpWork:
    """in_numel adds + out_numel divides; 1 kernel (a mean reduction); compulsory bytes."""
    return ctx.work(vector_flops=ctx.in_numel(0) + ctx.out_numel())


@register("LpPool", cls="pool")
def lp_pool(ctx: OpContext) -> OpWork:
    """out_numel * (2 * window + 4); 8 kernels (pow, avg_pool, 6 output-sized elementwise)."""
    x_b = ctx.in_bytes(0)
    o_b = ctx.out_bytes()
    passes = [(x_b, x_b), (x_b, o_b)] + [(o_b, o_b)] * 6
    return work_plan(ctx, passes, vector_flops=ctx.out_numel() * (2 * _window(ctx) + TRANSCENDENTAL))


@register("GlobalLpPool", cls="pool")
def global_lp_pool(ctx: OpContext) -> OpWork:
    """2 * in_numel + 4 * out_numel; 1 kernel (a norm reduction); compulsory bytes."""
    return ctx.work(vector_flops=2 * ctx.in_numel(0) + TRANSCENDENTAL * ctx.out_numel())
