"""Convolutions: Conv, ConvTranspose (1-D/2-D/3-D, groups, depthwise), ConvInteger, QLinearConv.

Strides, dilations and pads enter through the inferred output shape, so the formulas need no
attribute arithmetic:

    Conv           FLOPs = 2 * N * Cout * prod(out_spatial) * (Cin/groups) * prod(kernel)
                         = 2 * out_numel * prod(W.shape[1:])          (W: [Cout, Cin/groups, k...])
    ConvTranspose  FLOPs = 2 * N * Cin * prod(in_spatial) * (Cout/groups) * prod(kernel)
                         = 2 * in_numel * prod(W.shape[1:])           (W: [Cin, Cout/groups, k...])
    bias           1 add per output element (VECTOR)

Reference runtime (PyTorch eager, ``at::_convolution``): the cuDNN path runs the convolution, then
``output.add_(bias)`` as a *separate* elementwise kernel. So a Conv with bias is 2 kernels, and the
bias pass reads and writes the output once more. Depthwise convolutions (groups == Cin > 1, one input
channel per group) go to PyTorch's own depthwise kernels, which fuse the bias (1 kernel) and run on
CUDA cores: their FLOPs are VECTOR work, not MATMUL. So are those of a grouped convolution with a large kernel
(graph/opclass.LARGE_GROUPED: the speech transformers' 128-tap positional convolution), which cuDNN runs as
CUDA-core kernels, one per group.

``OpWork.gemm`` is the implicit GEMM per group (batch = groups):
    Conv           M = N * prod(out_spatial), N = Cout/groups, K = Cin/groups * prod(kernel)
    ConvTranspose  M = N * prod(in_spatial),  N = Cout/groups * prod(kernel), K = Cin/groups
and its operands are X and W (``gemm_operand_bytes``).

NB: fp16/bf16 NCHW convolutions run between ``nchwToNhwc``/``nhwcToNchw`` layout kernels in cuDNN
(seen on the H200); those layout kernels are not counted here (a note on the OpWork says so).
NB: implicit-GEMM kernels execute more tensor FLOPs than the algorithmic count (channel and tile
padding); the count here is the algorithmic one.
NB: PyTorch picks cuDNN for fp16 depthwise convs of some shapes (then bias is a separate kernel);
the depthwise rule here ignores that.
A depthwise convolution's ``rows`` are its outputs (on NCHW input): PyTorch's kernel gives each output a thread that
loops over the taps, and its time grows with the outputs before the taps or the bytes (kernel tables, batch 32:
~7 ps an output for 1x1 depthwise, ~10 for 3x3, ~12 for 1-D k = 3..9 at fp32 and bf16 alike on the H200 and H100):
the class's ``row_s`` holds that cost per output per SM. Channels-last input runs cuDNN's NHWC kernels (class
depthwise_nhwc, graph/opclass.py): no rows.
"""
from __future__ import annotations

from ...types import OpWork
from ..context import OpContext
from ..fused import channels_last
from ..opclass import is_large_grouped
from ._common import attr, prod, register

NOTE_BIAS_KERNEL = "bias added by a separate kernel (PyTorch cuDNN path)"
NOTE_LAYOUT = "fp16/bf16 NCHW: cuDNN layout-transform kernels not counted"
NOTE_DEPTHWISE = "depthwise: PyTorch native kernel on CUDA cores, bias fused"
NOTE_GROUPED_LARGE = "grouped, large kernel: cuDNN CUDA-core kernels, one per group"


def conv_flops(out_numel: int, w_shape: tuple[int, ...]) -> int:
    """2 * out_numel * (Cin/groups) * prod(kernel) for W of shape [Cout, Cin/groups, k...]."""
    return 2 * out_numel * prod(w_shape[1:])


def conv_transpose_flops(in_numel: int, w_shape: tuple[int, ...]) -> int:
    """2 * in_numel * (Cout/groups) * prod(kernel) for W of shape [Cin, Cout/groups, k...]."""
    return 2 * in_numel * prod(w_shape[1:])


def _is_depthwise(x_shape: tuple[int, ...], w_shape: tuple[int, ...], groups: int) -> bool:
    """PyTorch's ``is_depthwise``: 1-D/2-D/3-D, groups == Cin > 1, Cout a multiple of Cin."""
    cin = x_shape[1]
    return 3 <= len(x_shape) <= 5 and groups == cin > 1 and w_shape[1] == 1 and w_shape[0] % cin == 0


def _layout_note(ctx: OpContext, rank: int) -> tuple[str, ...]:
    return (NOTE_LAYOUT,) if ctx.policy.storage_bytes == 2 and rank >= 4 else ()


def conv_gemm(x_shape: tuple[int, ...], w_shape: tuple[int, ...], out_shape: tuple[int, ...],
              groups: int) -> tuple[int, int, int, int]:
    """(batch, M, N, K) of Conv's implicit GEMM: (groups, N*out_pixels, Cout/groups, Cin/groups*k)."""
    return (groups, out_shape[0] * prod(out_shape[2:]), w_shape[0] // groups, prod(w_shape[1:]))


def conv_transpose_gemm(x_shape: tuple[int, ...], w_shape: tuple[int, ...],
                        groups: int) -> tuple[int, int, int, int]:
    """(batch, M, N, K) of ConvTranspose: (groups, N*in_pixels, Cout/groups*k, Cin/groups)."""
    return (groups, x_shape[0] * prod(x_shape[2:]), prod(w_shape[1:]), w_shape[0] // groups)


@register("Conv", cls="conv", autocast="low")
def conv(ctx: OpContext) -> OpWork:
    """Conv: MATMUL 2*out*(Cin/g)*prod(k); +1 bias kernel (out read+write) unless depthwise."""
    x_shape, w_shape = ctx.in_shape(0), ctx.in_shape(1)
    out_numel = ctx.out_numel()
    flops = conv_flops(out_numel, w_shape)
    has_bias = ctx.has_input(2)
    bias_flops = out_numel if has_bias else 0
    groups = int(attr(ctx, "group", 1))
    if _is_depthwise(x_shape, w_shape, groups):
        rows = 0 if channels_last(ctx.node) else out_numel
        return ctx.work(vector_flops=flops + bias_flops, notes=(NOTE_DEPTHWISE,), rows=rows)
    if groups > 1 and is_large_grouped(w_shape):
        return _large_grouped(ctx, flops, bias_flops)
    gemm = conv_gemm(x_shape, w_shape, ctx.out_shape(), groups)
    return _with_bias_pass(ctx, flops, bias_flops, _layout_note(ctx, len(x_shape)), gemm,
                           ctx.in_bytes(0) + ctx.in_bytes(1))


@register("ConvTranspose", cls="conv", autocast="low")
def conv_transpose(ctx: OpContext) -> OpWork:
    """ConvTranspose: MATMUL 2*in*(Cout/g)*prod(k) (cuDNN dgrad kernel); +1 bias kernel."""
    x_shape, w_shape = ctx.in_shape(0), ctx.in_shape(1)
    flops = conv_transpose_flops(ctx.in_numel(0), w_shape)
    bias_flops = ctx.out_numel() if ctx.has_input(2) else 0
    gemm = conv_transpose_gemm(x_shape, w_shape, int(attr(ctx, "group", 1)))
    return _with_bias_pass(ctx, flops, bias_flops, _layout_note(ctx, len(x_shape)), gemm,
                           ctx.in_bytes(0) + ctx.in_bytes(1))


def _large_grouped(ctx: OpContext, flops: int, bias_flops: int) -> OpWork:
    """A grouped convolution with a large kernel (graph/opclass.LARGE_GROUPED): cuDNN's CUDA-core kernels (VECTOR
    work; their tiles and per-group waves are the timing features', timing/features.grouped_large_shape), plus the
    bias pass. Ignores the fixed costs of the one kernel per group cuDNN launches (small against these kernels'
    milliseconds) and that at tf32 it may pick tensor-core kernels."""
    if not bias_flops:
        return ctx.work(vector_flops=flops, notes=(NOTE_GROUPED_LARGE,))
    out_b = ctx.out_bytes()
    return ctx.work(vector_flops=flops + bias_flops, kernels=2, bytes_read=ctx.all_in_bytes() + out_b,
                    bytes_written=2 * out_b, notes=(NOTE_GROUPED_LARGE, NOTE_BIAS_KERNEL))


def _with_bias_pass(ctx: OpContext, flops: int, bias_flops: int, notes: tuple[str, ...],
                    gemm: tuple[int, int, int, int], operand_bytes: int) -> OpWork:
    if not bias_flops:
        return ctx.work(matmul_flops=flops, notes=notes, gemm=gemm,
                        gemm_operand_bytes=operand_bytes)
    out_b = ctx.out_bytes()
    # conv kernel: X and W, writes Y; bias kernel: reads Y and B, writes Y
    return ctx.work(matmul_flops=flops, vector_flops=bias_flops, kernels=2,
                    bytes_read=ctx.all_in_bytes() + out_b, bytes_written=2 * out_b,
                    notes=notes + (NOTE_BIAS_KERNEL,), gemm=gemm,
                    gemm_operand_bytes=operand_bytes)


@register("ConvInteger", cls="conv")
def conv_integer(ctx: OpContext) -> OpWork:
    """ConvInteger (x, w, x_zero_point, w_zero_point): the Conv count on the int8 path, 1 kernel."""
    x_shape, w_shape = ctx.in_shape(0), ctx.in_shape(1)
    flops = conv_flops(ctx.out_numel(), w_shape)
    gemm = conv_gemm(x_shape, w_shape, ctx.out_shape(), int(attr(ctx, "group", 1)))
    return ctx.work(matmul_flops=flops, gemm=gemm,
                    gemm_operand_bytes=ctx.in_bytes(0) + ctx.in_bytes(1))


@register("QLinearConv", cls="conv")
def qlinear_conv(ctx: OpContext) -> OpWork:
    """QLinearConv (x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, B): one fused int8 kernel.

    MATMUL as Conv; VECTOR 4 per output element for the epilogue: bias add + requantise
    (multiply by the combined scale, round, add the zero point).
    NB: no PyTorch eager equivalent; modelled as one fused kernel (cuDNN / TensorRT int8 style).
    """
    out_numel = ctx.out_numel()
    x_shape, w_shape = ctx.in_shape(0), ctx.in_shape(3)
    flops = conv_flops(out_numel, w_shape)
    gemm = conv_gemm(x_shape, w_shape, ctx.out_shape(), int(attr(ctx, "group", 1)))
    return ctx.work(matmul_flops=flops, vector_flops=4 * out_numel, gemm=gemm,
                    gemm_operand_bytes=ctx.in_bytes(0) + ctx.in_bytes(3))
