"""Data-movement backward (slices, gathers, copies).

    Transpose        1 copy kernel (the gradient permuted back)
    Slice            2 kernels: zeros of the input's shape, copy of dY into the slice (slice_backward)
    Split            1 kernel: cat of the output gradients (+1 zero fill per output without one)
    Concat           no kernel: each input's gradient is a slice (view) of dY
    Expand / Tile    1 reduction kernel summing dY over the repeated dims
    Pad              1 copy kernel (the interior of dY)
    Gather           index_select / embedding backward: zeros of the data's shape + scatter-add of dY's rows
                     (2 kernels; PyTorch's embedding_dense_backward sorts the indices first when there are
                     more than 3072 of them: 6 more small kernels on the indices)
    GatherElements / GatherND   zeros + scatter_add (2 kernels)
    ScatterND / ScatterElements data: dY with the scattered positions zeroed (clone + index fill, 2 kernels);
                     updates: a gather of dY (1 kernel)
    DepthToSpace / SpaceToDepth 1 copy kernel
    Col2Im           1 kernel: im2col of dY (the gradient of fold is unfold)
Indices are saved (they are graph inputs or small).
"""
from __future__ import annotations

from ..registry import backward

EMBEDDING_SORT_THRESHOLD = 3072  # PyTorch Embedding.cu: num_indices <= 3072 skips the sort path
EMBEDDING_SORT_KERNELS = 6


def _copy(ctx):
    return [ctx.kernel("bwd", (ctx.grad_out(0),), (ctx.grad_in(0),))]


backward("Transpose", "DepthToSpace", "SpaceToDepth", "Col2Im", diff=(0,))(_copy)


@backward("Pad", diff=(0,))
def pad(ctx):
    return [ctx.kernel("bwd", (ctx.grad_out(0),), (ctx.grad_in(0),), times={ctx.grad_out(0).name:
            ctx.numel(ctx.input(0)) / max(ctx.numel(ctx.output(0)), 1)})]


@backward("Slice", diff=(0,))
def slice_(ctx):
    gx = ctx.grad_in(0)
    return [ctx.kernel("zero", (), (gx,)),
            ctx.kernel("bwd", (ctx.grad_out(0),), (gx,), times={gx.name: ctx.numel(ctx.output(0)) / max(ctx.numel(gx), 1)})]


@backward("Split", diff=(0,))
def split(ctx):
    grads = [g for g in ctx.grad_outs if g is not None]
    missing = sum(1 for t, g in zip(ctx.node.outputs, ctx.grad_outs) if t.name and g is None)
    return [ctx.kernel("bwd", grads, (ctx.grad_in(0),), kernels=1 + missing)]


@backward("Concat")
def concat(ctx):
    for i in range(len(ctx.node.inputs)):
        if ctx.needs_grad(i):
            ctx.passthrough(i)
    return []


@backward("Expand", "Tile", diff=(0,))
def expand(ctx):
    g = ctx.grad_out(0)
    return [ctx.kernel("bwd", (g,), (ctx.grad_in(0),), op_type="ReduceSum", vector=ctx.numel(g))]


@backward("Gather", diff=(0,))
def gather(ctx):
    gy, idx = ctx.grad_out(0), ctx.input(1)
    gx = ctx.grad_in(0)
    ctx.save(idx)
    out = [ctx.kernel("zero", (), (gx,))]
    n_idx = ctx.numel(idx)
    if n_idx > EMBEDDING_SORT_THRESHOLD:
        sorted_idx = ctx.temp("sorted_indices", idx)
        out.append(ctx.kernel("sort", (idx,), (sorted_idx,), kernels=EMBEDDING_SORT_KERNELS,
                              times={idx.name: 4.0, sorted_idx.name: 4.0}))
        idx = sorted_idx
    # scatter-add of dY's rows: read dY and the indices, read-modify-write the touched rows of dX
    touched = ctx.numel(gy) / max(ctx.numel(gx), 1)
    out.append(ctx.kernel("scatter_add", (gy, idx, gx), (gx,), vector=ctx.numel(gy),
                          times={gx.name: touched}))
    return out


@backward("GatherElements", "GatherND", diff=(0,))
def gather_elements(ctx):
    gy, idx = ctx.grad_out(0), ctx.input(1)
    gx = ctx.grad_in(0)
    ctx.save(idx)
    touched = ctx.numel(gy) / max(ctx.numel(gx), 1)
    return [ctx.kernel("zero", (), (gx,)),
            ctx.kernel("scatter_add", (gy, idx, gx), (gx,), vector=ctx.numel(gy), times={gx.name: touched})]


@backward("ScatterND", "ScatterElements", "Scatter", diff=(0, 2))
def scatter(ctx):
    gy, idx = ctx.grad_out(0), ctx.input(1)
    ctx.save(idx)
    out = []
    if ctx.needs_grad(0):
        gx = ctx.grad_in(0)
        out += [ctx.kernel("clone", (gy,), (gx,)), ctx.kernel("fill", (idx,), (gx,),
                times={gx.name: ctx.numel(ctx.input(2)) / max(ctx.numel(gx), 1)})]
    if ctx.needs_grad(2):
        out.append(ctx.kernel("gather", (gy, idx), (ctx.grad_in(2),),
                              times={gy.name: ctx.numel(ctx.input(2)) / max(ctx.numel(gy), 1)}))
    return out
