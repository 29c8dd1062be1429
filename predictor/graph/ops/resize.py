"""Resize and Upsample (nearest, linear, cubic), per output element.

k = number of axes whose size changes (2 for a 2-D image resize). Per output element:

    nearest  0 FLOPs             (a gather: only index arithmetic)
    linear   2 * 2**k FLOPs      (one FMA per tap; bilinear: 4 taps -> 8, trilinear -> 16)
    cubic    2 * 4**k FLOPs      (one FMA per tap; bicubic: 16 taps -> 32)

The interpolation weights depend only on the output coordinate along each axis and are computed
once per row/column: not counted. One kernel (``upsample_nearest2d`` / ``upsample_bilinear2d`` /
``upsample_bicubic2d``); compulsory bytes (roi/scales/sizes are tiny).
NB: ``antialias=1`` (opset 18) widens the filter when downsampling; not counted.
"""
from __future__ import annotations

import math
from dataclasses import replace

from ...types import OpWork
from ..context import OpContext
from ._common import register, str_attr

TAPS_PER_AXIS = {"nearest": 0, "linear": 2, "bilinear": 2, "cubic": 4}


def resize_flops_per_output(mode: str, k: int) -> int:
    taps = TAPS_PER_AXIS.get(mode, 2)
    return 0 if taps == 0 else 2 * taps ** k


# a cubic plane iteration against a linear one: PyTorch's upsample_bicubic2d loop body reads and weights 16 taps with
# bounds-checked 64-bit indexing (bilinear: 4 with precomputed offsets). The H200 kernel tables put a bicubic plane at
# 0.6-4.7 us (depth_anything_small's same-size position-embedding resize 2.9 us, YOLOS-S's two 0.6 and 2.0 us,
# ViTMatte-S's 14 -> 32 4.7 us) where bilinear planes take 0.2-0.4 us at the same threads per SM: 3-23x, and 16
# near their geometric middle (what sets the spread is not modelled)
CUBIC_ITERATION = 16


@register("Resize", "Upsample", cls="resize")
def resize(ctx: OpContext) -> OpWork:
    """FLOPs by mode (see the module docstring); 1 kernel; compulsory bytes. A linear or cubic resize of an N x C x
    spatial tensor runs PyTorch's ``upsample_*_out_frame`` kernels: a thread per output pixel, each looping over the
    N x C planes (OpWork.thread_loop, a cubic plane counted as CUBIC_ITERATION linear ones), so a small output map with
    many channels is slow whatever its bytes (the H200 takes 6.3 ms for 32 x 1024 planes of 14 x 14), also when no
    size changes (the kernel still runs: a position-embedding table resized to its own grid). Nearest runs a thread
    per output element: no loop. Ignores: PyTorch's copy path for a same-size linear resize (costed as a loop)."""
    in_shape, out_shape = ctx.in_shape(0), ctx.out_shape()
    k = sum(1 for a, b in zip(in_shape, out_shape) if a != b)
    mode = str_attr(ctx, "mode", "nearest").lower()
    work = ctx.work(vector_flops=resize_flops_per_output(mode, k) * ctx.out_numel())
    taps = TAPS_PER_AXIS.get(mode, 2)
    if taps and len(out_shape) >= 3 and all(isinstance(d, int) for d in out_shape):
        planes, pixels = out_shape[0] * out_shape[1], math.prod(out_shape[2:])
        if planes > 0 and pixels > 0:
            weight = CUBIC_ITERATION if taps == TAPS_PER_AXIS["cubic"] else 1
            return replace(work, thread_loop=(int(planes) * weight, int(pixels)))
    return work
