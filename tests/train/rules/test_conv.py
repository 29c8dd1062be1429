"""Conv backward: dgrad / wgrad FLOPs, implicit-GEMM shapes, bytes; no dgrad on the image; depthwise, bias."""
from onnx import helper

from predictor.graph.opclass import DEPTHWISE_GRAD_OP, kernel_class
from predictor.types import WorkKind
from tests.train.util import graph_of, kernels_of, plan, rng_w

MM, VEC = WorkKind.MATMUL, WorkKind.VECTOR


def two_convs():
    # x [2,16,8,8] -conv1 3x3 pad 1-> [2,32,8,8] -conv2 3x3 stride 2 pad 1-> [2,8,4,4]
    nodes = [helper.make_node("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1], name="conv1"),
             helper.make_node("Conv", ["c1", "w2"], ["c2"], pads=[1, 1, 1, 1], strides=[2, 2], name="conv2")]
    return graph_of(nodes, [("x", "float32", [2, 16, 8, 8])], [("c2", "float32", None)],
                    {"w1": rng_w(32, 16, 3, 3), "w2": rng_w(8, 32, 3, 3)})


def test_first_conv_has_no_dgrad_and_the_gemm_shapes():
    p = plan(two_convs())
    k1, k2 = kernels_of(p, "conv1"), kernels_of(p, "conv2")
    assert set(k1) == {"wgrad"}  # the image needs no gradient
    assert set(k2) == {"dgrad", "wgrad"}
    # conv1: 2 * (2*32*8*8) * (16*3*3) = 1179648; wgrad GEMM (g, Cout, Cin*k*k, N*Ho*Wo) = (1, 32, 144, 128)
    assert k1["wgrad"].work.flops[MM] == 1179648 and k1["wgrad"].work.gemm == (1, 32, 144, 128)
    # conv2: 2 * (2*8*4*4) * (32*3*3) = 147456; dgrad (1, N*H*W, Cin, Cout*k*k/stride^2) = (1, 128, 32, 18)
    assert k2["dgrad"].work.flops[MM] == 147456 == 2 * 128 * 32 * 18
    assert k2["dgrad"].work.gemm == (1, 128, 32, 18)
    assert k2["wgrad"].work.gemm == (1, 8, 288, 32) and k2["wgrad"].work.flops[MM] == 147456


def test_dgrad_and_wgrad_bytes():
    k2 = kernels_of(plan(two_convs()), "conv2")
    gy, w, gx, x = 2 * 8 * 16 * 4, 8 * 32 * 9 * 4, 2 * 32 * 64 * 4, 2 * 32 * 64 * 4  # 1024 9216 16384 16384
    d, wg = k2["dgrad"].work, k2["wgrad"].work
    assert (d.bytes_read, d.bytes_written, d.gemm_operand_bytes) == (gy + w, gx, gy + w)
    assert d.weight_bytes == w  # W is a parameter
    assert (wg.bytes_read, wg.bytes_written) == (gy + x, w)
    assert [t.name for t in k2["dgrad"].writes] == ["grad::c1"]
    assert [t.name for t in k2["wgrad"].writes] == ["grad::w2"]


def test_depthwise_and_bias():
    nodes = [helper.make_node("Conv", ["x", "w0"], ["a"], name="pre"),
             helper.make_node("Conv", ["a", "w", "b"], ["y"], group=8, pads=[1, 1, 1, 1], name="dw")]
    g = graph_of(nodes, [("x", "float32", [1, 8, 6, 6])], [("y", "float32", None)],
                 {"w0": rng_w(8, 8, 1, 1), "w": rng_w(8, 1, 3, 3), "b": rng_w(8)})
    k = kernels_of(plan(g), "dw")
    assert set(k) == {"dgrad", "wgrad", "bgrad"}
    # depthwise: 2 * 288 * 9 = 5184 CUDA-core FLOPs each, no GEMM
    assert k["dgrad"].work.flops == {VEC: 5184} and k["dgrad"].work.gemm is None
    assert k["wgrad"].work.flops == {VEC: 5184}
    assert k["bgrad"].op_type == "ReduceSum" and k["bgrad"].work.bytes_written == 8 * 4
    # PyTorch's own depthwise backward kernels: class depthwise_grad, fitted on training steps
    assert k["dgrad"].op_type == k["wgrad"].op_type == DEPTHWISE_GRAD_OP
    assert kernel_class(k["wgrad"].node()) == "depthwise_grad"
    assert kernel_class(kernels_of(plan(two_convs()), "conv2")["wgrad"].node()) == "conv"
