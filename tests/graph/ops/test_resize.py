"""Resize (opset 13) and Upsample (opset 9)."""
import numpy as np
import pytest

from predictor.types import WorkKind
from tests.helpers import one_node

VEC = WorkKind.VECTOR


@pytest.mark.parametrize("mode, per", [("nearest", 0), ("linear", 8), ("cubic", 32)])
def test_resize_2x(mode, per):
    # 1x3x8x8 -> 1x3x16x16 (768 outputs); 2 axes resized: linear 2*2**2 = 8, cubic 2*4**2 = 32
    work = one_node("Resize", [("x", "float32", (1, 3, 8, 8)), ("", "float32", None), ("", "float32", None),
                               ("sizes", "int64", (4,))],
                    [("y", "float32", None)], attrs=dict(mode=mode),
                    initializers={"sizes": np.array([1, 3, 16, 16], dtype=np.int64)}, opset=13).work
    assert work.flops.get(VEC, 0) == per * 768
    assert work.kernels == 1
    assert work.bytes_read == 192 * 4 + 4 * 8  # X + sizes = 800
    assert work.bytes_written == 768 * 4


def test_upsample_opset9_bilinear_fp16():
    work = one_node("Upsample", [("x", "float32", (1, 3, 8, 8)), ("scales", "float32", (4,))],
                    [("y", "float32", None)], attrs=dict(mode="linear"),
                    initializers={"scales": np.array([1, 1, 2, 2], dtype=np.float32)}, opset=9,
                    precision="fp16").work
    assert work.flops == {VEC: 8 * 768}
    assert work.bytes_read == 192 * 2 + 4 * 2
    assert work.bytes_written == 768 * 2


def test_resize_one_axis_linear():
    # only W changes: 2 taps -> 4 FLOPs per output
    work = one_node("Resize", [("x", "float32", (1, 1, 4, 4)), ("", "float32", None), ("", "float32", None),
                               ("sizes", "int64", (4,))],
                    [("y", "float32", None)], attrs=dict(mode="linear"),
                    initializers={"sizes": np.array([1, 1, 4, 8], dtype=np.int64)}, opset=13).work
    assert work.flops == {VEC: 4 * 32}


def _resize_2x3x8x8(mode, side):
    """The work of a Resize of a 2x3x8x8 input to 2x3 x side x side."""
    return one_node("Resize", [("x", "float32", (2, 3, 8, 8)), ("", "float32", None), ("", "float32", None),
                               ("sizes", "int64", (4,))],
                    [("y", "float32", None)], attrs=dict(mode=mode),
                    initializers={"sizes": np.array([2, 3, side, side], dtype=np.int64)}, opset=13).work


@pytest.mark.parametrize("mode, loop", [("nearest", None), ("linear", (6, 256)), ("cubic", (96, 256))])
def test_interpolation_threads_loop_over_planes(mode, loop):
    # 2x3x8x8 -> 2x3x16x16: PyTorch's linear/cubic kernels give each of the 256 output pixels a thread looping over the
    # 2 x 3 planes, a cubic plane counted as CUBIC_ITERATION = 16 linear ones; nearest gives every output element its
    # own thread
    assert _resize_2x3x8x8(mode, 16).thread_loop == loop


@pytest.mark.parametrize("mode, loop", [("nearest", None), ("cubic", (6 * 16, 64))])
def test_same_size_interpolation_still_loops(mode, loop):
    # 2x3x8x8 -> 2x3x8x8 (a position-embedding table resized to its own grid): no FLOPs, but PyTorch still runs the
    # bicubic kernel's plane loop
    assert _resize_2x3x8x8(mode, 8).thread_loop == loop
