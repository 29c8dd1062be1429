"""Data movement: Concat, Split, Slice, Gather(-Elements/-ND), Scatter(-ND/-Elements), Transpose,
Pad, Tile, Expand, DepthToSpace, SpaceToDepth, Col2Im, CumSum, CumProd, Range, Trilu, OneHot, NonZero, TopK.

Policy: each op is the one copy kernel its ONNX semantics imply (0 FLOPs unless it computes), with
these exceptions and overrides:

* Free (0 kernels): nodes whose inputs are all load-time constants (shape arithmetic on small int
  tensors, which PyTorch holds as Python ints); a Slice/Split/Expand whose output equals its input;
  a Transpose that only moves size-1 dims (a view in PyTorch); a Gather of one load-time index (rank 0:
  ``x[:, i]``, aten::select, a view).
* Views in PyTorch that are counted as one copy here: Slice and Split (``x[:, :n]``, ``split`` are
  views and the consumer then reads strided memory), Transpose (``permute`` is a view; the copy
  happens in the consumer's ``.contiguous()``/``reshape``, which is a free Reshape here, so the pair
  totals one copy either way), Expand (a stride-0 view in PyTorch; the ONNX op materialises it).
  A permute or slice whose strided view reaches layer norms (through residual adds and views) and needs no
  other copy is a view, and each of those norms copies it (predictor/strided_norms.py: STRIDED_VIEW).
  NB: consumers that take strided operands directly (cuBLAS transposes) make these copies disappear in
  eager; the views around fused attention (split q/k/v, head transposes) are removed by the runtime's
  ``sdpa`` pattern, and a Slice or Split read only by elementwise kernels by its ``slice_views`` pattern
  (graph/runtime.py).
* Bytes read: Slice and Gather-family ops read only the elements they copy (out_numel elements of
  the data input, plus the indices), not their whole data input (an embedding lookup reads the
  gathered rows, not the table). Expand and Tile read their input once.
* Several kernels: Pad(constant) = fill + copy (``constant_pad_nd``); Scatter* = clone + scatter;
  CumSum/CumProd reverse = flip + scan + flip, exclusive = scan + subtract; OneHot = min and max
  checks, zeros, scatter (4); NonZero = count, select, transpose (3; plus a device->host sync);
  TopK = select + sort of the k results (2 when ``sorted`` and k > 1).
"""
from __future__ import annotations

from ...fastinit import fast_replace as replace
from ...types import OpWork
from ..context import KV_APPEND, SLICE_ASSIGN, STRIDED_GATHER, OpContext, ShapeUnknown
from ._common import (INT64_BYTES, attr, host_constant, in_elem_bytes, input_reads, inputs_bytes, norm_axis, prod,
                      register, str_attr, with_input_reads, work_plan)
from .reduction import REDUCE_THREADS_PER_SM


NOTE_KV_APPEND = "KV-cache append in place: one copy of the new tokens (the cache is not copied)"


@register("Concat", cls="copy")
def concat(ctx: OpContext) -> OpWork:
    """torch.cat: 1 kernel, 0 FLOPs, compulsory bytes; free when folded shape arithmetic. A decode step's
    Concat(past, new) marked KV_APPEND (predictor/serve.py) is a static cache's ``k_cache[:, :, pos] = k``: one copy
    kernel reading and writing the new tokens only."""
    if host_constant(ctx):
        return ctx.free_view()
    past = ctx.node.attrs.get(KV_APPEND)
    if past is not None:
        new_b = inputs_bytes(ctx, [i for i in range(ctx.n_inputs) if i != past])
        return with_input_reads(ctx.work(bytes_read=new_b, bytes_written=new_b, notes=(NOTE_KV_APPEND,)),
                                input_reads(ctx, {past: 0.0}))
    return ctx.work()


@register("Split", cls="copy")
def split(ctx: OpContext) -> OpWork:
    """1 copy kernel writing every output (NB: views in PyTorch); reads the input once."""
    if host_constant(ctx) or (len(ctx.node.outputs) == 1 and ctx.out_shape(0) == ctx.in_shape(0)):
        return ctx.free_view()
    return ctx.work()


@register("Slice", cls="copy")
def slice_(ctx: OpContext) -> OpWork:
    """1 copy kernel (NB: a view in PyTorch) reading only the sliced elements; free if a no-op."""
    if host_constant(ctx) or ctx.out_shape() == ctx.in_shape(0):
        return ctx.free_view()
    others = inputs_bytes(ctx, range(1, ctx.n_inputs))
    sliced = ctx.out_bytes()
    return with_input_reads(ctx.work(bytes_read=sliced + others), input_reads(ctx, {0: sliced}))


def _gather_work(ctx: OpContext, data_idx: int = 0) -> OpWork:
    """Reads the indices and out_numel elements of the data input; writes the output."""
    if host_constant(ctx):
        return ctx.free_view()
    others = inputs_bytes(ctx, [i for i in range(ctx.n_inputs) if i != data_idx])
    gathered = ctx.out_numel() * in_elem_bytes(ctx, data_idx)
    return with_input_reads(ctx.work(bytes_read=gathered + others), input_reads(ctx, {data_idx: gathered}))


@register("Gather", cls="copy")
def gather(ctx: OpContext) -> OpWork:
    """index_select / embedding: 1 kernel; reads the gathered rows and the indices only. A rank-0 index known at
    load time is PyTorch's ``x[:, i]`` (aten::select): a view, 0 kernels; its consumer reads the strided slice
    (measured on the H200: Mamba's reference scan selects a time step per iteration and launches no kernel for it).
    Ignores a consumer that must copy the view to contiguous memory first."""
    idx = ctx.node.inputs[1] if ctx.n_inputs > 1 else None
    if idx is not None and idx.shape == () and ctx.const(1) is not None:
        return ctx.free_view()
    if ctx.node.attrs.get(STRIDED_GATHER):  # an exported as_strided view (predictor/slice_assign.py): one copy
        gathered = ctx.out_bytes()
        return with_input_reads(ctx.work(bytes_read=gathered, notes=(NOTE_STRIDED_GATHER,)),
                                input_reads(ctx, {0: gathered, 1: 0.0}))
    return _gather_work(ctx)


@register("GatherElements", "GatherND", cls="copy")
def gather_elements(ctx: OpContext) -> OpWork:
    """torch.gather / advanced indexing: 1 kernel; reads the gathered elements and the indices."""
    return _gather_work(ctx)


NOTE_SLICE_ASSIGN = "slice assignment: one copy into a view (the exported index grid is not built)"
NOTE_STRIDED_GATHER = "a strided view (as_strided) copied: the exported index grid is not built or read"


@register("ScatterND", "ScatterElements", cls="copy")
@register("Scatter", cls="elementwise")  # the opset-9 name of ScatterElements, classed apart
def scatter(ctx: OpContext) -> OpWork:
    """clone(data) then scatter/index_put_ of the updates: 2 kernels.

    clone reads data and writes the output; the scatter reads indices + updates and writes
    updates-many elements. ``reduction`` (add/mul/max/min): 1 FLOP per update. A ScatterND marked SLICE_ASSIGN
    (an exported ``x[..., a:b] = y``) is one copy kernel reading and writing the updates.
    """
    if ctx.node.attrs.get(SLICE_ASSIGN):  # PyTorch's x[..., a:b] = y (predictor/slice_assign.py): one copy_
        upd_b = ctx.in_bytes(2)
        return ctx.work(bytes_read=upd_b, bytes_written=upd_b, notes=(NOTE_SLICE_ASSIGN,))
    data_b = ctx.in_bytes(0)
    idx_b, upd_b = ctx.in_bytes(1), ctx.in_bytes(2)
    reduction = str_attr(ctx, "reduction", "none")
    flops = ctx.in_numel(2) if reduction != "none" else 0
    return work_plan(ctx, [(data_b, ctx.out_bytes()), (idx_b + upd_b, upd_b)], vector_flops=flops)


def transpose_is_view(shape: tuple[int, ...], perm: tuple[int, ...]) -> bool:
    """A permutation that keeps the order of the non-1 dims moves no data."""
    moved = [p for p in perm if shape[p] != 1]
    return moved == sorted(moved)


@register("Transpose", cls="copy", view="transpose")
def transpose(ctx: OpContext) -> OpWork:
    """permute + contiguous: 1 copy kernel; free when only size-1 dims move."""
    shape = ctx.in_shape(0)
    perm = tuple(attr(ctx, "perm", None) or range(len(shape) - 1, -1, -1))
    if host_constant(ctx) or transpose_is_view(shape, perm):
        return ctx.free_view()
    return ctx.work()


@register("Pad", cls="copy")
def pad(ctx: OpContext) -> OpWork:
    """constant: fill (writes Y) + copy of X into it (2 kernels); reflect/edge/wrap: 1 kernel.

    NB: ``wrap`` (circular) is several copies in PyTorch; counted as one.
    """
    mode = str_attr(ctx, "mode", "constant")
    if mode != "constant":
        return ctx.work()
    x_b = ctx.in_bytes(0)
    others = inputs_bytes(ctx, range(1, ctx.n_inputs))
    return work_plan(ctx, [(others, ctx.out_bytes()), (x_b, x_b)])


@register("Tile", cls="copy")
def tile(ctx: OpContext) -> OpWork:
    """torch.repeat: 1 kernel, reads X once, writes the output."""
    if host_constant(ctx):
        return ctx.free_view()
    return ctx.work()


@register("Expand", cls="copy")
def expand(ctx: OpContext) -> OpWork:
    """1 copy kernel reading X once (NB: a stride-0 view in PyTorch); free if the shape is unchanged."""
    if host_constant(ctx) or ctx.out_shape() == ctx.in_shape(0):
        return ctx.free_view()
    return ctx.work()


@register("DepthToSpace", "SpaceToDepth", cls="copy")
def depth_to_space(ctx: OpContext) -> OpWork:
    """reshape + permute + reshape (pixel_shuffle): 1 copy kernel, compulsory bytes."""
    return ctx.work()


@register("Col2Im", cls="copy")
def col2im(ctx: OpContext) -> OpWork:
    """torch.nn.functional.fold: 1 kernel over the batch (PyTorch's col2im_batched), each output element summing
    the column entries that land on it: reads the columns once, writes the image, 1 add per column entry. Ignores
    the copy PyTorch makes first of non-contiguous columns."""
    return ctx.work(bytes_read=ctx.in_bytes(0), vector_flops=ctx.in_numel(0))


SCAN_BLOCK_THREADS = 512  # threads of a block of PyTorch's scan kernels (ATen/native/cuda/ScanUtils.cuh)
SCAN_BLOCKS_PER_SM = 32  # resident blocks an SM holds: a narrow outer scan's blocks of a few threads stop here
SCAN_CHUNK_STEPS = 2  # steps of an innermost scan's chunk beyond its log2(threads_x) tree levels (chosen on the H100's
# cumsum calls of microbenchmark run 14 with a 0.2 us step: 2 -> 39% MAPE on the 42 innermost calls, 1 -> 39%, 4 -> 44%,
# twice the levels + 2 -> 64%)


def scan_threads_x_log2(rows: int, row_size: int) -> int:
    """log2 of the threads along a row of PyTorch's innermost scan (get_log_num_threads_x_inner_scan, ScanUtils.cuh),
    its unsigned wrap-around included: rows far more numerous than their length (9 + diff < 0) take 512 threads
    across, one row per block."""
    lx, ly = (max(row_size, 1) - 1).bit_length(), (max(rows, 1) - 1).bit_length()
    diff = lx - ly
    log_x = (9 + diff) // 2 if 9 + diff >= 0 else 9
    return min(max(log_x, 4), 9)


def torch_scan_loop(shape: tuple[int, ...], axis: int, elt_bytes: int) -> tuple[int, int, int, int] | None:
    """``thread_loop`` (iterations, threads, threads per SM, bytes looped over) of PyTorch's scan along ``axis`` of a
    contiguous ``shape`` (scan_dim, ATen/native/cuda/ScanUtils.cuh). Not the innermost axis (tensor_kernel_scan_
    outer_dim): one thread per (outer, inner) position walks the scanned axis, one dependent load, add and store an
    iteration, in blocks of min(512, inner) threads. The innermost axis (tensor_kernel_scan_innermost_dim): blocks of
    512 threads, threads_x = 2^scan_threads_x_log2 along a row and 512 / threads_x rows, step through the row in chunks
    of 2 x threads_x elements, each an up- and down-sweep in shared memory (log2(threads_x) + SCAN_CHUNK_STEPS steps
    counted). None for a 1-D scan (one CUB device scan) or nothing to scan. Bytes looped over: input and output.
    Ignores: a scan kernel's exact barrier count, a reverse or exclusive scan's extra kernels (their passes)."""
    if not shape or not 0 <= axis < len(shape):
        return None
    scan, outer, inner = shape[axis], prod(shape[:axis]), prod(shape[axis + 1:])
    numel = scan * outer * inner
    if scan <= 1 or numel == scan:
        return None
    looped = 2 * numel * elt_bytes
    if inner > 1:
        block = min(SCAN_BLOCK_THREADS, inner)
        return (scan, outer * inner, min(REDUCE_THREADS_PER_SM, SCAN_BLOCKS_PER_SM * block), looped)
    log_x = scan_threads_x_log2(outer, scan)
    rows_per_block = SCAN_BLOCK_THREADS >> log_x
    blocks = -(-outer // rows_per_block)
    chunks = -(-scan // (2 << log_x))
    return (chunks * (log_x + SCAN_CHUNK_STEPS), blocks * SCAN_BLOCK_THREADS, REDUCE_THREADS_PER_SM, looped)


@register("CumSum", cls="reduce", autocast="fp32")
@register("CumProd", cls="reduce")
def cumulative(ctx: OpContext) -> OpWork:
    """1 FLOP per element; 1 scan kernel, + flip before and after when ``reverse``, + a subtract
    (divide for CumProd) when ``exclusive``. Class ``reduce``: the scan's loop of dependent steps
    (:func:`torch_scan_loop`, ``thread_loop``) costs the class's ``row_s`` a step, as a reduction's loop does (an outer
    scan of 32,768 rows: ~5 ms on the H100 where its 2 MB take 2 us)."""
    x_b = ctx.in_bytes(0)
    o_b = ctx.out_bytes()
    numel = ctx.in_numel(0)
    passes = [(ctx.all_in_bytes(), o_b)]
    flops = numel
    if int(attr(ctx, "exclusive", 0)):
        passes.append((x_b + o_b, o_b))
        flops += numel
    if int(attr(ctx, "reverse", 0)):
        passes = [(x_b, x_b)] + passes + [(o_b, o_b)]
    work = work_plan(ctx, passes, vector_flops=flops)
    axis = ctx.const(1)
    shape = ctx.in_shape(0)
    if axis is None or len(axis) != 1 or not shape:
        return work
    loop = torch_scan_loop(tuple(shape), norm_axis(int(axis[0]), len(shape)), x_b // max(numel, 1))
    return work if loop is None else replace(work, thread_loop=loop)


@register("Range", cls="copy")
def range_(ctx: OpContext) -> OpWork:
    """torch.arange: 1 kernel, start + i * delta = one FMA (2 FLOPs) per element; the scalar
    inputs are read on the host (0 bytes read)."""
    work = ctx.work(vector_flops=2 * ctx.out_numel(), bytes_read=0)
    return with_input_reads(work, {})


@register("Trilu", cls="copy")
def trilu(ctx: OpContext) -> OpWork:
    """tril/triu: 1 kernel, one compare-select per element, compulsory bytes."""
    return ctx.work(vector_flops=ctx.out_numel())


@register("OneHot", cls="copy")
def one_hot(ctx: OpContext) -> OpWork:
    """F.one_hot: min and max checks on the indices (host sync), zeros, scatter: 4 kernels."""
    idx_b = ctx.in_bytes(0)
    n_idx = ctx.in_numel(0)
    o_b = ctx.out_bytes()
    o_e = ctx.policy.dtype_bytes(ctx.output(0).dtype)
    passes = [(idx_b, 0), (idx_b, 0), (0, o_b), (idx_b, n_idx * o_e)]
    return work_plan(ctx, passes, vector_flops=2 * n_idx, reads={0: 3 * idx_b})


@register("NonZero", cls="copy")
def non_zero(ctx: OpContext) -> OpWork:
    """torch.nonzero: count, select, transpose (3 kernels, plus a device->host sync).

    The output size depends on the data; when shape inference cannot give it, the upper bound
    (every element non-zero: rank * numel int64) is used.
    """
    x_shape = ctx.in_shape(0)
    numel = prod(x_shape)
    try:
        o_b = ctx.out_bytes()
        note: tuple[str, ...] = ()
    except ShapeUnknown:
        o_b = len(x_shape) * numel * INT64_BYTES
        note = ("output size unknown: upper bound (all non-zero)",)
    x_b = ctx.in_bytes(0)
    return work_plan(ctx, [(x_b, 0), (x_b, o_b), (o_b, o_b)], vector_flops=numel, notes=note, reads={0: 2 * x_b})


@register("TopK", cls="reduce")
def top_k(ctx: OpContext) -> OpWork:
    """torch.topk: radix select (1 compare per element, reads X once, writes values and indices)
    + an in-place sort of the k results when ``sorted`` and k > 1: 1-2 kernels.
    NB: radix select makes several passes over each slice,
    served from cache for typical slice sizes."""
    k = ctx.out_shape(0)[norm_axis_of(ctx)]
    flops = ctx.in_numel(0)
    if int(attr(ctx, "sorted", 1)) and k > 1:
        o_b = ctx.all_out_bytes()
        return work_plan(ctx, [(ctx.all_in_bytes(), o_b), (o_b, o_b)], vector_flops=flops)
    return ctx.work(vector_flops=flops)


def norm_axis_of(ctx: OpContext) -> int:
    axis = int(attr(ctx, "axis", -1))
    return axis + len(ctx.in_shape(0)) if axis < 0 else axis
