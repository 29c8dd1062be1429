"""GridSample, RoiAlign, NonMaxSuppression, DeformConv (ops/detection.py)."""
import numpy as np

from predictor.types import WorkKind
from tests.helpers import one_node

MM, VEC = WorkKind.MATMUL, WorkKind.VECTOR


def test_grid_sample_bilinear():
    # X [1, 3, 8, 8], grid [1, 4, 5, 2] -> Y [1, 3, 4, 5]: 60 outputs x 4 taps x 2 + 20 points x 7 x 2 = 480 + 280
    w = one_node("GridSample", [("x", "float32", (1, 3, 8, 8)), ("g", "float32", (1, 4, 5, 2))],
                 [("y", "float32", (1, 3, 4, 5))], opset=20).work
    assert w.flops == {VEC: 760} and w.kernels == 1
    assert w.bytes_read == (192 + 40) * 4 and w.bytes_written == 60 * 4


def test_grid_sample_nearest_and_bicubic():
    ins = [("x", "float32", (1, 3, 8, 8)), ("g", "float32", (1, 4, 5, 2))]
    out = [("y", "float32", (1, 3, 4, 5))]
    near = one_node("GridSample", ins, out, attrs={"mode": "nearest"}, opset=20).work
    cubic = one_node("GridSample", ins, out, attrs={"mode": "cubic"}, opset=20).work
    assert near.flops == {VEC: 60 * 2 + 280}          # 1 tap
    assert cubic.flops == {VEC: 60 * 32 + 280}        # 16 taps x 2


def test_roi_align():
    # X [1, 4, 16, 16], 3 rois -> Y [3, 4, 2, 2] = 48 outputs; sampling 2: (9 * 4 + 1) = 37 each
    w = one_node("RoiAlign", [("x", "float32", (1, 4, 16, 16)), ("r", "float32", (3, 4)), ("i", "int64", (3,))],
                 [("y", "float32", (3, 4, 2, 2))], attrs={"output_height": 2, "output_width": 2, "sampling_ratio": 2},
                 opset=16).work
    assert w.flops == {VEC: 48 * 37}                   # 1776
    # samples 48 * 4 * 4 taps * 4 B = 3072 < X 4096 B: the samples bound the read
    assert w.bytes_read == 3072 + 3 * 4 * 4 + 3 * 8 and w.kernels == 1


def test_non_max_suppression():
    # B 1, N 8 boxes, C 2 classes: sort 8 * 3 = 24, pairs 28 * 15 = 420 -> 2 * 444 = 888
    w = one_node("NonMaxSuppression", [("b", "float32", (1, 8, 4)), ("s", "float32", (1, 2, 8)),
                                       ("m", "int64", (1,))], [("sel", "int64", None)],
                 initializers={"m": np.array([5], np.int64)}, opset=11).work
    assert w.flops == {VEC: 888} and w.kernels == 4
    assert w.bytes_written == 64 + 8 * 2 * 8 * 1 + 16 + 5 * 2 * 3 * 8   # scores, mask, keep, 5 x 2 x 3 int64


def test_deform_conv_with_bias_and_mask():
    # X [1, 2, 5, 5], W [4, 2, 3, 3], out [1, 4, 3, 3]: cols 1*2*9*9 = 162, GEMM 2*1*4*9*2*9 = 1296
    ins = [("x", "float32", (1, 2, 5, 5)), ("w", "float32", (4, 2, 3, 3)), ("o", "float32", (1, 18, 3, 3)),
           ("b", "float32", (4,)), ("m", "float32", (1, 9, 3, 3))]
    w = one_node("DeformConv", ins, [("y", "float32", (1, 4, 3, 3))], attrs={"kernel_shape": [3, 3]}, opset=19).work
    assert w.flops == {MM: 1296, VEC: 9 * 162}       # bilinear 8 + mask 1 per column element
    assert w.kernels == 3                             # im2col, GEMM, bias
