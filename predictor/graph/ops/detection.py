"""Sampling and detection ops of detection, segmentation and flow networks: GridSample, RoiAlign,
NonMaxSuppression, DeformConv.

FLOP conventions (an FMA is 2; a bilinear tap is one FMA of a weight and a sample):

* GridSample (X [N, C, *in], grid [N, *out, r]) -> Y [N, C, *out]: per output element 2 FLOPs per tap
  (taps: nearest 1, linear 2**r, cubic 4**r); per grid point ``GRID_COORD_FLOPS`` = 7 per coordinate
  (unnormalise FMA 2, floor 1, fraction 1, 1 - fraction 1, bounds 2), shared by the C channels.
  PyTorch's ``grid_sampler_2d/3d`` kernel: 1 kernel, compulsory bytes (NB: X is gathered; a tap re-read
  hits the caches, so X counts once).
* RoiAlign (X [N, C, H, W], rois [R, 4], batch_indices [R]) -> Y [R, C, oh, ow]: per output element
  ``s * s`` bilinear samples (4 taps: 8 FLOPs, + 1 accumulate) + 1 (average or max), s = sampling_ratio, or
  ``ADAPTIVE_SAMPLES`` = 2 when 0 (the adaptive ratio ceil(roi / output) depends on the boxes: data).
  torchvision's ``roi_align`` kernel: 1 kernel; X read at most once (the samples, when fewer).
* NonMaxSuppression (boxes [B, N, 4], scores [B, C, N]): per (batch, class) a sort of N scores
  (N log2 N compares) and the IoU of every pair ``IOU_FLOPS`` = 15 each (4 min/max, 2 sub, 2 clamp, area
  product 1, union 2, divide 1, compare 1, + 2 areas amortised) over N (N - 1) / 2 pairs, the worst case
  (torchvision's ``nms`` computes the whole pair bitmask). Kernels: sort, IoU mask, select, gather = 4.
  Bytes: boxes and scores read, the N x N bit mask written and read, the selected indices written (NB:
  their count is data: bounded by max_output_boxes_per_class x B x C when that is known, else not counted).
* DeformConv (X, W [Cout, Cin/g, k...], offset, B?, mask?) -> Y: torchvision's ``deform_conv2d``:
  deformable im2col (per column element, N * Cin * prod(k) * prod(out): a bilinear sample 8 FLOPs, + 1 for
  the mask) writing the column matrix, then one GEMM per group, 2 * N * Cout * prod(out) * Cin/g * prod(k),
  reading it back, + 1 kernel for the bias. NB: torchvision splits batches above 64 images into chunks
  (more, smaller kernels): not modelled.
"""
from __future__ import annotations

import math

from ...types import OpWork
from ..context import OpContext
from ._common import INT64_BYTES, attr, in_elem_bytes, out_elem_bytes, prod, register, str_attr, work_plan

GRID_COORD_FLOPS = 7
ADAPTIVE_SAMPLES = 2
IOU_FLOPS = 15
BILINEAR_FLOPS = 8


def _taps(mode: str, rank: int) -> int:
    if mode == "nearest":
        return 1
    if mode in ("cubic", "bicubic"):
        return 4 ** rank
    return 2 ** rank


@register("GridSample", cls="elementwise")
def grid_sample(ctx: OpContext) -> OpWork:
    """2 FLOPs per tap per output element + 7 per coordinate per grid point; 1 kernel."""
    y = ctx.out_shape()
    rank = len(y) - 2
    grid_points = y[0] * prod(y[2:])
    per = 2 * _taps(str_attr(ctx, "mode", "linear"), rank)
    return ctx.work(vector_flops=per * ctx.out_numel() + GRID_COORD_FLOPS * rank * grid_points)


@register("RoiAlign", cls="elementwise")
def roi_align(ctx: OpContext) -> OpWork:
    """(9 s^2 + 1) FLOPs per output element; 1 kernel; X read once at most."""
    s = int(attr(ctx, "sampling_ratio", 0) or 0) or ADAPTIVE_SAMPLES
    out = ctx.out_numel()
    samples_bytes = out * s * s * 4 * in_elem_bytes(ctx, 0)
    x_read = min(ctx.in_bytes(0), samples_bytes)
    others = ctx.in_bytes(1) + ctx.in_bytes(2)
    return ctx.work(vector_flops=(s * s * (BILINEAR_FLOPS + 1) + 1) * out, bytes_read=x_read + others)


@register("NonMaxSuppression", cls="elementwise")
def non_max_suppression(ctx: OpContext) -> OpWork:
    """Sort + all-pairs IoU per (batch, class): B C (N log2 N + 15 N (N-1)/2) FLOPs; 4 kernels."""
    b, n, _ = ctx.in_shape(0)
    c = ctx.in_shape(1)[1]
    sort = n * max(1.0, math.log2(max(n, 2)))
    flops = b * c * (sort + IOU_FLOPS * n * (n - 1) / 2)
    mask_bytes = b * c * n * math.ceil(n / 64) * 8
    cap = ctx.const(2)
    out_bytes = int(cap[0]) * b * c * 3 * INT64_BYTES if cap else 0
    read = ctx.in_bytes(0) + ctx.in_bytes(1)
    return work_plan(ctx, [(ctx.in_bytes(1), ctx.in_bytes(1)), (ctx.in_bytes(0) + ctx.in_bytes(1), mask_bytes),
                           (mask_bytes, b * c * n), (read, out_bytes)], vector_flops=flops)


@register("DeformConv", cls="elementwise")
def deform_conv(ctx: OpContext) -> OpWork:
    """Deformable im2col (8 FLOPs per column element, + 1 with a mask) + grouped GEMM (+ bias): 2-3 kernels."""
    x, w, y = ctx.in_shape(0), ctx.in_shape(1), ctx.out_shape()
    n, cin = x[0], x[1]
    cout, k = w[0], prod(w[2:])
    out_pixels = prod(y[2:])
    group = int(attr(ctx, "group", 1) or 1)
    cols = n * cin * k * out_pixels
    e = out_elem_bytes(ctx, 0)
    col_bytes = cols * e
    masked = ctx.has_input(4)
    im2col_read = ctx.in_bytes(0) + ctx.in_bytes(2) + (ctx.in_bytes(4) if masked else 0)
    gemm_flops = 2 * n * cout * out_pixels * (cin // group) * k
    passes = [(im2col_read, col_bytes), (col_bytes + ctx.in_bytes(1), ctx.out_bytes())]
    if ctx.has_input(3):
        passes.append((ctx.out_bytes() + ctx.in_bytes(3), ctx.out_bytes()))
    return work_plan(ctx, passes, matmul_flops=gemm_flops, vector_flops=(BILINEAR_FLOPS + masked) * cols)
