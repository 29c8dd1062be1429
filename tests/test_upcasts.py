"""Explicit fp32 regions of a 16-bit model (predictor/upcasts.py)."""
import numpy as np
from onnx import TensorProto, helper

from predictor.graph.cost import cost_graph
from predictor.graph.loader import load_model_proto
from predictor.precision import policy
from predictor.predict import prepare_graph
from predictor.upcasts import fp32_regions
from tests.helpers import make_model

FLOAT = TensorProto.FLOAT


def _graph(after_cast=("Pow", ["h32", "two"], ["sq"]), first_input="x"):
    # h = x @ W (an activation); h.float() -> pow -> .to(input_dtype) -> y = that @ W2: an RMSNorm-like fp32 region
    op, ins, outs = after_cast
    nodes = [
        helper.make_node("MatMul", [first_input, "w"], ["h"], name="proj"),
        helper.make_node("Cast", ["h"], ["h32"], to=FLOAT, name="up"),
        helper.make_node(op, ins, outs, name="stat"),
        helper.make_node("Cast", [outs[0]], ["back"], to=FLOAT, name="down"),
        helper.make_node("MatMul", ["back", "w2"], ["y"], name="out"),
    ]
    inits = {"w": np.zeros((8, 8), np.float32), "w2": np.zeros((8, 8), np.float32), "two": np.array(2.0, np.float32)}
    model = make_model(nodes, [("x", "float32", [4, 8])], [("y", "float32", None)], inits)
    return load_model_proto(model, batch=None)


def _costs(g, prec="fp16"):
    prepared = prepare_graph(g, policy(prec))
    gc = cost_graph(prepared.graph.nodes, policy(prec), 17, graph_inputs=prepared.graph.input_names,
                    node_policies=prepared.node_policy)
    return prepared, {c.name: c for c in gc.costs}


def test_region_between_an_up_cast_and_a_cast_back():
    g = _graph()
    assert fp32_regions(g) == (frozenset({"stat"}), frozenset({"up"}), frozenset({"down"}))
    prepared, costs = _costs(g)
    assert {n: p.name for n, p in prepared.node_policy.items()} == {"up": "fp16", "stat": "fp32", "down": "fp16"}
    # 32 elements: up reads 2 bytes and writes 4 each, pow reads and writes 4, down reads 4 and writes 2
    assert (costs["up"].kernels, costs["up"].work.bytes_read, costs["up"].work.bytes_written) == (1, 64, 128)
    assert (costs["stat"].work.bytes_read, costs["stat"].work.bytes_written) == (128 + 2, 128)  # the exponent: a 16-bit parameter
    assert (costs["down"].kernels, costs["down"].work.bytes_read, costs["down"].work.bytes_written) == (1, 128, 64)
    assert all(f.precision.value == "fp32" for f in costs["stat"].flops)
    assert costs["out"].work.bytes_read == 64 + 128  # the 16-bit activation and weight, as before


def test_no_region_at_fp32_or_when_weights_refute_it():
    g = _graph()
    _, costs = _costs(g, "fp32")
    assert costs["up"].kernels == 0 and costs["down"].kernels == 0  # float -> float casts stay free
    # the cast feeds a MatMul with weights without casting back: it was a no-op (pixel_values.to(self.dtype))
    nodes = [helper.make_node("Relu", ["x"], ["h"], name="act"),
             helper.make_node("MatMul", ["x", "w"], ["h0"], name="proj"),
             helper.make_node("Cast", ["h0"], ["h32"], to=FLOAT, name="up"),
             helper.make_node("MatMul", ["h32", "w2"], ["y"], name="out")]
    inits = {"w": np.zeros((8, 8), np.float32), "w2": np.zeros((8, 8), np.float32)}
    g2 = load_model_proto(make_model(nodes, [("x", "float32", [4, 8])], [("y", "float32", None)], inits), batch=None)
    assert fp32_regions(g2)[1] == frozenset()


def test_cast_of_a_non_activation_opens_nothing():
    # a graph input cast up (no weights upstream) is taken to give the model's type
    nodes = [helper.make_node("Cast", ["x"], ["x32"], to=FLOAT, name="up"),
             helper.make_node("Pow", ["x32", "two"], ["sq"], name="stat")]
    g = load_model_proto(make_model(nodes, [("x", "float32", [4, 8])], [("sq", "float32", None)],
                                    {"two": np.array(2.0, np.float32)}), batch=None)
    assert fp32_regions(g)[1] == frozenset()


def test_softmax_with_dtype_converts_inside_the_kernel():
    g = _graph(after_cast=("Softmax", ["h32"], ["p"]))
    prepared, costs = _costs(g)
    assert costs["up"].kernels == 0  # softmax(x, dtype=float32) reads the 16-bit scores itself
    assert (costs["stat"].work.bytes_read, costs["stat"].work.bytes_written) == (64, 128)
    assert costs["down"].kernels == 1
