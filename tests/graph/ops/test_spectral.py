"""DFT, STFT and windows (ops/spectral.py)."""
import numpy as np

from predictor.graph.ops.spectral import fft_flops
from predictor.types import WorkKind
from tests.helpers import one_node

VEC = WorkKind.VECTOR


def test_fft_flops_convention():
    assert fft_flops(8, True) == 5 * 8 * 3 == 120 and fft_flops(8, False) == 60 and fft_flops(1, True) == 0


def test_dft_complex_along_axis_1():
    # x [2, 16, 2] complex, 2 transforms of 16: 2 * 5 * 16 * 4 = 640
    w = one_node("DFT", [("x", "float32", (2, 16, 2))], [("y", "float32", (2, 16, 2))], opset=17).work
    assert w.flops == {VEC: 640} and w.kernels == 1


def test_stft_with_window():
    # signal [1, 64, 1], step 16, window 16 -> frames (64 - 16) / 16 + 1 = 4, onesided bins 9
    ins = [("s", "float32", (1, 64, 1)), ("step", "int64", ()), ("win", "float32", (16,))]
    w = one_node("STFT", ins, [("y", "float32", (1, 4, 9, 2))],
                 initializers={"step": np.array(16, np.int64), "win": np.ones(16, np.float32)}, opset=17).work
    assert w.flops == {VEC: 4 * (5 * 16 * 4 / 2) + 4 * 16}   # real signal: 160 per frame; window 64 -> 704
    assert w.kernels == 2


def test_window_of_a_constant_size_is_folded():
    # the usual case: the size is a constant, the window is computed once before inference
    w = one_node("HannWindow", [("n", "int64", ())], [("w", "float32", (10,))],
                 initializers={"n": np.array(10, np.int64)}, opset=17).work
    assert w.kernels == 0 and not w.flops
