"""Reductions: ReduceSum/Mean/Max/Min/Prod/L1/L2/LogSum/LogSumExp/SumSquare, ArgMax, ArgMin.

FLOPs = ``per_input * in_numel + per_output * out_numel`` (one accumulate per input element, the
first one into the zero accumulator included, as the kernels do; then the per-output epilogue):

    ReduceSum, ReduceMax, ReduceMin, ReduceProd   1 / 0
    ReduceMean                                    1 / 1 (divide)
    ReduceL1                                      2 / 0 (abs + add)
    ReduceL2                                      2 / 1 (FMA; sqrt)
    ReduceSumSquare                               2 / 0 (FMA)
    ReduceLogSum                                  1 / 4 (log)
    ReduceLogSumExp                               7 / 5 (max 1, subtract 1, exp 4, add 1; log 4 + add 1)
    ArgMax, ArgMin                                1 / 0 (compare-select)

Axes come from the ``axes`` attribute (ReduceSum before opset 13, the others before opset 18) or
from the constant second input (ReduceSum >= 13, others >= 18); ``keepdims`` only changes the
output's shape, not its size. With no axes the reduction is over every axis, unless
``noop_with_empty_axes`` is set: then the node is an identity (0 kernels). When the axes input is
not a known constant, the output shape (from shape inference) gives the output size.

Kernels (PyTorch eager): one reduction kernel for each, except
* ReduceLogSum: ``sum`` then ``log``: 2 kernels (the log on the output only);
* ReduceLogSumExp: ``torch.logsumexp``: amax, abs/eq/masked_fill on the maxima (3 tiny kernels),
  subtract (X-sized), exp_ in place (X-sized), sum, log_, add_: 9 kernels; X-sized traffic: amax
  reads X, subtract reads X and writes T, exp_ reads and writes T, sum reads T.
* ReduceSumSquare: 1 kernel (a fused reduction such as ``vector_norm(x)**2``); NB: the
  ``(x*x).sum()`` an exporter usually sees would be 2.
ArgMax/ArgMin write int64 indices.
"""
from __future__ import annotations

from ...types import OpWork
from ..context import OpContext, ShapeUnknown
from ._common import TRANSCENDENTAL, attr, host_constant, norm_axis, prod, register, work_plan

# op -> (FLOPs per input element, FLOPs per output element)
REDUCE_FLOPS: dict[str, tuple[int, int]] = {
    "ReduceSum": (1, 0), "ReduceMax": (1, 0), "ReduceMin": (1, 0), "ReduceProd": (1, 0),
    "ReduceMean": (1, 1),
    "ReduceL1": (2, 0), "ReduceL2": (2, 1), "ReduceSumSquare": (2, 0),
    "ReduceLogSum": (1, TRANSCENDENTAL),
    "ReduceLogSumExp": (3 + TRANSCENDENTAL, TRANSCENDENTAL + 1),
    "ArgMax": (1, 0), "ArgMin": (1, 0),
}


def reduce_axes(ctx: OpContext) -> tuple[int, ...] | None:
    """The normalised reduced axes; () for 'no axes given'; None when the axes input is dynamic."""
    rank = len(ctx.in_shape(0))
    if ctx.has_input(1):
        axes = ctx.const(1)
        if axes is None:
            return None
    else:
        axes = attr(ctx, "axes", None) or ()
    return tuple(sorted({norm_axis(int(a), rank) for a in axes}))


def reduced_sizes(ctx: OpContext) -> tuple[int, int] | None:
    """(in_numel, out_numel) of a Reduce* node, or None when it costs nothing: an identity (noop with
    no axes) or folded shape arithmetic (all inputs load-time constants)."""
    if host_constant(ctx):
        return None
    shape = ctx.in_shape(0)
    in_numel = prod(shape)
    axes = reduce_axes(ctx)
    if axes == ():
        if int(attr(ctx, "noop_with_empty_axes", 0)):
            return None
        axes = tuple(range(len(shape)))
    if axes is None:  # dynamic axes: trust the inferred output shape
        return in_numel, ctx.out_numel()
    try:
        out_numel = ctx.out_numel()
    except ShapeUnknown:
        out_numel = in_numel // prod(shape[a] for a in axes) if in_numel else 0
    return in_numel, out_numel


def _flops(op: str, in_numel: int, out_numel: int) -> int:
    per_in, per_out = REDUCE_FLOPS[op]
    return per_in * in_numel + per_out * out_numel


@register("ReduceSum", "ReduceProd", "ReduceL1", "ReduceL2", "ReduceSumSquare", cls="reduce", autocast="fp32")
@register("ReduceMean", "ReduceMax", "ReduceMin", cls="reduce")
def reduce(ctx: OpContext) -> OpWork:
    """One reduction kernel; compulsory bytes; identity (0 kernels) for noop_with_empty_axes."""
    sizes = reduced_sizes(ctx)
    if sizes is None:
        return ctx.free_view()
    return ctx.work(vector_flops=_flops(ctx.node.op_type, *sizes))


@register("ReduceLogSum", cls="reduce", autocast="fp32")
def reduce_log_sum(ctx: OpContext) -> OpWork:
    """sum (reads X, writes Y) then log_ in place (reads and writes Y): 2 kernels."""
    sizes = reduced_sizes(ctx)
    if sizes is None:
        return ctx.free_view()
    out_b = ctx.out_bytes()
    return work_plan(ctx, [(ctx.all_in_bytes(), out_b), (out_b, out_b)],
                     vector_flops=_flops("ReduceLogSum", *sizes))


@register("ReduceLogSumExp", cls="reduce", autocast="fp32")
def reduce_log_sum_exp(ctx: OpContext) -> OpWork:
    """torch.logsumexp: 9 kernels (see the module docstring)."""
    sizes = reduced_sizes(ctx)
    if sizes is None:
        return ctx.free_view()
    x_b = ctx.in_bytes(0)
    o_b = ctx.out_bytes()
    passes = [
        (ctx.all_in_bytes(), o_b),  # amax
        (o_b, o_b), (o_b, o_b), (2 * o_b, o_b),  # abs, == inf, masked_fill_ (output-sized)
        (x_b + o_b, x_b),  # x - max
        (x_b, x_b),  # exp_
        (x_b, o_b),  # sum
        (o_b, o_b), (2 * o_b, o_b),  # log_, add_ max
    ]
    return work_plan(ctx, passes, vector_flops=_flops("ReduceLogSumExp", *sizes), reads={0: 2 * x_b})


@register("ArgMax", "ArgMin", cls="reduce")
def arg_reduce(ctx: OpContext) -> OpWork:
    """One compare-select per input element, 1 kernel, int64 output; compulsory bytes."""
    if host_constant(ctx):
        return ctx.free_view()
    return ctx.work(vector_flops=ctx.in_numel(0))
