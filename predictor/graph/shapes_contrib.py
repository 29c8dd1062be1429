"""Shape functions of ops ONNX inference does not know: ONNX Runtime's com.microsoft transformer fusions and
weight-only quantised MatMulNBits, and the newest ONNX ops (SwiGLU, TensorScatter) for older onnx packages.

Registered into graph/shapes.py's table when the loader imports this module. Each returns None when it
cannot tell (the loader then asks ONNX inference), and ``Attention`` / ``RotaryEmbedding`` of the default
domain are left to their own rules.
"""
from __future__ import annotations

from . import shapes as _s

MS = "com.microsoft"


def _reg(*ops: str):
    return _s._register(_s._SHAPE, *ops)


def _int(vals, i):
    v = vals[i] if i < len(vals) else None
    return int(v.data[0]) if v is not None and len(v.data) == 1 else None


@_reg("SkipLayerNormalization", "SkipSimplifiedLayerNormalization")
def _skip_norm(n, shapes, vals, k):
    x = shapes[0]
    if x is None:
        return None
    return x if k in (0, 3) else x[:-1] + (1,)


@_reg("SimplifiedLayerNormalization")
def _simplified(n, shapes, vals, k):
    x = shapes[0]
    if x is None:
        return None
    if k == 0:
        return x
    axis = _s._attr(n, "axis", -1) % len(x)
    return x[:axis] + (1,) * (len(x) - axis)


@_reg("FastGelu", "BiasGelu", "QuickGelu", "SwiGLU")
def _same_as_first(n, shapes, vals, k):
    return shapes[0]


@_reg("TensorScatter")
def _tensor_scatter(n, shapes, vals, k):
    return shapes[0]


@_reg("MatMulNBits")
def _matmul_nbits(n, shapes, vals, k):
    a = shapes[0]
    out_n = _s._attr(n, "N")
    if a is None or out_n is None:
        return None
    return a[:-1] + (int(out_n),)


_ROTARY_DEFAULT = _s._SHAPE["RotaryEmbedding"]


def _rotary(n, shapes, vals, k):
    if n.domain == MS:
        return shapes[0]
    return _ROTARY_DEFAULT(n, shapes, vals, k)


_s._SHAPE["RotaryEmbedding"] = _rotary


@_reg("Attention")
def _ms_attention(n, shapes, vals, k):
    if n.domain != MS:
        return None  # the opset-23 Attention: ONNX inference
    x, w = shapes[0], shapes[1] if len(shapes) > 1 else None
    if x is None or w is None:
        return None
    b, s = x[0], x[1]
    sizes = _s._attr(n, "qkv_hidden_sizes")
    dq, dv = (int(sizes[0]), int(sizes[2])) if sizes else (w[-1] // 3, w[-1] // 3)
    if k == 0:
        return (b, s, dv)
    heads = int(_s._attr(n, "num_heads", 1) or 1)
    past = shapes[4] if len(shapes) > 4 and shapes[4] is not None else None
    return (2, b, heads, (past[3] if past else 0) + s, dq // heads)


@_reg("MultiHeadAttention")
def _ms_mha(n, shapes, vals, k):
    q = shapes[0]
    if q is None or len(q) != 3:
        return None
    heads = int(_s._attr(n, "num_heads", 1) or 1)
    key = shapes[1] if len(shapes) > 1 else None
    value = shapes[2] if len(shapes) > 2 else None
    d = q[2] // heads
    dv = (value[2] // heads if len(value) == 3 else value[3]) if value is not None else d
    if k == 0:
        return (q[0], q[1], heads * dv)
    kv_len = (key[1] if len(key) == 3 else key[2]) if key is not None else q[1]
    past = shapes[6] if len(shapes) > 6 and shapes[6] is not None else None
    return (q[0], heads, (past[2] if past else 0) + kv_len, d if k == 1 else dv)


@_reg("GroupQueryAttention")
def _gqa(n, shapes, vals, k):
    q = shapes[0]
    if q is None:
        return None
    hq = int(_s._attr(n, "num_heads", 1) or 1)
    hkv = int(_s._attr(n, "kv_num_heads", hq) or hq)
    packed = len(n.input) < 2 or not n.input[1]
    d = q[2] // (hq + 2 * hkv) if packed else q[2] // hq
    if k == 0:
        return (q[0], q[1], hq * d)
    past = shapes[3] if len(shapes) > 3 else None
    total = _int(vals, 6)
    p = past[2] if past is not None else 0
    t = max(p, total) if total is not None else p + q[1]
    return (q[0], hkv, t, d)
