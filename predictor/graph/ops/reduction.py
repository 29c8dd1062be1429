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

Thread loop (:func:`torch_reduce_loop`, ``OpWork.thread_loop``): PyTorch's ``reduce_kernel`` gives each output one
thread, warp, block or several blocks by ``setReduceConfig`` (ATen/native/cuda/Reduce.cuh); each thread then loops
over its share of the reduced elements, one vector load per iteration (``vt0`` values unvectorised). Few outputs of a
few thousand elements each (a group-std over 32 groups at batch 1) leave one warp per output looping a hundred times
on two blocks: the loop's dependent loads, not the bytes, set the time (EvoNorm's 32-group variances of 6,272
elements: 31 us on the H100 where 12,544 elements, split over a block's 16 warps, take 7 us; kernel table of
h100/timing/blind14).
"""
from __future__ import annotations

from ...fastinit import fast_replace as replace
from ...types import OpWork
from ..context import OpContext, ShapeUnknown
from ._common import TRANSCENDENTAL, attr, host_constant, norm_axis, prod, register, work_plan

REDUCE_THREADS = 512  # reduce_kernel's block size (its template's nt), divided by the output vector width
REDUCE_THREADS_PER_SM = 2048  # threads an SM holds (V100, A100, H100/H200; 1,536 on Ampere GA10x and Ada, 1,024 on
# Turing: not told apart): reduce_kernel's blocks per SM = this / block
REDUCE_SMS = 132  # SMs the block split assumes (target grid = SMs x blocks per SM); only reductions of > 131,072
# elements per output split their input over blocks, and only those with few outputs see the SM count
LOAD_BYTES = 16  # bytes of one vectorised load (input_vec_size = 16 / element size for sum, mean, max)

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


def _last_pow2(n: int) -> int:
    return 1 << (max(int(n), 1).bit_length() - 1)


def torch_reduce_loop(shape: tuple[int, ...], axes: tuple[int, ...], elt_bytes: int, vt0: int = 4,
                      vec: int | None = None) -> tuple[int, int, int] | None:
    """(iterations, threads, threads per SM) of PyTorch's reduce_kernel reducing ``axes`` of a contiguous ``shape``
    (setReduceConfig, ATen/native/cuda/Reduce.cuh): block (width x height <= 512 threads), the input split over a
    warp's lanes (reduced axis innermost) or its outputs over the lanes (otherwise, output vectors of up to 4), over
    the block's warps when each thread would hold >= min(16 x height, 256) values, over blocks when it would still
    hold >= 256 (global reduction); each thread's loop then takes one load of ``vec`` elements per iteration
    (vectorised input: innermost reduced run of >= 128 elements; ``vec`` defaults to LOAD_BYTES / ``elt_bytes``) or
    of ``vt0`` otherwise; a global reduction adds its last block's pass over the partial results (one load per
    iteration, over the block's threads, or its warps when the outputs lie across the lanes: 2,112 partials of 128
    outputs over 4 warps take ~180 us on the H100, microbenchmark run 12). None when nothing is reduced. Ignores:
    the unaligned head of a vectorised row, the SM count (REDUCE_SMS)."""
    dims = [(d, i in axes) for i, d in enumerate(shape) if d != 1]
    if not dims or not any(r for _, r in dims):
        return None
    red = prod(d for d, r in dims if r)
    outs = prod(d for d, r in dims if not r)
    runs = sum(1 for i, (_, r) in enumerate(dims) if r and (i == 0 or not dims[i - 1][1]))
    fastest = dims[-1][1]
    out_vec = 1
    if fastest:
        dim0, dim1 = red, outs
        vectorised = dim0 >= 128 and runs == 1
        load = (vec or max(LOAD_BYTES // max(elt_bytes, 1), 1)) if vectorised else vt0
        if vectorised:
            dim0 //= load
    else:
        inner = 1  # the innermost run of kept axes: the outputs a thread's vector load covers
        for d, r in reversed(dims):
            if r:
                break
            inner *= d
        out_vec = 4 if inner % 4 == 0 else 2 if inner % 2 == 0 else 1
        dim0, dim1, load = outs // out_vec, red, vt0
    mnt = REDUCE_THREADS // out_vec
    d0 = _last_pow2(dim0) if dim0 < mnt else mnt
    d1 = _last_pow2(dim1) if dim1 < mnt else mnt
    width = min(d0, 32)
    height = min(d1, mnt // width)
    width = min(d0, mnt // height)
    threads = width * height
    step_in, step_out = (width, 1) if fastest else (1, width)
    vpt = -(-red // step_in)
    warp_split = vpt >= min(height * 16, 256)
    if warp_split:
        step_in *= height
    else:
        step_out *= height
    vpt = -(-red // step_in)
    grid = -(-outs // (step_out * out_vec))
    per_sm = (REDUCE_THREADS_PER_SM // threads) * threads
    ctas = 1
    target = REDUCE_SMS * (REDUCE_THREADS_PER_SM // threads)
    tail = 0
    if warp_split and vpt >= 256 and grid <= target:
        ctas = max(min(-(-target // grid), -(-vpt // 16)), -(-vpt // 256))
        vpt = -(-red // (step_in * ctas))
        if ctas > 1:  # the last block to finish combines the ctas partial results of its outputs, a load each
            tail = -(-ctas // (threads if fastest else height))
    return -(-vpt // load) + tail, grid * ctas * threads, per_sm


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
    w = ctx.work(vector_flops=_flops(ctx.node.op_type, *sizes))
    loop = reduce_loop(ctx)
    return w if loop is None else replace(w, thread_loop=loop)


def reduce_loop(ctx: OpContext, vt0: int = 4, vec: int | None = None,
                x_bytes: float | None = None) -> tuple[int, int, int, int] | None:
    """:func:`torch_reduce_loop` of a Reduce* node's input (None when its axes or shape are not known) and the bytes
    it loops over (``x_bytes``, else the input's under the policy); the element size is the policy's unless ``vec``
    fixes the load (then the policy is not read, and ``x_bytes`` must be given)."""
    axes = reduce_axes(ctx)
    try:
        shape = ctx.in_shape(0)
    except ShapeUnknown:
        return None
    if axes is None:
        return None
    if axes == ():
        axes = tuple(range(len(shape)))
    elt = 4 if vec else ctx.policy.dtype_bytes(ctx.input(0).dtype)
    loop = torch_reduce_loop(shape, axes, elt, vt0, vec)
    if loop is None:
        return None
    return loop + (int(ctx.in_bytes(0) if x_bytes is None else x_bytes),)


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
