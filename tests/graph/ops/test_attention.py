"""Attention and RotaryEmbedding (opset 23)."""
from predictor.types import WorkKind
from tests.helpers import one_node

MM, VEC = WorkKind.MATMUL, WorkKind.VECTOR


def test_attention_4d():
    # B=2, H=4, S=8, D=16: scores 2*4*8*8 = 512
    q = ("q", "float32", (2, 4, 8, 16))
    work = one_node("Attention", [q, ("k", "float32", (2, 4, 8, 16)), ("v", "float32", (2, 4, 8, 16))],
                    [("y", "float32", None)], opset=23).work
    assert work.flops == {MM: 2 * 512 * (16 + 16), VEC: 9 * 512}  # 32768; softmax 8 + scale 1 = 4608
    assert work.kernels == 1
    assert work.bytes_read == 3 * 1024 * 4 and work.bytes_written == 1024 * 4  # scores never written


def test_attention_3d_gqa_causal():
    # Q [1, 8, 4 heads * 16], K/V [1, 8, 2 heads * 16]: scores 1*4*8*8 = 256
    work = one_node("Attention", [("q", "float32", (1, 8, 64)), ("k", "float32", (1, 8, 32)),
                                  ("v", "float32", (1, 8, 32))], [("y", "float32", None)],
                    attrs=dict(q_num_heads=4, kv_num_heads=2, is_causal=1), opset=23).work
    assert work.flops == {MM: 2 * 256 * 32, VEC: 10 * 256}  # 16384; + causal select: 2560


def test_attention_with_kv_cache():
    # past 6 + new 2 -> Skv = 8; Sq = 2: scores 1*2*2*8 = 32
    ins = [("q", "float32", (1, 2, 2, 4)), ("k", "float32", (1, 2, 2, 4)), ("v", "float32", (1, 2, 2, 4)),
           ("", "float32", None), ("pk", "float32", (1, 2, 6, 4)), ("pv", "float32", (1, 2, 6, 4))]
    work = one_node("Attention", ins, [("y", "float32", None), ("prk", "float32", None), ("prv", "float32", None)],
                    opset=23).work
    assert work.flops[MM] == 2 * 32 * 8  # 512
    assert work.kernels == 3  # cat K, cat V, attention
    present = 2 * (64 * 4)  # two [1,2,8,4] tensors = 512 bytes
    assert work.bytes_read == (3 * 16 + 2 * 48) * 4 + present  # 576 + 512 = 1088


def test_rotary_embedding():
    # X [B=1, S=4, H*D = 2*8], cos/sin caches [16, 4], position_ids [1, 4]
    ins = [("x", "float32", (1, 4, 16)), ("c", "float32", (16, 4)), ("s", "float32", (16, 4)),
           ("p", "int64", (1, 4))]
    work = one_node("RotaryEmbedding", ins, [("y", "float32", None)], attrs=dict(num_heads=2), opset=23).work
    assert work.flops == {VEC: 3 * 64}  # 192
    assert work.kernels == 5
    rb, cb = 64 * 4, 1 * 4 * 4 * 4  # rotated bytes 256; gathered cos rows 64
    assert work.bytes_read == (rb + cb) + rb // 2 + rb + (rb + cb) + 2 * rb  # 1536
    assert work.input_bytes["c"] == cb
