"""Fused attention ops of opset 23+: Attention, RotaryEmbedding.

Attention (Q, K, V, attn_mask?, past_key?, past_value?; 4-D [B, H, S, D] or 3-D [B, S, H*D] with
``q_num_heads``/``kv_num_heads``), with ``scores = B * Hq * Sq * Skv`` (Skv includes the past):

    MATMUL  2 * scores * D  (Q K^T)  +  2 * scores * Dv  (P V)
    VECTOR  per score: softmax 8, scale 1, mask or causal select 1 (when present), softcap 6 (when set:
            divide, tanh 4, multiply)

PyTorch's reference is ``F.scaled_dot_product_attention``: one fused (flash / memory-efficient)
kernel that never writes the score matrix: compulsory bytes. With a KV cache, ``torch.cat`` builds
present_key and present_value first (2 kernels) and the attention kernel reads them back.
NB: a causal mask lets flash attention skip about half of the score tiles; the FLOP count here is the
full one (as ``torch.utils.flop_counter`` counts it), and the time model runs only the tiles on and below the
diagonal (OpWork.attention_causal, predictor/timing/features.attention_wave). NB: 3-D inputs need head reshapes/transposes in
PyTorch (copy kernels), not counted. GQA (Hkv < Hq) reads K/V once per KV head: compulsory.

RotaryEmbedding (X, cos_cache, sin_cache, position_ids?): per rotated element x1*cos - x2*sin (a
multiply and an FMA) = 3 FLOPs. The eager reference is the usual ``apply_rotary_pos_emb``:
x*cos, rotate_half (neg + cat), *sin, add: 5 kernels over the rotated part (+1 cat with the
pass-through part when ``rotary_embedding_dim`` < head size); cos/sin are read as gathered rows
(B * S * rot/2 each) when position_ids are given, else whole.
"""
from __future__ import annotations

from dataclasses import replace

from ...types import OpWork
from ..context import OpContext
from ._common import TANH, attr, in_elem_bytes, opt_in_bytes, register, work_plan
from .softmax import SOFTMAX_FLOPS


def attention_dims(ctx: OpContext) -> tuple[int, int, int, int, int, int]:
    """(B, Hq, Sq, Skv, D, Dv) of an Attention node (Skv includes past_key)."""
    q, k, v = ctx.in_shape(0), ctx.in_shape(1), ctx.in_shape(2)
    if len(q) == 4:
        b, hq, sq, d = q
        skv, dv = k[2], v[3]
    else:
        hq = int(attr(ctx, "q_num_heads", 1) or 1)
        hkv = int(attr(ctx, "kv_num_heads", 1) or 1)
        b, sq = q[0], q[1]
        d = q[2] // hq
        skv, dv = k[1], v[2] // hkv
    if ctx.has_input(4):
        skv += ctx.in_shape(4)[-2]
    return b, hq, sq, skv, d, dv


@register("Attention", cls="attention", autocast="low")
def attention(ctx: OpContext) -> OpWork:
    """Fused SDPA: MATMUL 2*scores*(D + Dv); VECTOR ~10 per score; 1 kernel (+2 KV-cache concats)."""
    b, hq, sq, skv, d, dv = attention_dims(ctx)
    scores = b * hq * sq * skv
    per_score = SOFTMAX_FLOPS + 1
    causal = bool(int(attr(ctx, "is_causal", 0) or 0))
    if ctx.has_input(3) or causal:
        per_score += 1
    if float(attr(ctx, "softcap", 0.0) or 0.0) > 0.0:
        per_score += TANH + 2
    mm = 2 * scores * (d + dv)
    tiles = (b * hq, sq, dv, skv)
    if not ctx.has_input(4):
        return replace(ctx.work(matmul_flops=mm, vector_flops=per_score * scores), attention_tiles=tiles,
                       attention_causal=causal)
    # KV cache: cat(past, new) for K and V, then the attention kernel reads the present tensors
    present = 0
    for i in (1, 2):
        present += ctx.in_bytes(i) + opt_in_bytes(ctx, i + 3)
    return replace(ctx.work(matmul_flops=mm, vector_flops=per_score * scores, kernels=3,
                            bytes_read=ctx.all_in_bytes() + present,
                            bytes_written=max(ctx.all_out_bytes(), present + ctx.out_bytes(0))), attention_tiles=tiles,
                   attention_causal=causal)


@register("RotaryEmbedding", cls="elementwise")
def rotary_embedding(ctx: OpContext) -> OpWork:
    """3 FLOPs per rotated element; 5 eager kernels (+1 for a partial rotation)."""
    x = ctx.in_shape(0)
    numel = ctx.in_numel(0)
    if len(x) == 4:
        head = x[3]
    else:
        head = x[2] // int(attr(ctx, "num_heads", 1) or 1)
    rot = int(attr(ctx, "rotary_embedding_dim", 0) or 0) or head
    rotated = numel * rot // head
    e = in_elem_bytes(ctx, 0)
    rb = rotated * e
    if ctx.has_input(3):
        bsz, seq = ctx.in_shape(3)[:2]
        cb = bsz * seq * (rot // 2) * in_elem_bytes(ctx, 1)
    else:
        cb = ctx.in_bytes(1)
    passes = [(rb + cb, rb), (rb // 2, rb // 2), (rb, rb), (rb + cb, rb), (2 * rb, rb)]
    if rot < head:
        passes.append((numel * e, numel * e))
    return work_plan(ctx, passes, vector_flops=3 * rotated, reads={1: cb, 2: cb})
