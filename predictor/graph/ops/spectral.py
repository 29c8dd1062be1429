"""Spectral ops of audio front ends: DFT, STFT and the window generators.

FLOP convention of a Fourier transform of length n: ``5 n log2 n`` for a complex input (the radix-2 count
that FFTW and cuFFT benchmarks quote), half of it for a real input (``onesided`` or a real signal).
PyTorch runs them through cuFFT: one kernel per transform batch for the lengths of audio front ends
(NB: large or non-power-of-two lengths take 2-3 cuFFT kernels: not modelled).

* DFT (input [..., n, 1|2] along ``axis``; opset 20 takes the axis as an input): transforms = numel / (n x
  last dim); n is ``dft_length`` when it is known, else the axis length. 1 kernel, compulsory bytes.
* STFT (signal [B, L, 1|2], frame_step, window?, frame_length?) -> [B, frames, bins, 2]: frames x a length-n
  transform, after the window multiply (n per frame, when a window is given: 1 kernel more); the signal is
  read once (frames are strided views).
* HannWindow, HammingWindow: a cosine per sample (4) + 2; BlackmanWindow: two cosines + 4 = 12. 1 kernel.
"""
from __future__ import annotations

import math

from ...types import OpWork
from ..context import OpContext
from ._common import TRANSCENDENTAL, attr, prod, register, work_plan


def fft_flops(n: int, complex_input: bool) -> float:
    """FLOPs of one length-n transform: 5 n log2 n (complex), half for a real input."""
    if n <= 1:
        return 0.0
    full = 5.0 * n * math.log2(n)
    return full if complex_input else full / 2


@register("DFT", cls="elementwise")
def dft(ctx: OpContext) -> OpWork:
    """transforms x fft_flops(n); 1 kernel."""
    x = ctx.in_shape(0)
    if ctx.opset >= 20 and ctx.has_input(2) and ctx.const(2):
        axis = int(ctx.const(2)[0])
    else:
        axis = int(attr(ctx, "axis", 1 if ctx.opset < 20 else -2))
    axis = axis + len(x) if axis < 0 else axis
    n = int(ctx.const(1)[0]) if ctx.has_input(1) and ctx.const(1) else x[axis]
    transforms = prod(x) // (x[axis] * x[-1])
    return ctx.work(vector_flops=transforms * fft_flops(n, x[-1] == 2))


@register("STFT", cls="elementwise")
def stft(ctx: OpContext) -> OpWork:
    """frames x (fft_flops(n) + n window multiplies); 1 kernel (+1 for the window)."""
    sig = ctx.in_shape(0)
    y = ctx.out_shape()
    frames = y[0] * y[1]
    n = (ctx.in_shape(2)[0] if ctx.has_input(2) else
         int(ctx.const(3)[0]) if ctx.has_input(3) and ctx.const(3) else 2 * (y[2] - 1))
    flops = frames * fft_flops(n, sig[-1] == 2)
    window = ctx.has_input(2)
    if not window:
        return ctx.work(vector_flops=flops)
    framed = frames * n * sig[-1] * ctx.policy.dtype_bytes(ctx.input(0).dtype)
    return work_plan(ctx, [(ctx.in_bytes(0) + ctx.in_bytes(2), framed), (framed, ctx.out_bytes())],
                     vector_flops=flops + frames * n)


@register("HannWindow", "HammingWindow", "BlackmanWindow", cls="elementwise")
def window(ctx: OpContext) -> OpWork:
    """A cosine (two for Blackman) per sample; 1 kernel writing the window."""
    per = 3 * TRANSCENDENTAL if ctx.node.op_type == "BlackmanWindow" else TRANSCENDENTAL + 2
    return ctx.work(vector_flops=per * ctx.out_numel(), bytes_read=0)
