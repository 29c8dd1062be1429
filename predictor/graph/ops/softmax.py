"""Softmax, LogSoftmax, Hardmax along one axis.

FLOPs per element (the per-row log/reciprocal is negligible and not counted):

    Softmax     8   row max 1, subtract 1, exp 4, row sum 1, divide 1
    LogSoftmax  8   row max 1, subtract 1, exp 4, row sum 1, subtract log-sum 1
    Hardmax     2   row argmax 1 (compare), write the one-hot 1 (compare-select)

Softmax/LogSoftmax: PyTorch launches one kernel (persistent softmax for short rows, a block-per-row
kernel otherwise); the row is read once from memory (re-reads hit on-chip storage): compulsory bytes.
Opsets < 13 coerce the input to 2-D at ``axis``; the per-element count is the same.
Hardmax has no fused PyTorch op: argmax (reads X, writes int64 row indices), zeros (writes Y),
scatter (writes one element per row): 3 kernels.
"""
from __future__ import annotations

from ...types import OpWork
from ..context import OpContext
from ._common import INT64_BYTES, attr, norm_axis, out_elem_bytes, prod, register, work_plan

SOFTMAX_FLOPS = 8
HARDMAX_FLOPS = 2


def _rows(ctx: OpContext) -> int:
    """Rows the op reduces along: opset < 13 coerces to 2-D [prod(shape[:axis]), prod(shape[axis:])]."""
    shape = ctx.in_shape(0)
    axis = norm_axis(int(attr(ctx, "axis", -1)), len(shape))
    if ctx.opset < 13:
        return prod(shape[:axis])
    return ctx.in_numel(0) // shape[axis] if shape[axis] else 0


@register("Softmax", "LogSoftmax", cls="softmax", autocast="fp32")
def softmax(ctx: OpContext) -> OpWork:
    """8 FLOPs per element, 1 kernel, compulsory bytes; ``rows``: PyTorch's softmax gives each row a warp (rows
    up to 1024) or a block, so short rows cost per row (301056 rows of 49 take 42 us at fp16 on the H200)."""
    return ctx.work(vector_flops=SOFTMAX_FLOPS * ctx.in_numel(0), rows=_rows(ctx))


@register("Hardmax", cls="softmax")
def hardmax(ctx: OpContext) -> OpWork:
    """2 FLOPs per element; 3 kernels (argmax, zeros, scatter)."""
    rows = _rows(ctx)
    idx_b = rows * INT64_BYTES
    passes = [(ctx.in_bytes(0), idx_b), (0, ctx.out_bytes()), (idx_b, rows * out_elem_bytes(ctx))]
    return work_plan(ctx, passes, vector_flops=HARDMAX_FLOPS * ctx.in_numel(0))
