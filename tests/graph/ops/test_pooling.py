"""MaxPool, AveragePool, LpPool and the global pools."""
from predictor.types import WorkKind
from tests.helpers import one_node

VEC = WorkKind.VECTOR


def test_resnet_max_pool_writes_int64_indices():
    # 3x3/2 pad 1 on 1x64x112x112 -> 1x64x56x56 = 200704 outputs
    work = one_node("MaxPool", [("x", "float32", (1, 64, 112, 112))], [("y", "float32", None)],
                    attrs=dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])).work
    assert work.flops == {VEC: 200704 * 9}  # 1806336
    assert work.kernels == 1
    assert work.bytes_read == 64 * 112 * 112 * 4  # 3211264
    assert work.bytes_written == 200704 * 4 + 200704 * 8  # Y + PyTorch's int64 indices = 2408448


def test_max_pool_with_requested_indices_counts_them_once():
    work = one_node("MaxPool", [("x", "float32", (1, 64, 112, 112))],
                    [("y", "float32", None), ("i", "int64", None)],
                    attrs=dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])).work
    assert work.bytes_written == 2408448


def test_max_pool_1d():
    work = one_node("MaxPool", [("x", "float32", (1, 4, 16))], [("y", "float32", None)],
                    attrs=dict(kernel_shape=[2], strides=[2])).work
    assert work.flops == {VEC: 32 * 2}  # out 1x4x8


def test_average_pool():
    work = one_node("AveragePool", [("x", "float32", (1, 4, 8, 8))], [("y", "float32", None)],
                    attrs=dict(kernel_shape=[2, 2], strides=[2, 2])).work
    assert work.flops == {VEC: 64 * (4 + 1)}  # 320
    assert work.bytes_read == 256 * 4 and work.bytes_written == 64 * 4


def test_global_average_pool():
    work = one_node("GlobalAveragePool", [("x", "float32", (2, 512, 7, 7))], [("y", "float32", None)]).work
    assert work.flops == {VEC: 50176 + 1024}  # 51200
    assert work.bytes_written == 1024 * 4


def test_global_max_pool():
    work = one_node("GlobalMaxPool", [("x", "float32", (2, 512, 7, 7))], [("y", "float32", None)]).work
    assert work.flops == {VEC: 50176}
    assert work.bytes_written == 1024 * 4 + 1024 * 8  # 12288


def test_lp_pool():
    work = one_node("LpPool", [("x", "float32", (1, 4, 8, 8))], [("y", "float32", None)],
                    attrs=dict(kernel_shape=[2, 2], strides=[2, 2])).work
    assert work.flops == {VEC: 64 * (2 * 4 + 4)}  # 768
    assert work.kernels == 8


def test_pool_fp16():
    work = one_node("AveragePool", [("x", "float32", (1, 4, 8, 8))], [("y", "float32", None)],
                    attrs=dict(kernel_shape=[2, 2], strides=[2, 2]), precision="fp16").work
    assert work.bytes_read == 512 and work.bytes_written == 128
