"""LLM building blocks: ONNX SwiGLU and TensorScatter (KV-cache update), and the fused kernels of ONNX
Runtime's transformer optimizer (domain com.microsoft; SimplifiedLayerNormalization also in the default domain,
where ONNX Runtime registers it). These ops have no PyTorch-eager counterpart: the kernels counted are ONNX
Runtime's CUDA ones (one fused kernel each unless said).

FLOPs (an FMA is 2; constants of normalization.py, softmax.py and elementwise.py):

* SwiGLU (A, B): Swish_alpha(A) * B: alpha * a 1, sigmoid 6, * a 1, * b 1 = 9 per element; 1 kernel.
* TensorScatter (past_cache, update, write_indices): an in-place write of ``update`` into the cache:
  reads the update (and indices), writes it once; the cache itself is not copied. 1 kernel.
* SkipLayerNormalization (input, skip, gamma, beta?, bias?): input + skip (+ bias) then LayerNorm:
  1 (+1) + 8 (7 without beta) per element; Skip**Simplified**LayerNormalization: 1 (+1) + RMSNorm 4.
  The optional sum output (input_skip_bias_sum) is written when requested. ``rows`` as LayerNorm.
* SimplifiedLayerNormalization (X, scale): RMSNorm, 4 per element, 1 kernel.
* FastGelu (X, bias?): tanh Gelu 12 (+1 bias); BiasGelu (A, B): erf Gelu 8 + 1; QuickGelu: x sigmoid(alpha x)
  = 8. 1 kernel each.
* RotaryEmbedding (com.microsoft; input, position_ids, cos_cache, sin_cache): 3 per rotated element
  (x1 cos - x2 sin), 1 kernel, cos/sin read as the gathered rows.
* Attention (com.microsoft; input [B, S, hidden], weights [hidden, q+k+v], bias?, mask?, past? [2, B, H, P, D]):
  the QKV GEMM 2 B S hidden (q+k+v) (+ bias), then attention over T = P + S keys: 2 B H S T (Dq + Dv), softmax
  8 + scale 1 (+ mask 1) per score. Kernels: GEMM, bias/transpose, fused attention (+1 concat of the past).
* MultiHeadAttention (query, key?, value?, bias?, key_padding_mask?, attention_bias?, past_key?, past_value?):
  the attention part as above (T = past + key length); 1 fused kernel (+1 when bias, +2 concats with a past).
* GroupQueryAttention (query, key?, value?, past_key, past_value, seqlens_k, total_sequence_length,
  cos_cache?, sin_cache?): Hq query heads over Hkv key/value heads, T = present length (the present_key
  output, else past + S): 2 B Hq S T 2D + 9 per score, + rotary 3 per rotated q/k element (``do_rotary``).
  Bytes: q, k, v read; the present K/V (B Hkv T D each) read once by the flash kernel; the new rows written
  into the cache (in place when past and present share one buffer of the same shape, else the past copied
  into present: read and written). Kernels: flash attention 1, cache update 1, rotary 1 (when do_rotary).
  NB: a causal mask lets the flash kernel skip about half of the score tiles of a prefill; counted in full.
"""
from __future__ import annotations

from ...types import OpWork
from ..context import OpContext
from ._common import SIGMOID, attr, in_elem_bytes, out_requested, prod, register, work_plan
from .elementwise import GELU_ERF_FLOPS, GELU_TANH_FLOPS
from .normalization import LAYERNORM_FLOPS, RMSNORM_FLOPS
from .softmax import SOFTMAX_FLOPS

MS = "com.microsoft"
SWIGLU_FLOPS = SIGMOID + 3


@register("SwiGLU", cls="elementwise")
def swiglu(ctx: OpContext) -> OpWork:
    """9 FLOPs per element; 1 kernel, compulsory bytes."""
    return ctx.work(vector_flops=SWIGLU_FLOPS * ctx.out_numel())


@register("TensorScatter", cls="elementwise")
def tensor_scatter(ctx: OpContext) -> OpWork:
    """In-place cache write: reads the update (+ indices), writes it; the cache is not copied. 1 kernel."""
    upd = ctx.in_bytes(1)
    idx = ctx.in_bytes(2) if ctx.has_input(2) else 0
    return ctx.work(bytes_read=upd + idx, bytes_written=upd)


def _rows(shape: tuple[int, ...]) -> int:
    return prod(shape[:-1])


def _skip_norm(ctx: OpContext, norm_flops: int) -> OpWork:
    numel = ctx.in_numel(0)
    per = 1 + norm_flops + (1 if ctx.has_input(4) else 0)
    written = ctx.out_bytes(0) + (ctx.out_bytes(3) if out_requested(ctx, 3) else 0)
    written += sum(ctx.out_bytes(i) for i in (1, 2) if out_requested(ctx, i))
    w = ctx.work(vector_flops=per * numel, bytes_written=written, rows=_rows(ctx.in_shape(0)))
    return w


@register("SkipLayerNormalization", cls="norm", domain=MS)
def skip_layer_norm(ctx: OpContext) -> OpWork:
    """(input + skip [+ bias]) then LayerNorm: 9 (+1 bias, -1 without beta) FLOPs per element; 1 kernel."""
    return _skip_norm(ctx, LAYERNORM_FLOPS if ctx.has_input(3) else LAYERNORM_FLOPS - 1)


@register("SkipSimplifiedLayerNormalization", cls="norm", domain=MS)
def skip_simplified_layer_norm(ctx: OpContext) -> OpWork:
    """(input + skip [+ bias]) then RMSNorm: 5 (+1 bias) FLOPs per element; 1 kernel."""
    return _skip_norm(ctx, RMSNORM_FLOPS)


def _simplified_layer_norm(ctx: OpContext) -> OpWork:
    """RMSNorm: 4 FLOPs per element; 1 kernel; only the normalised output counted (inv_std_var is tiny)."""
    return ctx.work(vector_flops=RMSNORM_FLOPS * ctx.in_numel(0), bytes_written=ctx.out_bytes(0),
                    rows=_rows(ctx.in_shape(0)))


register("SimplifiedLayerNormalization", cls="norm")(_simplified_layer_norm)
register("SimplifiedLayerNormalization", cls="norm", domain=MS)(_simplified_layer_norm)


@register("FastGelu", cls="elementwise", domain=MS)
def fast_gelu(ctx: OpContext) -> OpWork:
    """tanh Gelu 12 (+1 with a bias) per element; 1 kernel."""
    return ctx.work(vector_flops=(GELU_TANH_FLOPS + ctx.has_input(1)) * ctx.out_numel())


@register("BiasGelu", cls="elementwise", domain=MS)
def bias_gelu(ctx: OpContext) -> OpWork:
    """bias add 1 + erf Gelu 8 per element; 1 kernel."""
    return ctx.work(vector_flops=(GELU_ERF_FLOPS + 1) * ctx.out_numel())


@register("QuickGelu", cls="elementwise", domain=MS)
def quick_gelu(ctx: OpContext) -> OpWork:
    """x * sigmoid(alpha x): 8 per element; 1 kernel."""
    return ctx.work(vector_flops=(SIGMOID + 2) * ctx.out_numel())


@register("RotaryEmbedding", cls="elementwise", domain=MS)
def ms_rotary_embedding(ctx: OpContext) -> OpWork:
    """3 FLOPs per rotated element; 1 kernel; cos/sin read as B x S rows of rot/2."""
    x = ctx.in_shape(0)
    numel = ctx.in_numel(0)
    heads = int(attr(ctx, "num_heads", 0) or 0)
    head = x[3] if len(x) == 4 else (x[2] // heads if heads else ctx.in_shape(2)[-1] * 2)
    rot = int(attr(ctx, "rotary_embedding_dim", 0) or 0) or head
    rotated = numel * rot // head
    tokens = x[0] * (x[2] if len(x) == 4 else x[1])
    cs = 2 * tokens * (rot // 2) * in_elem_bytes(ctx, 2)
    return ctx.work(vector_flops=3 * rotated, bytes_read=ctx.in_bytes(0) + ctx.in_bytes(1) + cs)


def _score_flops(scores: int, masked: bool) -> float:
    return (SOFTMAX_FLOPS + 1 + masked) * scores


@register("Attention", cls="attention", autocast="low", domain=MS)
def ms_attention(ctx: OpContext) -> OpWork:
    """QKV GEMM + fused attention over past + S keys; 3 kernels (+1 with a past)."""
    b, s, hidden = ctx.in_shape(0)
    qkv = ctx.in_shape(1)[-1]
    sizes = attr(ctx, "qkv_hidden_sizes", None)
    dq, dk, dv = (tuple(int(v) for v in sizes) if sizes else (qkv // 3,) * 3)
    heads = int(attr(ctx, "num_heads", 1) or 1)
    past = ctx.in_shape(4)[3] if ctx.has_input(4) else 0
    t = past + s
    scores = b * heads * s * t
    mm = 2 * b * s * hidden * qkv + 2 * scores * (dq + dv) // heads
    e = in_elem_bytes(ctx, 0)
    qkv_bytes = b * s * qkv * e
    gemm_read = ctx.in_bytes(0) + ctx.in_bytes(1)
    bias_read = qkv_bytes + (ctx.in_bytes(2) if ctx.has_input(2) else 0)
    kv_bytes = b * t * (dk + dv) * e
    passes = [(gemm_read, qkv_bytes), (bias_read, qkv_bytes),
              (qkv_bytes * dq // qkv + kv_bytes + (ctx.in_bytes(3) if ctx.has_input(3) else 0), ctx.out_bytes(0))]
    if past:
        passes.append((ctx.in_bytes(4) + b * s * (dk + dv) * e, kv_bytes))
    return work_plan(ctx, passes, matmul_flops=mm, vector_flops=b * s * qkv + _score_flops(scores, ctx.has_input(3)))


@register("MultiHeadAttention", cls="attention", autocast="low", domain=MS)
def ms_multi_head_attention(ctx: OpContext) -> OpWork:
    """Fused attention, T = past + key length; 1 kernel (+1 bias, +2 past concats)."""
    q = ctx.in_shape(0)
    heads = int(attr(ctx, "num_heads", 1) or 1)
    b, s = q[0], q[1]
    dq = (q[2] // heads) if len(q) == 3 else q[-1]
    if ctx.has_input(1):
        k = ctx.in_shape(1)
        kv_len = k[1] if len(k) == 3 else k[2]
    else:
        kv_len = s
    dv = dq
    if ctx.has_input(2) and len(ctx.in_shape(2)) == 3:
        dv = ctx.in_shape(2)[2] // heads
    past = ctx.in_shape(6)[2] if ctx.has_input(6) else 0
    t = past + kv_len
    scores = b * heads * s * t
    masked = ctx.has_input(4) or ctx.has_input(5) or bool(int(attr(ctx, "unidirectional", 0) or 0))
    passes = [(ctx.all_in_bytes(), ctx.out_bytes(0))]
    if ctx.has_input(3):
        passes.insert(0, (ctx.all_in_bytes(), sum(ctx.in_bytes(i) for i in range(3) if ctx.has_input(i))))
    if past:
        for i in (6, 7):
            if ctx.has_input(i):
                new = b * heads * kv_len * (dq if i == 6 else dv) * in_elem_bytes(ctx, 0)
                passes.append((ctx.in_bytes(i) + new, ctx.in_bytes(i) + new))
    return work_plan(ctx, passes, matmul_flops=2 * scores * (dq + dv), vector_flops=_score_flops(scores, masked))


@register("GroupQueryAttention", cls="attention", domain=MS)
def group_query_attention(ctx: OpContext) -> OpWork:
    """Flash attention over the present KV cache, Hq query heads on Hkv KV heads; 2 kernels (+1 rotary)."""
    q = ctx.in_shape(0)
    hq = int(attr(ctx, "num_heads", 1) or 1)
    hkv = int(attr(ctx, "kv_num_heads", hq) or hq)
    b, s = q[0], q[1]
    packed = not ctx.has_input(1)
    d = q[2] // (hq + 2 * hkv) if packed else q[2] // hq
    past = ctx.in_shape(3) if ctx.has_input(3) else None
    present = ctx.out_shape(1) if out_requested(ctx, 1) and ctx.output(1).shape is not None else None
    t = present[2] if present else (past[2] if past else 0) + s
    scores = b * hq * s * t
    e = in_elem_bytes(ctx, 0)
    cache_bytes = 2 * b * hkv * t * d * e                      # present K and V, read by the flash kernel
    new_bytes = 2 * b * hkv * s * d * e
    q_bytes = b * s * hq * d * e
    shared = past is not None and present is not None and tuple(past) == tuple(present)
    if shared or past is None:
        update = (new_bytes, new_bytes)
    else:
        past_bytes = 2 * ctx.in_bytes(3)
        update = (past_bytes + new_bytes, past_bytes + new_bytes)
    passes = [update, (q_bytes + cache_bytes + ctx.in_bytes(5) if ctx.has_input(5) else q_bytes + cache_bytes,
                       ctx.out_bytes(0))]
    rot = 0
    if int(attr(ctx, "do_rotary", 0) or 0):
        rot = 3 * b * s * (hq + hkv) * d
        passes.insert(0, (q_bytes + new_bytes // 2, q_bytes + new_bytes // 2))
    return work_plan(ctx, passes, matmul_flops=2 * scores * 2 * d, vector_flops=_score_flops(scores, True) + rot)
