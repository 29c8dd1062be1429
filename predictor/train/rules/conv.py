"""Convolution backward (cuDNN through ``convolution_backward``; depthwise through PyTorch's own kernels).

For Y = conv(X, W) with W [Cout, Cin/g, k...], both backward convolutions do the forward's multiply-adds:

    dgrad  dX = conv_transpose(dY, W)   FLOPs = forward FLOPs; implicit GEMM per group
                                        (g, N * prod(in_spatial), Cin/g, Cout/g * prod(k) / prod(stride))
                                        (a strided dgrad runs as stride-phase sub-convolutions, each with
                                        a window of about k/stride: the K side shrinks by the stride product)
    wgrad  dW = dY^T (x) im2col(X)      FLOPs = forward FLOPs; GEMM (g, Cout/g, Cin/g * prod(k), N * prod(out_spatial))
    bgrad  dB = sum of dY over N and the spatial dims: 1 reduction kernel

dgrad is skipped when X needs no gradient (the first convolution on the image), wgrad when W needs none.
ConvolutionBackward saves X and W. Depthwise (groups == Cin > 1): dgrad and wgrad are CUDA-core kernels
(VECTOR work) of op type DEPTHWISE_GRAD_OP, class ``depthwise_grad`` (PyTorch's own kernels, slower per FLOP than
the forward's cuDNN ones at large batch). ConvTranspose: its dgrad is a forward convolution of dY with W, wgrad as above with X and dY
swapped. NB: cuDNN algorithms that launch helper kernels (split-K reductions, FFT transforms) are counted
as one kernel each.
"""
from __future__ import annotations

from ...graph.opclass import DEPTHWISE_GRAD_OP
from ...graph.ops._common import prod
from ...graph.ops.conv import _is_depthwise
from ..registry import backward


def dgrad_gemm(x_shape, w_shape, strides, groups) -> tuple[int, int, int, int]:
    """(g, N * input pixels, Cin/g, Cout/g * prod(k) / prod(stride)) of Conv's data-gradient GEMM."""
    k = max(1, round(w_shape[0] // groups * prod(w_shape[2:]) / max(prod(strides), 1)))
    return (groups, x_shape[0] * prod(x_shape[2:]), x_shape[1] // groups, k)


def wgrad_gemm(w_shape, y_shape, groups) -> tuple[int, int, int, int]:
    """(g, Cout/g, Cin/g * prod(k), N * output pixels) of Conv's weight-gradient GEMM."""
    return (groups, w_shape[0] // groups, prod(w_shape[1:]), y_shape[0] * prod(y_shape[2:]))


def _strides(ctx, rank: int) -> tuple[int, ...]:
    s = ctx.attr("strides", None)
    return tuple(int(v) for v in s) if s else (1,) * rank


@backward("Conv", diff=(0, 1, 2))
def conv(ctx):
    x, w, y = ctx.input(0), ctx.input(1), ctx.output(0)
    gy = ctx.grad_out(0)
    xs, ws, ys = ctx.shape(x), ctx.shape(w), ctx.shape(y)
    groups = int(ctx.attr("group", 1) or 1)
    flops = 2 * ctx.numel(y) * prod(ws[1:])
    ctx.save(x, w)
    out = []
    depthwise = _is_depthwise(xs, ws, groups)
    if ctx.needs_grad(0):
        if depthwise:
            out.append(ctx.kernel("dgrad", (gy, w), (ctx.grad_in(0),), op_type=DEPTHWISE_GRAD_OP, vector=flops))
        else:
            out.append(ctx.kernel("dgrad", (gy, w), (ctx.grad_in(0),), matmul=flops,
                                  gemm=dgrad_gemm(xs, ws, _strides(ctx, len(xs) - 2), groups), operands=(gy, w)))
    if ctx.needs_grad(1):
        if depthwise:
            out.append(ctx.kernel("wgrad", (gy, x), (ctx.grad_in(1),), op_type=DEPTHWISE_GRAD_OP, vector=flops))
        else:
            out.append(ctx.kernel("wgrad", (gy, x), (ctx.grad_in(1),), matmul=flops,
                                  gemm=wgrad_gemm(ws, ys, groups), operands=(gy, x)))
    if ctx.has_input(2) and ctx.needs_grad(2):
        out.append(ctx.kernel("bgrad", (gy,), (ctx.grad_in(2),), op_type="ReduceSum", vector=ctx.numel(y)))
    return out


@backward("ConvTranspose", diff=(0, 1, 2))
def conv_transpose(ctx):
    x, w, y = ctx.input(0), ctx.input(1), ctx.output(0)
    gy = ctx.grad_out(0)
    xs, ws = ctx.shape(x), ctx.shape(w)
    groups = int(ctx.attr("group", 1) or 1)
    flops = 2 * ctx.numel(x) * prod(ws[1:])
    ctx.save(x, w)
    out = []
    if ctx.needs_grad(0):  # a forward convolution of dY with W
        out.append(ctx.kernel("dgrad", (gy, w), (ctx.grad_in(0),), matmul=flops,
                              gemm=(groups, xs[0] * prod(xs[2:]), xs[1] // groups, prod(ws[1:])), operands=(gy, w)))
    if ctx.needs_grad(1):
        out.append(ctx.kernel("wgrad", (x, gy), (ctx.grad_in(1),), matmul=flops,
                              gemm=(groups, ws[0] // groups, prod(ws[1:]), xs[0] * prod(xs[2:])), operands=(x, gy)))
    if ctx.has_input(2) and ctx.needs_grad(2):
        out.append(ctx.kernel("bgrad", (gy,), (ctx.grad_in(2),), op_type="ReduceSum", vector=ctx.numel(y)))
    return out
