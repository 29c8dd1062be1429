"""predictor/amp.py: which node autocast runs at which precision, and the cast kernels it launches."""
import numpy as np
import pytest
from onnx import helper

from predictor.amp import CAST_OP, autocast
from predictor.graph.cost import cost_graph
from predictor.machine.profile import load_profile
from predictor.precision import policy
from predictor.predict import predict_graph
from predictor.types import PredictorError
from tests.helpers import load_nodes, make_model


def _mlp():
    """x[2,4] -> MatMul(W[4,8]) -> Add(b[8]) -> Softmax -> Relu -> y."""
    nodes = [helper.make_node("MatMul", ["x", "W"], ["h"], name="mm"),
             helper.make_node("Add", ["h", "b"], ["hb"], name="bias"),
             helper.make_node("Softmax", ["hb"], ["s"], name="sm", axis=-1),
             helper.make_node("Relu", ["s"], ["y"], name="relu")]
    inits = {"W": np.ones((4, 8), np.float32), "b": np.ones((8,), np.float32)}
    model = make_model(nodes, [("x", "float32", [2, 4])], [("y", "float32", [2, 8])], inits)
    return load_nodes(model)


def test_casts_and_dtypes():
    mg = autocast(_mlp(), "amp")
    casts = [n for n in mg.graph.nodes if n.op_type == CAST_OP]
    # x -> fp16 (activation), W and b -> fp16 (weights), softmax input fp16 -> fp32
    assert mg.casts == 4 and len(casts) == 4
    assert sorted(c.outputs[0].dtype for c in casts) == ["float16", "float16", "float16", "float32"]
    by = {n.name: n for n in mg.graph.nodes}
    assert by["mm"].outputs[0].dtype == "float16" and by["bias"].outputs[0].dtype == "float16"
    assert by["sm"].outputs[0].dtype == "float32" and by["relu"].outputs[0].dtype == "float32"
    assert mg.node_policy["mm"].name == "fp16" and mg.node_policy["bias"].name == "fp16"
    assert mg.node_policy["sm"].name == "fp32" and mg.node_policy["relu"].name == "fp32"
    # topological order kept: every cast comes before its consumer
    order = [n.name for n in mg.graph.nodes]
    assert order.index(next(c.name for c in casts if c.inputs[0].name == "x")) < order.index("mm")


def test_cast_bytes_at_natural_sizes():
    mg = autocast(_mlp(), "amp")
    gc = cost_graph(mg.graph.nodes, policy("amp"), 17, graph_inputs=frozenset({"x"}), node_policies=mg.node_policy)
    cast = {c.name: c for c in gc.costs if c.op_type == CAST_OP}
    x_cast = next(v for k, v in cast.items() if "x::float16" in k)
    assert x_cast.kernels == 1 and x_cast.work.bytes_read == 2 * 4 * 4 and x_cast.work.bytes_written == 2 * 4 * 2
    up = next(v for k, v in cast.items() if "float32" in k)
    assert up.work.bytes_read == 16 * 2 and up.work.bytes_written == 16 * 4
    relu = next(c for c in gc.costs if c.name == "relu")
    assert relu.work.bytes_read == 16 * 4 and relu.work.bytes_written == 16 * 4


def test_casts_are_class_elementwise():
    """An autocast cast is PyTorch's contiguous vectorised elementwise kernel, costed with the elementwise class (not
    the copy class of strided copies and gathers)."""
    from predictor.graph.opclass import kernel_class

    casts = [n for n in autocast(_mlp(), "amp").graph.nodes if n.op_type == CAST_OP]
    assert len(casts) == 4 and {kernel_class(c) for c in casts} == {"elementwise"}


def test_bf16_and_errors():
    mg = autocast(_mlp(), "amp-bf16")
    assert mg.node_policy["mm"].name == "bf16"
    assert {n.outputs[0].dtype for n in mg.graph.nodes if n.name == "mm"} == {"bfloat16"}
    with pytest.raises(PredictorError):
        autocast(_mlp(), "fp16")


def test_predict_amp_counts_the_casts():
    g = _mlp()
    prof = load_profile("h200")
    amp = predict_graph(g, prof, "amp")
    fp16 = predict_graph(g, prof, "fp16")
    assert amp.precision == "amp" and amp.kernels == fp16.kernels + 4
    assert amp.total_time_s > fp16.total_time_s


def test_mixed_residual_add_is_class_elementwise_mixed():
    """An fp16 matmul output added to the fp32 graph input runs PyTorch's casting kernel (elementwise_mixed); the
    same add of two fp32 tensors, or of an fp16 tensor and a scalar weight, stays elementwise."""
    from predictor.graph.opclass import kernel_class, mixed_dtypes

    nodes = [helper.make_node("MatMul", ["x", "W"], ["h"], name="mm"),
             helper.make_node("Add", ["h", "x"], ["r"], name="residual"),
             helper.make_node("Add", ["r", "x"], ["y"], name="fp32_add"),
             helper.make_node("Mul", ["h", "s"], ["z"], name="scaled")]
    inits = {"W": np.ones((4, 4), np.float32), "s": np.ones((1,), np.float32)}
    model = make_model(nodes, [("x", "float32", [2, 4])], [("y", "float32", [2, 4]), ("z", "float32", [2, 4])], inits)
    by = {n.name: n for n in autocast(load_nodes(model), "amp").graph.nodes}
    assert [t.dtype for t in by["residual"].inputs] == ["float16", "float32"]
    assert mixed_dtypes(by["residual"]) and kernel_class(by["residual"]) == "elementwise_mixed"
    assert not mixed_dtypes(by["fp32_add"]) and kernel_class(by["fp32_add"]) == "elementwise"
    assert not mixed_dtypes(by["scaled"]) and kernel_class(by["scaled"]) == "elementwise"


def test_autocast_batch_norm_walks_image_channel_planes():
    """Batch norm on an fp16 convolution output with its fp32 parameters: class norm_amp, one walking block per
    (image, channel) plane of H x W fp16 elements; the same node in a uniform fp16 graph has no walk."""
    from predictor.graph.opclass import kernel_class

    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", kernel_shape=[1, 1]),
             helper.make_node("BatchNormalization", ["c", "s", "b", "m", "v"], ["y"], name="bn")]
    inits = {"w": np.ones((16, 3, 1, 1), np.float32), **{k: np.ones((16,), np.float32) for k in "sbmv"}}
    model = make_model(nodes, [("x", "float32", [4, 3, 8, 8])], [("y", "float32", [4, 16, 8, 8])], inits)
    mg = autocast(load_nodes(model), "amp")
    bn = next(n for n in mg.graph.nodes if n.name == "bn")
    assert kernel_class(bn) == "norm_amp"
    gc = cost_graph(mg.graph.nodes, policy("amp"), 17, graph_inputs=frozenset({"x"}), node_policies=mg.node_policy)
    assert next(c for c in gc.costs if c.name == "bn").work.channel_walk == (4 * 16, 8 * 8 * 2)
    plain = load_nodes(model)
    # a plain 16-bit model's batch norm runs PyTorch's transform kernel: its own grid, no per-byte plane walk
    assert cost_graph(plain.nodes, policy("fp16"), 17).costs[1].work.channel_walk == (64, 0)


def test_autocast_batch_norm_on_rows_does_not_walk():
    """BatchNorm1d on [N, C] (LeViT's attention projections: 6272 x 640) under autocast has no (image, channel) planes:
    cuDNN's per-activation mode, one pass; a walk of N x C one-element blocks priced LeViT-128 at batch 32 6-10x too
    slow (the second blind set's autocast forwards)."""
    nodes = [helper.make_node("MatMul", ["x", "w"], ["c"], name="proj"),
             helper.make_node("BatchNormalization", ["c", "s", "b", "m", "v"], ["y"], name="bn")]
    inits = {"w": np.ones((8, 16), np.float32), **{k: np.ones((16,), np.float32) for k in "sbmv"}}
    model = make_model(nodes, [("x", "float32", [64, 8])], [("y", "float32", [64, 16])], inits)
    mg = autocast(load_nodes(model), "amp")
    gc = cost_graph(mg.graph.nodes, policy("amp"), 17, graph_inputs=frozenset({"x"}), node_policies=mg.node_policy)
    assert next(c for c in gc.costs if c.name == "bn").work.channel_walk is None
