"""Channels-last permutes that PyTorch runs as views (predictor/layout_views.py)."""
import numpy as np
from onnx import helper

from predictor.graph.context import LAYOUT_VIEW
from predictor.graph.fused import channels_last
from predictor.graph.loader import load_model_proto
from predictor.graph.opclass import hidden_key
from tests.helpers import make_model, prepared_costs


def _block(after_back="Mul"):
    # a ConvNeXt block: depthwise conv, permute to NHWC, a channels op, permute back, layer scale, residual add, and
    # the next block's depthwise conv
    nodes = [helper.make_node("Conv", ["x", "w1"], ["c1"], group=8, pads=[1, 1, 1, 1], name="dw1"),
             helper.make_node("Transpose", ["c1"], ["t1"], perm=[0, 2, 3, 1], name="to_nhwc"),
             helper.make_node("Relu", ["t1"], ["r"], name="mlp"),
             helper.make_node("Transpose", ["r"], ["t2"], perm=[0, 3, 1, 2], name="to_nchw")]
    if after_back == "Mul":
        nodes += [helper.make_node("Mul", ["t2", "gamma"], ["s"], name="scale"),
                  helper.make_node("Add", ["s", "x"], ["res"], name="residual"),
                  helper.make_node("Conv", ["res", "w2"], ["y"], group=8, pads=[1, 1, 1, 1], name="dw2")]
    else:  # the permuted tensor is flattened: PyTorch's reshape copies it
        nodes += [helper.make_node("Flatten", ["t2"], ["y"], axis=1, name="flat")]
    inits = {"w1": np.zeros((8, 1, 3, 3), np.float32), "w2": np.zeros((8, 1, 3, 3), np.float32),
             "gamma": np.ones((8, 1, 1), np.float32)}
    model = make_model(nodes, [("x", "float32", [2, 8, 4, 4])], [("y", "float32", None)], inits)
    return load_model_proto(model, batch=None)


def test_permute_back_into_a_residual_and_a_convolution_is_a_view():
    nodes, costs = prepared_costs(_block())
    assert nodes["to_nchw"].attrs.get(LAYOUT_VIEW) and costs["to_nchw"].kernels == 0
    assert channels_last(nodes["dw2"]) and hidden_key(nodes["dw2"]) == "Conv:depthwise_nhwc"
    # the first convolution reads the contiguous network input: NCHW, and its permute to NHWC copies
    assert not channels_last(nodes["dw1"]) and hidden_key(nodes["dw1"]) == "Conv:depthwise"
    assert not nodes["to_nhwc"].attrs.get(LAYOUT_VIEW) and costs["to_nhwc"].kernels == 1
    assert costs["scale"].kernels == 1 and costs["residual"].kernels == 1  # elementwise ops read strided memory
    # cuDNN's NHWC depthwise kernel has no per-output rows; PyTorch's NCHW one has one per output
    assert costs["dw2"].work.rows == 0 and costs["dw1"].work.rows > 0


def test_permute_into_an_op_that_needs_contiguous_memory_stays_a_copy():
    nodes, costs = prepared_costs(_block(after_back="Flatten"))
    assert not any(n.attrs.get(LAYOUT_VIEW) for n in nodes.values())
    assert costs["to_nchw"].kernels == 1


def test_reshaped_tokens_permuted_to_nchw_are_copied():
    """Tokens [B, N, C] reshaped to (B, H, W, C) and permuted to NCHW before a convolution (PVT-v2's, SegFormer's
    spatial reduction): the measured models call .contiguous() there, so the permute is one copy kernel and the
    convolution reads NCHW memory."""
    nodes = [helper.make_node("Reshape", ["tok", "hw"], ["grid"], name="to_grid"),
             helper.make_node("Transpose", ["grid"], ["t"], perm=[0, 3, 1, 2], name="to_nchw"),
             helper.make_node("Conv", ["t", "w"], ["y"], group=8, pads=[1, 1, 1, 1], name="dw")]
    inits = {"hw": np.array([2, 4, 4, 8], np.int64), "w": np.zeros((8, 1, 3, 3), np.float32)}
    model = make_model(nodes, [("tok", "float32", [2, 16, 8])], [("y", "float32", None)], inits)
    got_nodes, costs = prepared_costs(load_model_proto(model, batch=None))
    assert not got_nodes["to_nchw"].attrs.get(LAYOUT_VIEW) and costs["to_nchw"].kernels == 1
    assert not channels_last(got_nodes["dw"]) and hidden_key(got_nodes["dw"]) == "Conv:depthwise"
