"""Weight-only quantised matrix products: MatMulNBits (com.microsoft; ONNX Runtime's 4-bit LLM weights) and
DynamicQuantizeLinear.

* MatMulNBits (A [..., K], B [N, blocks, blob] uint8 packed ``bits`` per weight, scales, zero_points?, g_idx?,
  bias?) -> [..., N], ``block_size`` weights per scale: MATMUL 2 M N K at the activations' precision;
  VECTOR 2 per weight to dequantise (subtract the zero point, scale). Bytes: A, the packed B as stored
  (N K bits / 8), scales and zero points, Y. Kernels: M = 1 (decode) one fused dequantise-GEMV kernel;
  M > 1 a dequantise kernel writing B at the activations' width, then the GEMM reading it (ONNX Runtime's CUDA
  path; NB: its exact M threshold for the fused kernel is not modelled, 1 is assumed).
* DynamicQuantizeLinear (x) -> y uint8, scale, zero point: a min/max reduction (2 per element) then the
  quantise kernel (5 per element, as QuantizeLinear): 2 kernels, x read twice.
"""
from __future__ import annotations

from ...types import OpWork
from ..context import OpContext
from ._common import attr, register, work_plan

MS = "com.microsoft"
DEQUANT_FLOPS = 2
QUANTIZE_FLOPS = 5


@register("MatMulNBits", cls="gemm", domain=MS)
def matmul_nbits(ctx: OpContext) -> OpWork:
    """2 M N K MATMUL + 2 N K dequantise; 1 kernel at M = 1, else 2 (dequantise + GEMM)."""
    a = ctx.in_shape(0)
    k = int(attr(ctx, "K", 0) or a[-1])
    n = int(attr(ctx, "N", 0) or ctx.out_shape()[-1])
    m = ctx.in_numel(0) // a[-1]
    packed = ctx.in_bytes(1)
    side = sum(ctx.in_bytes(i) for i in range(2, ctx.n_inputs) if ctx.has_input(i))
    mm = 2 * m * n * k
    deq = DEQUANT_FLOPS * n * k
    if m == 1:
        return ctx.work(matmul_flops=mm, vector_flops=deq, weight_bytes=packed + side)
    wide = n * k * ctx.policy.dtype_bytes(ctx.input(0).dtype)
    w = work_plan(ctx, [(packed + side, wide), (ctx.in_bytes(0) + wide, ctx.out_bytes())], matmul_flops=mm,
                  vector_flops=deq)
    from dataclasses import replace

    return replace(w, gemm=(1, m, n, k), gemm_operand_bytes=ctx.in_bytes(0) + wide)


@register("DynamicQuantizeLinear", cls="elementwise")
def dynamic_quantize_linear(ctx: OpContext) -> OpWork:
    """min/max (2 per element) + quantise (5 per element): 2 kernels, x read twice."""
    x = ctx.in_bytes(0)
    numel = ctx.in_numel(0)
    return work_plan(ctx, [(x, 8), (x + 8, ctx.all_out_bytes())], vector_flops=(2 + QUANTIZE_FLOPS) * numel)
