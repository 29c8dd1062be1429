"""SwiGLU, TensorScatter and ONNX Runtime's com.microsoft fusions (ops/llm.py)."""
from predictor.types import WorkKind
from tests.helpers import one_node

MM, VEC = WorkKind.MATMUL, WorkKind.VECTOR
MS = "com.microsoft"


def test_swiglu():
    w = one_node("SwiGLU", [("a", "float32", (2, 8)), ("b", "float32", (2, 8))], [("y", "float32", None)]).work
    assert w.flops == {VEC: 16 * 9} and w.kernels == 1 and w.bytes_read == 128 and w.bytes_written == 64


def test_tensor_scatter_writes_only_the_update():
    # cache [1, 2, 64, 8] (4 KB), update of 1 token [1, 2, 1, 8] = 64 B, indices [1] int64
    ins = [("c", "float32", (1, 2, 64, 8)), ("u", "float32", (1, 2, 1, 8)), ("i", "int64", (1,))]
    w = one_node("TensorScatter", ins, [("p", "float32", None)], attrs={"axis": 2}, opset=24).work
    assert w.bytes_read == 64 + 8 and w.bytes_written == 64 and w.kernels == 1


def test_skip_layer_norm():
    # [2, 4, 16] = 128 elements: skip add 1 + LayerNorm 8 + bias add 1 = 10 per element
    ins = [("x", "float32", (2, 4, 16)), ("s", "float32", (2, 4, 16)), ("g", "float32", (16,)),
           ("be", "float32", (16,)), ("bi", "float32", (16,))]
    w = one_node("SkipLayerNormalization", ins, [("y", "float32", None)], domain=MS).work
    assert w.flops == {VEC: 1280} and w.kernels == 1 and w.rows == 8
    assert w.bytes_written == 128 * 4


def test_simplified_layer_norms():
    x = ("x", "float32", (4, 16))
    w = one_node("SimplifiedLayerNormalization", [x, ("g", "float32", (16,))], [("y", "float32", None)]).work
    assert w.flops == {VEC: 64 * 4}                  # RMSNorm 4 per element
    w = one_node("SkipSimplifiedLayerNormalization", [x, ("s", "float32", (4, 16)), ("g", "float32", (16,))],
                 [("y", "float32", None)], domain=MS).work
    assert w.flops == {VEC: 64 * 5}                  # + the skip add


def test_gelu_fusions():
    x = ("x", "float32", (8, 8))
    assert one_node("FastGelu", [x, ("b", "float32", (8,))], [("y", "float32", None)], domain=MS).work.flops == \
        {VEC: 64 * 13}                               # tanh Gelu 12 + bias 1
    assert one_node("BiasGelu", [x, ("b", "float32", (8,))], [("y", "float32", None)], domain=MS).work.flops == \
        {VEC: 64 * 9}                                # erf Gelu 8 + bias 1
    assert one_node("QuickGelu", [x], [("y", "float32", None)], domain=MS).work.flops == {VEC: 64 * 8}


def test_ms_attention_packed_qkv():
    # input [1, 4, 32], weights [32, 96], 2 heads: QKV GEMM 2*1*4*32*96 = 24576; scores 1*2*4*4 = 32,
    # attention 2 * 32 * (32 + 32) / 2 = 2048
    ins = [("x", "float32", (1, 4, 32)), ("w", "float32", (32, 96)), ("b", "float32", (96,))]
    c = one_node("Attention", ins, [("y", "float32", None)], attrs={"num_heads": 2}, domain=MS)
    assert c.work.flops == {MM: 24576 + 2048, VEC: 1 * 4 * 96 + 9 * 32}
    assert c.work.kernels == 3


def test_multi_head_attention_with_past():
    # q/k/v [1, 1, 16] (2 heads, D 8), past [1, 2, 7, 8]: T = 8, scores 1*2*1*8 = 16
    ins = [("q", "float32", (1, 1, 16)), ("k", "float32", (1, 1, 16)), ("v", "float32", (1, 1, 16)),
           ("", "", None), ("", "", None), ("", "", None),
           ("pk", "float32", (1, 2, 7, 8)), ("pv", "float32", (1, 2, 7, 8))]
    c = one_node("MultiHeadAttention", ins, [("y", "float32", None), ("prk", "float32", None),
                                             ("prv", "float32", None)], attrs={"num_heads": 2}, domain=MS)
    assert c.work.flops == {MM: 2 * 16 * 16, VEC: 9 * 16}
    assert c.work.kernels == 3                       # attention + 2 past concats


def test_group_query_attention_decode_reads_the_cache_once():
    # decode: q [2, 1, 8 heads * 16], k/v [2, 1, 2 heads * 16], shared cache [2, 2, 128, 16]
    ins = [("q", "float16", (2, 1, 128)), ("k", "float16", (2, 1, 32)), ("v", "float16", (2, 1, 32)),
           ("pk", "float16", (2, 2, 128, 16)), ("pv", "float16", (2, 2, 128, 16)), ("sl", "int32", (2,)),
           ("t", "int32", ())]
    import numpy as np

    c = one_node("GroupQueryAttention", ins, [("y", "float16", None), ("prk", "float16", None),
                                              ("prv", "float16", None)],
                 attrs={"num_heads": 8, "kv_num_heads": 2}, initializers={"t": np.array(100, np.int32)},
                 domain=MS, precision="fp16")
    # T = max(128, 100) = 128 (shared buffer): scores 2*8*1*128 = 2048, MM 2*2048*32 = 131072
    assert c.work.flops == {MM: 131072, VEC: 10 * 2048}
    cache = 2 * 2 * 2 * 128 * 16 * 2                 # K and V, B 2, Hkv 2, T 128, D 16, fp16 = 32768 B
    new = 2 * 2 * 2 * 1 * 16 * 2                     # one token's K and V rows = 256 B
    assert c.work.kernels == 2
    assert c.work.bytes_written == new + 2 * 128 * 2  # cache rows in place + the output [2, 1, 128]


def test_ms_rotary_embedding():
    # input [1, 4, 2 heads * 8], positions [1, 4], cos/sin [16, 4]: 64 rotated elements x 3
    ins = [("x", "float32", (1, 4, 16)), ("p", "int64", (1, 4)), ("c", "float32", (16, 4)),
           ("s", "float32", (16, 4))]
    w = one_node("RotaryEmbedding", ins, [("y", "float32", None)], attrs={"num_heads": 2}, domain=MS).work
    assert w.flops == {VEC: 192} and w.kernels == 1
