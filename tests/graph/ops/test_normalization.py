"""BatchNormalization, LayerNormalization, RMSNormalization, GroupNormalization, InstanceNormalization,
LpNormalization, LRN."""
import numpy as np
import pytest

from predictor.types import WorkKind
from tests.helpers import one_node

VEC = WorkKind.VECTOR


def bn(precision="fp32", **attrs):
    c = ("float32", (3,))
    ins = [("x", "float32", (2, 3, 4, 4))] + [(n, *c) for n in ("s", "b", "m", "v")]
    inits = {n: np.ones(3, np.float32) for n in ("s", "b", "m", "v")}  # parameters and running statistics
    return one_node("BatchNormalization", ins, [("y", "float32", None)], attrs=attrs, precision=precision,
                    initializers=inits).work


def test_batch_norm_inference():
    work = bn()
    assert work.flops == {VEC: 2 * 96}  # folded FMA per element: 192
    assert work.kernels == 1
    assert work.bytes_read == 96 * 4 + 4 * 3 * 4  # 384 + 48 = 432
    assert work.bytes_written == 384
    assert work.weight_bytes == 48


def test_batch_norm_fp16():
    work = bn("fp16")
    assert work.bytes_read == 96 * 2 + 4 * 3 * 2  # 216
    assert work.bytes_written == 192


def test_batch_norm_training_mode_reads_x_twice():
    work = one_node("BatchNormalization", [("x", "float32", (2, 3, 4, 4))] + [(n, "float32", (3,)) for n in "sbmv"],
                    [("y", "float32", None)], attrs=dict(training_mode=1), opset=15).work
    assert work.flops == {VEC: 6 * 96}
    assert work.bytes_read == 2 * 384 + 48


@pytest.mark.parametrize("bias, flops", [(True, 8 * 256), (False, 7 * 256)])
def test_layer_norm(bias, flops):
    ins = [("x", "float32", (2, 8, 16)), ("s", "float32", (16,))] + ([("b", "float32", (16,))] if bias else [])
    work = one_node("LayerNormalization", ins, [("y", "float32", None)]).work
    assert work.flops == {VEC: flops}  # 2048 with bias, 1792 without
    assert work.kernels == 1
    assert work.bytes_read == 256 * 4 + (2 if bias else 1) * 64
    assert work.bytes_written == 1024


def test_rms_norm_opset_23():
    work = one_node("RMSNormalization", [("x", "float32", (2, 4, 8)), ("s", "float32", (8,))],
                    [("y", "float32", None)], opset=23).work
    assert work.flops == {VEC: 4 * 64}  # 256
    assert work.kernels == 1


def test_group_norm_three_kernels_reads_x_twice():
    work = one_node("GroupNormalization", [("x", "float32", (2, 8, 4, 4)), ("s", "float32", (4,)),
                                           ("b", "float32", (4,))],
                    [("y", "float32", None)], attrs=dict(num_groups=4), opset=18).work
    assert work.flops == {VEC: 6 * 256}  # 1536
    assert work.kernels == 3
    assert work.bytes_read == 2 * 1024 + 32  # 2080
    assert work.bytes_written == 1024
    assert work.input_bytes["x"] == 2048
    # 2 x 4 rows of 2 x 16 = 32 elements: a warp each, one iteration over the 1,024 bytes of x
    assert work.thread_loop == (1, 8 * 32, 32 * 32, 1024)


def test_group_norm_loop_is_a_block_per_row():
    from predictor.graph.ops.normalization import group_norm_loop

    # SD's VAE decoder at batch 1: 32 groups of 4 x 512 x 512 (fp16, 64 MiB): 32 blocks of 512 looping 2,048 times
    assert group_norm_loop(1, 32, 4 * 512 * 512, 2 * 128 * 512 * 512) == (2048, 32 * 512, 2048, 67108864)
    # a row shorter than the block: a warp, ceil(100 / 32) = 4 iterations, at most 32 blocks an SM
    assert group_norm_loop(8, 2, 100, 3200) == (4, 16 * 32, 1024, 3200)


def test_group_norm_of_vectors_is_two_kernels():
    # [N, C] input (HxW = 1): the apply pass reads the parameters itself, no fused-parameter kernel
    work = one_node("GroupNormalization", [("x", "float32", (4, 8)), ("s", "float32", (2,)), ("b", "float32", (2,))],
                    [("y", "float32", None)], attrs=dict(num_groups=2), opset=18).work
    assert work.kernels == 2 and work.bytes_read == 2 * 128 + 16 and work.bytes_written == 128


def test_instance_norm():
    work = one_node("InstanceNormalization", [("x", "float32", (2, 3, 4, 4)), ("s", "float32", (3,)),
                                              ("b", "float32", (3,))], [("y", "float32", None)]).work
    assert work.flops == {VEC: 6 * 96}  # 576
    assert work.kernels == 4
    # repeat scale (12 -> 24), repeat bias (12 -> 24), statistics (reads X 384), normalise (X + 48 -> Y 384)
    assert work.bytes_read == 12 + 12 + 384 + 384 + 48  # 840
    assert work.bytes_written == 24 + 24 + 384  # 432


def test_lp_normalization():
    work = one_node("LpNormalization", [("x", "float32", (4, 10))], [("y", "float32", None)]).work
    assert work.flops == {VEC: 3 * 40}  # 120
    assert work.kernels == 3
    # norm: X 160 -> 16; clamp_min 16 -> 16; divide: X 160 + 16 -> 160
    assert work.bytes_read == 160 + 16 + 176  # 352
    assert work.bytes_written == 16 + 16 + 160  # 192


def test_lrn():
    work = one_node("LRN", [("x", "float32", (1, 8, 5, 5))], [("y", "float32", None)], attrs=dict(size=5)).work
    assert work.flops == {VEC: (5 + 13) * 200}  # 3600
    assert work.kernels == 8
    assert work.bytes_read == 8 * 800 and work.bytes_written == 8 * 800


def test_mean_variance_normalization():
    # default axes (0, 2, 3) on 2x3x4x4: 3 statistics; X 384 bytes, statistics 12 bytes
    work = one_node("MeanVarianceNormalization", [("x", "float32", (2, 3, 4, 4))], [("y", "float32", None)]).work
    assert work.flops == {VEC: 5 * 96}  # 480
    assert work.kernels == 8
    x, s = 384, 12
    assert work.bytes_read == x + x + x + s + 2 * s + s + (x + s) + (x + s)  # 2004
    assert work.input_bytes["x"] == 3 * x


@pytest.mark.parametrize("axis,rows", [(-1, 16), (2, 16), (1, 2)])
def test_layer_norm_rows(axis, rows):
    """PyTorch's layer norm gives each row (the dimensions before ``axis``) a thread block: ``rows``."""
    work = one_node("LayerNormalization", [("x", "float32", (2, 8, 16)), ("s", "float32", (16,))],
                    [("y", "float32", None)], attrs={"axis": axis}).work
    assert work.rows == rows
