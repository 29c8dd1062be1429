"""Calibration classes of nodes (predictor/graph/opclass.py): broadcasting elementwise kernels."""
import numpy as np
import pytest
from onnx import helper

from predictor.graph.opclass import broadcasts, kernel_class
from tests.helpers import load_nodes, make_model


def _add(a_shape, b_shape, b_init=False):
    nodes = [helper.make_node("Add", ["a", "b"], ["y"], name="add")]
    inputs = [("a", "float32", list(a_shape))] + ([] if b_init else [("b", "float32", list(b_shape))])
    inits = {"b": np.ones(b_shape, np.float32)} if b_init else None
    g = load_nodes(make_model(nodes, inputs, [("y", "float32", None)], inits))
    return g.nodes[0]


@pytest.mark.parametrize("a, b, b_init, cls", [
    ((4, 8, 16), (4, 8, 16), False, "elementwise"),          # same shapes: PyTorch's vectorised kernel
    ((4, 8, 16), (1, 8, 16), False, "elementwise_broadcast"),  # a batch-broadcast mask
    ((8, 16), (1, 8, 16), False, "elementwise"),             # leading 1s only: still contiguous
    ((4, 8, 16), (16,), True, "elementwise_broadcast"),      # a bias or LayerScale vector over the last axis
    ((4, 8, 16), (1,), True, "elementwise"),                 # a one-element scalar
])
def test_broadcasting_elementwise_is_its_own_class(a, b, b_init, cls):
    node = _add(a, b, b_init)
    assert kernel_class(node) == cls
    assert broadcasts(node) == (cls == "elementwise_broadcast")


def test_a_unary_node_never_broadcasts():
    g = load_nodes(make_model([helper.make_node("Relu", ["a"], ["y"], name="relu")], [("a", "float32", [4, 8])],
                              [("y", "float32", None)]))
    assert not broadcasts(g.nodes[0]) and kernel_class(g.nodes[0]) == "elementwise"


def test_grid_sample_indexes_its_inputs_itself():
    # x [2, 3, 8, 8] sampled at a [2, 5, 5, 2] grid: inputs of other shapes by design, one grid_sampler kernel, not
    # TensorIterator's broadcast loop (Mask2Former's deformable attention in the H200 kernel tables)
    nodes = [helper.make_node("GridSample", ["x", "grid"], ["y"], name="gs")]
    g = load_nodes(make_model(nodes, [("x", "float32", [2, 3, 8, 8]), ("grid", "float32", [2, 5, 5, 2])],
                              [("y", "float32", None)], opset=16))
    assert broadcasts(g.nodes[0]) and kernel_class(g.nodes[0]) == "elementwise"


def _matmul(a_shape, b_shape, b_init):
    nodes = [helper.make_node("MatMul", ["a", "b"], ["y"], name="mm")]
    inputs = [("a", "float32", list(a_shape))] + ([] if b_init else [("b", "float32", list(b_shape))])
    inits = {"b": np.ones(b_shape, np.float32)} if b_init else None
    return load_nodes(make_model(nodes, inputs, [("y", "float32", None)], inits)).nodes[0]


@pytest.mark.parametrize("a, b, b_init, cls", [
    ((2, 196, 196, 4), (4, 4), True, "gemm_thin"),        # CaiT's 4 x 4 mixing: a thin linear layer
    ((2, 196, 196, 8), (8, 8), True, "gemm_thin"),        # aligned, still thin (cuBLAS's 8-wide nvjet tiles)
    ((8, 196, 4), (8, 4, 4), False, "gemm_unaligned"),    # B an activation: an unaligned batched product
    ((2, 196, 64), (64, 64), True, "gemm"),               # an ordinary aligned linear layer
    ((2, 196, 196), (196, 64), True, "gemm_unaligned"),   # gMLP's 196-token projection: unaligned, not thin
])
def test_thin_linear_layers_are_their_own_class(a, b, b_init, cls):
    assert kernel_class(_matmul(a, b, b_init)) == cls


def _gemm(a_shape, trans_a=0):
    w = np.ones((1000, 2048), np.float32)
    nodes = [helper.make_node("Gemm", ["a", "w"], ["y"], name="fc", transB=1, transA=trans_a)]
    return load_nodes(make_model(nodes, [("a", "float32", list(a_shape))], [("y", "float32", None)], {"w": w})).nodes[0]


@pytest.mark.parametrize("a, b, b_init, cls", [
    ((1, 2048), (2048, 1000), True, "gemv"),      # a classifier head at batch 1
    ((1, 1, 512), (512, 562), True, "gemv"),      # a decoder step's projection, K not a multiple of 8: still one row
    ((2048,), (2048, 1000), True, "gemv"),        # a 1-D activation
    ((2, 2048), (2048, 1000), True, "gemm"),      # two rows: a tiled GEMM
    ((1, 256, 512), (512, 512), True, "gemm"),    # 256 rows at batch 1
    ((1, 1, 256), (1, 256, 512), False, "gemm"),  # B an activation (a batched product): not a linear layer
])
def test_one_row_linear_layers_are_class_gemv(a, b, b_init, cls):
    assert kernel_class(_matmul(a, b, b_init)) == cls


def test_a_one_row_gemm_is_class_gemv():
    """Gemm's A [1, K] (or [K, 1] under transA) with a weight: the exporters' classifier head at batch 1."""
    assert kernel_class(_gemm((1, 2048))) == "gemv"
    assert kernel_class(_gemm((2048, 1), trans_a=1)) == "gemv"
    assert kernel_class(_gemm((8, 2048))) == "gemm"


@pytest.mark.parametrize("precision, cls", [("fp32", "gemv"), ("tf32", "gemv"), ("fp16", "gemm"), ("bf16", "gemm"),
                                            (None, "gemv")])
def test_one_row_layers_are_gemv_only_where_cublas_runs_gemv(precision, cls):
    """At 16-bit cuBLAS runs its 8-row GEMM tiles for one row (no gemv kernel): the op's GEMM class prices them."""
    assert kernel_class(_matmul((1, 2048), (2048, 1000), True), precision=precision) == cls
    assert kernel_class(_gemm((1, 2048)), "Gemm", precision) == cls
    assert kernel_class(_matmul((8, 2048), (2048, 1000), True), precision=precision) == "gemm"
