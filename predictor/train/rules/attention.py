"""Fused attention backward (flash / memory-efficient SDPA backward), for graph/runtime.py's fused
scaled-dot-product attention and the opset-23 Attention op.

The backward recomputes the scores (Q K^T) and runs four more products (dV = P^T dO, dP = dO V^T,
dQ = dS K, dK = dS^T Q): 5 GEMMs against the forward's 2, so MATMUL = 2.5 x the forward's, and VECTOR =
2 x the forward's (the softmax is recomputed and dS = P (dP - D) formed). Kernels: a preprocessing pass
D = rowsum(dO * O), the main kernel, and at 16 bits the conversion of the fp32 dQ accumulator (flash
attention's ``convert_dq``): 3 kernels (2 at fp32, memory-efficient attention). SDPA saves q, k, v, the
output and the row log-sum-exp (fp32, one per query row and head). The main kernel is timed as the forward's
attention kernel is (op type ``Attention``: the ``attention`` class at the step's precision, its tiles and causal
mask), not as a GEMM: at fp32/tf32 PyTorch's memory-efficient kernels run both directions on CUDA cores (BERT-base's
training step at tf32, batch 32: fmha_cutlassF_f32 79 us and fmha_cutlassB_f32 188 us a layer on the H200, 2.4x;
calibration/data/h200/training/step_kernels). Ignores: the backward's own tiling (blocks own key tiles and loop over
the queries), and dropout's random numbers inside the kernel (a training forward's dropout_p).
"""
from __future__ import annotations

from dataclasses import replace

from ...types import WorkKind
from ..registry import backward

MATMUL_FACTOR = 2.5
VECTOR_FACTOR = 2.0


@backward("FusedAttention", "Attention", "MultiHeadAttention", diff=(0, 1, 2))
def attention(ctx):
    q, k, v = ctx.input(0), ctx.input(1), ctx.input(2)
    o, go = ctx.output(0), ctx.grad_out(0)
    mask = ctx.input(3) if ctx.has_input(3) else None
    qs = ctx.shape(q)
    rows = qs[:-1]  # [B, H, Sq] (4-D q) or [B, Sq] (3-D)
    lse = ctx.internal("logsumexp", "float32", rows)
    ctx.save(q, k, v, o, mask)
    delta = ctx.temp("delta", dtype="float32", shape=rows)
    grads = tuple(ctx.grad_in(i) for i in (0, 1, 2) if ctx.needs_grad(i))
    mm = MATMUL_FACTOR * ctx.work.flops.get(WorkKind.MATMUL, 0.0)
    vec = VECTOR_FACTOR * ctx.work.flops.get(WorkKind.VECTOR, 0.0)
    out = [ctx.kernel("bwd_pre", (o, go), (delta,), op_type="ReduceSum", vector=2 * ctx.numel(o))]
    wide = ctx.policy.dtype_bytes(q.dtype) < 4 and ctx.needs_grad(0)
    if wide:  # flash attention accumulates dQ in fp32, then converts it
        acc = ctx.temp("dq_accum", q, dtype="float32")
        main_writes = (acc,) + tuple(g for g in grads if g.name != ctx.grad_in(0).name)
        out.append(_as_attention(ctx, ctx.kernel("bwd", (q, k, v, go, lse, delta, mask), main_writes, matmul=mm,
                                                 vector=vec, op_type="Attention")))
        out.append(ctx.kernel("bwd_dq", (acc,), (ctx.grad_in(0),)))
    else:
        out.append(_as_attention(ctx, ctx.kernel("bwd", (q, k, v, go, lse, delta, mask), grads, matmul=mm,
                                                 vector=vec, op_type="Attention")))
    return out


def _as_attention(ctx, kernel):
    """The main backward kernel with the forward's attention tiles and causal flag (the attention class's wave model)."""
    work = replace(kernel.work, attention_tiles=ctx.work.attention_tiles, attention_causal=ctx.work.attention_causal)
    return replace(kernel, work=work)
