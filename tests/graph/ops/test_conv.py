"""Conv, ConvTranspose, ConvInteger, QLinearConv: one-node graphs through the real loader."""
import numpy as np
import pytest

from predictor.graph.ops.conv import NOTE_BIAS_KERNEL, NOTE_DEPTHWISE, NOTE_GROUPED_LARGE, NOTE_LAYOUT
from predictor.graph.opclass import hidden_key, kernel_class
from predictor.types import WorkKind
from tests.helpers import one_node

MM, VEC = WorkKind.MATMUL, WorkKind.VECTOR


def conv(x, w, b=None, precision="fp32", **attrs):
    ins = [("x", "float32", x), ("w", "float32", w)] + ([("b", "float32", b)] if b else [])
    return one_node("Conv", ins, [("y", "float32", None)], attrs=attrs, precision=precision).work


@pytest.mark.parametrize("x, w, b, attrs, mm, vec, kernels, gemm", [
    # ResNet 3x3, pad 1, bias: 2 * 1*64*56*56 * 64*3*3 = 231211008; bias 64*56*56 = 200704
    ((1, 64, 56, 56), (64, 64, 3, 3), (64,), dict(pads=[1, 1, 1, 1]), 231211008, 200704, 2, (1, 3136, 64, 576)),
    # stem 7x7/2 pad 3, no bias: out 1x64x112x112; 2 * 64*112*112 * 3*7*7 = 236027904
    ((1, 3, 224, 224), (64, 3, 7, 7), None, dict(strides=[2, 2], pads=[3, 3, 3, 3]), 236027904, 0, 1,
     (1, 12544, 64, 147)),
    # groups 2: out 1x16x10x10; 2 * 1600 * (8/2)*3*3 = 115200; per group M=100, N=16/2, K=4*9
    ((1, 8, 10, 10), (16, 4, 3, 3), None, dict(group=2, pads=[1, 1, 1, 1]), 115200, 0, 1, (2, 100, 8, 36)),
    # dilation 2, no pad: out 7 - 2*(3-1) = 3 -> 1x1x3x3; 2 * 9 * 9 = 162
    ((1, 1, 7, 7), (1, 1, 3, 3), None, dict(dilations=[2, 2]), 162, 0, 1, (1, 9, 1, 9)),
    # 1-D conv: out 2x8x16 = 256; 2 * 256 * 4*3 = 6144
    ((2, 4, 16), (8, 4, 3), None, dict(pads=[1, 1]), 6144, 0, 1, (1, 32, 8, 12)),
    # 3-D conv: out 1x3x3x3x3 = 81; 2 * 81 * 2*2*2*2 = 2592
    ((1, 2, 4, 4, 4), (3, 2, 2, 2, 2), None, {}, 2592, 0, 1, (1, 27, 3, 16)),
])
def test_conv_flops_and_kernels(x, w, b, attrs, mm, vec, kernels, gemm):
    work = conv(x, w, b, **attrs)
    assert work.flops.get(MM, 0) == mm
    assert work.flops.get(VEC, 0) == vec
    assert work.kernels == kernels
    assert work.gemm == gemm


def test_conv_bias_is_a_second_kernel_that_rereads_the_output():
    inits = {"w": np.zeros((64, 64, 3, 3), np.float32), "b": np.zeros(64, np.float32)}
    work = one_node("Conv", [("x", "float32", (1, 64, 56, 56)), ("w", "float32", (64, 64, 3, 3)), ("b", "float32", (64,))],
                    [("y", "float32", None)], attrs=dict(pads=[1, 1, 1, 1]), initializers=inits).work
    x_b, w_b, b_b, y_b = 1 * 64 * 56 * 56 * 4, 64 * 64 * 9 * 4, 64 * 4, 64 * 56 * 56 * 4  # 802816 147456 256 802816
    assert work.bytes_read == x_b + w_b + b_b + y_b  # 1753344: conv reads X, W; bias pass reads Y, B
    assert work.bytes_written == 2 * y_b  # 1605632
    assert work.weight_bytes == w_b + b_b  # W and B are initializers: 147712
    assert conv((1, 64, 56, 56), (64, 64, 3, 3), (64,), pads=[1, 1, 1, 1]).weight_bytes == 0  # W, B graph inputs
    assert work.gemm_operand_bytes == x_b + w_b  # 950272
    assert NOTE_BIAS_KERNEL in work.notes


def test_conv_without_bias_has_compulsory_bytes():
    work = conv((1, 3, 224, 224), (64, 3, 7, 7), strides=[2, 2], pads=[3, 3, 3, 3])
    assert work.bytes_read == 3 * 224 * 224 * 4 + 64 * 3 * 49 * 4  # 602112 + 37632 = 639744
    assert work.bytes_written == 64 * 112 * 112 * 4  # 3211264


def test_depthwise_conv_is_vector_work_with_fused_bias():
    # MobileNet depthwise 3x3: groups = Cin = 32; out 1x32x14x14 = 6272
    work = conv((1, 32, 14, 14), (32, 1, 3, 3), (32,), group=32, pads=[1, 1, 1, 1])
    assert MM not in work.flops
    assert work.flops[VEC] == 2 * 6272 * 9 + 6272  # 112896 window FMAs + 6272 bias adds = 119168
    assert work.kernels == 1
    assert work.gemm is None
    assert work.bytes_read == 6272 * 4 + 32 * 9 * 4 + 32 * 4  # 25088 + 1152 + 128 = 26368
    assert NOTE_DEPTHWISE in work.notes
    assert work.rows == 6272  # a thread per output looping over the taps: each output a row of the class's row_s


def test_depthwise_conv_rows_are_its_outputs_strided_or_1d():
    # stride 2: out 1x32x7x7 = 1568 outputs; a 1-D kernel of 7 taps over 1x64x100 (pad 3): 6400 outputs
    assert conv((1, 32, 14, 14), (32, 1, 3, 3), group=32, strides=[2, 2], pads=[1, 1, 1, 1]).rows == 1568
    assert conv((1, 64, 100), (64, 1, 7), (64,), group=64, pads=[3, 3]).rows == 6400
    # a grouped (not depthwise) convolution has none
    assert conv((1, 8, 10, 10), (16, 4, 3, 3), group=2, pads=[1, 1, 1, 1]).rows == 0


def test_large_kernel_grouped_conv_is_cuda_core_work_with_a_bias_pass():
    # wav2vec2's positional convolution: 768 channels, 16 groups, 128 taps, pad 64 on 49 frames -> out 1x768x50
    work = conv((1, 768, 49), (768, 48, 128), (768,), group=16, pads=[64, 64])
    out = 768 * 50  # 38400
    assert MM not in work.flops
    assert work.flops[VEC] == 2 * out * 48 * 128 + out  # 471859200 FMAs x2 + 38400 bias adds = 471897600
    assert work.kernels == 2 and work.gemm is None
    assert work.bytes_read == 768 * 49 * 4 + 768 * 48 * 128 * 4 + 768 * 4 + out * 4  # 150528+18874368+3072+153600
    assert work.bytes_written == 2 * out * 4  # 307200
    assert NOTE_GROUPED_LARGE in work.notes and NOTE_BIAS_KERNEL in work.notes
    # a 3x3 grouped convolution stays an implicit GEMM
    assert MM in conv((1, 8, 10, 10), (16, 4, 3, 3), group=2, pads=[1, 1, 1, 1]).flops


def test_large_kernel_grouped_conv_has_its_own_class():
    from tests.helpers import load_nodes, make_model
    from onnx import helper
    node = helper.make_node("Conv", ["x", "w"], ["y"], group=16, pads=[64, 64])
    g = load_nodes(make_model([node], [("x", "float32", (32, 768, 49)), ("w", "float32", (768, 48, 128))],
                              [("y", "float32", None)]))
    assert hidden_key(g.nodes[0]) == "Conv:grouped_large" and kernel_class(g.nodes[0]) == "grouped_large"


def test_conv_fp16_halves_bytes_and_notes_layout_transforms():
    w32 = conv((1, 64, 56, 56), (64, 64, 3, 3), (64,), pads=[1, 1, 1, 1])
    w16 = conv((1, 64, 56, 56), (64, 64, 3, 3), (64,), precision="fp16", pads=[1, 1, 1, 1])
    assert w16.bytes_read * 2 == w32.bytes_read  # 876672 * 2 = 1753344
    assert w16.bytes_written * 2 == w32.bytes_written
    assert w16.flops == w32.flops
    assert NOTE_LAYOUT in w16.notes and NOTE_LAYOUT not in w32.notes


def test_conv_transpose_with_bias():
    # 4x4 stride 2 pad 1 upsampling: out 1x8x16x16 = 2048
    work = one_node("ConvTranspose", [("x", "float32", (1, 16, 8, 8)), ("w", "float32", (16, 8, 4, 4)),
                                      ("b", "float32", (8,))],
                    [("y", "float32", None)], attrs=dict(strides=[2, 2], pads=[1, 1, 1, 1])).work
    assert work.flops[MM] == 2 * (16 * 8 * 8) * (8 * 4 * 4)  # 2 * in_numel 1024 * 128 = 262144
    assert work.flops[VEC] == 2048  # bias
    assert work.kernels == 2
    assert work.gemm == (1, 64, 128, 16)  # M = 1*8*8, N = 8*4*4, K = 16: 2*64*128*16 = 262144
    assert work.bytes_read == 1024 * 4 + 2048 * 4 + 8 * 4 + 2048 * 4  # X + W + B + Y (bias pass) = 20512


def test_conv_integer_and_qlinear_conv():
    x, w = ("x", "uint8", (1, 8, 6, 6)), ("w", "uint8", (4, 8, 3, 3))
    work = one_node("ConvInteger", [x, w], [("y", "int32", None)], opset=13).work
    assert work.flops[MM] == 2 * 4 * 4 * 4 * 72  # out 1x4x4x4 = 64; 2 * 64 * 8*3*3 = 9216
    assert work.bytes_read == 288 + 288  # uint8 X and W
    assert work.bytes_written == 64 * 4  # int32

    inits = {"xs": np.float32(0.1), "xz": np.uint8(0), "ws": np.float32(0.1), "wz": np.uint8(0),
             "ys": np.float32(0.2), "yz": np.uint8(0)}
    scalars = [("xs", "float32", ()), ("xz", "uint8", ())]
    q = one_node("QLinearConv", [x] + scalars + [w, ("ws", "float32", ()), ("wz", "uint8", ()),
                                                 ("ys", "float32", ()), ("yz", "uint8", ())],
                 [("y", "uint8", None)], initializers=inits, opset=13).work
    assert q.flops[MM] == 9216
    assert q.flops[VEC] == 4 * 64  # bias + requantise epilogue
    assert q.kernels == 1
