"""Inputs the onnx package's test models use: empty tensors (a zero dimension), sequence and optional graph
inputs, and sizes that are data with the model's declared output shapes standing in for them."""
import numpy as np
import pytest
from onnx import TensorProto, helper

from predictor.graph.loader import load_model_proto
from predictor.machine.profile import load_profile
from predictor.predict import predict_graph
from predictor.types import PredictorError
from tests.helpers import make_model, one_node


def _predict(model):
    return predict_graph(load_model_proto(model), load_profile("h200"))


def test_empty_output_costs_nothing():
    """Relu over x[2, 0]: nothing to compute, and runtimes launch no kernel for an empty output."""
    c = one_node("Relu", [("x", "float32", [2, 0])], [("y", "float32", None)])
    assert (c.kernels, c.total_flops, c.work.bytes_read, c.work.bytes_written) == (0, 0, 0.0, 0.0)
    assert c.work.notes == ("empty output (a zero dimension): no kernel",)
    pred = _predict(make_model([helper.make_node("Relu", ["x"], ["y"])], [("x", "float32", [3, 0, 5])],
                               [("y", "float32", None)]))
    assert not pred.unsupported and pred.total_time_s == 0.0


def test_reduction_over_an_empty_axis_writes_its_output():
    """ReduceSum of x[2, 0, 4] over axis 1 (keepdims): no element is read, the [2, 1, 4] output is written
    (the sum of nothing, 0): 8 float32 = 32 bytes, one kernel."""
    c = one_node("ReduceSum", [("x", "float32", [2, 0, 4]), ("axes", "int64", [1])], [("y", "float32", None)],
                 initializers={"axes": np.array([1], np.int64)})
    assert c.kernels == 1 and c.work.bytes_written == 32.0
    assert c.work.bytes_read == 8.0  # the axes initializer (one int64); the data tensor is empty


def test_rank1_zero_input_is_empty_but_a_leading_zero_of_higher_rank_is_a_batch():
    m = make_model([helper.make_node("Relu", ["x"], ["y"])], [("x", "float32", [0])], [("y", "float32", None)])
    assert load_model_proto(m).input_bindings["x"] == (0,)
    m = make_model([helper.make_node("Relu", ["x"], ["y"])], [("x", "float32", [0, 3])], [("y", "float32", None)])
    assert load_model_proto(m, batch=4).input_bindings["x"] == (4, 3)   # 0 on the leading axis: a dynamic batch


def test_shape_option_still_refuses_a_zero():
    m = make_model([helper.make_node("Relu", ["x"], ["y"])], [("x", "float32", ["N", 3])], [("y", "float32", None)])
    with pytest.raises(PredictorError, match=r"dimension 0 out of range"):
        load_model_proto(m, shapes={"x": (2, 0)})


def _container_model(type_proto, op="Identity"):
    g = helper.make_graph([helper.make_node(op, ["s"], ["t"])], "g", [helper.make_value_info("s", type_proto)],
                          [helper.make_value_info("t", type_proto)])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])


def test_sequence_input_is_accepted_and_its_ops_named():
    seq = helper.make_sequence_type_proto(helper.make_tensor_type_proto(TensorProto.FLOAT, [2, 3]))
    g = load_model_proto(_container_model(seq, "SequenceLength"))
    assert g.inputs[0].dtype == "sequence" and g.inputs[0].shape is None and "s" not in g.input_bindings
    pred = predict_graph(g, load_profile("h200"))
    assert dict(pred.unsupported) == {"SequenceLength": 1}
    # an op with a formula that needs the shape is named as reading a sequence, not as an unknown shape
    pred = _predict(_container_model(seq, "Relu"))
    assert dict(pred.unsupported) == {"Relu (sequence value)": 1}


def test_optional_input_is_accepted():
    opt = helper.make_optional_type_proto(helper.make_tensor_type_proto(TensorProto.FLOAT, [4]))
    g = load_model_proto(_container_model(opt, "OptionalHasElement"))
    assert g.inputs[0].dtype == "optional"
    assert dict(predict_graph(g, load_profile("h200")).unsupported) == {"OptionalHasElement": 1}


def test_shape_option_on_a_sequence_input_is_an_error():
    seq = helper.make_sequence_type_proto(helper.make_tensor_type_proto(TensorProto.FLOAT, [2]))
    with pytest.raises(PredictorError, match=r"--shape s: input 's' is a sequence value, not a tensor"):
        load_model_proto(_container_model(seq), shapes={"s": (2,)})


def _slice_by_data(out_shape):
    """Slice x[4, 8] with starts/ends given as graph inputs (data): the output shape is declared only."""
    node = helper.make_node("Slice", ["x", "starts", "ends"], ["y"])
    return make_model([node], [("x", "float32", [4, 8]), ("starts", "int64", [2]), ("ends", "int64", [2])],
                      [("y", "float32", out_shape)])


def test_declared_output_shape_stands_in_for_sizes_that_are_data():
    """The model declares y[2, 8] and its inputs are fixed: the Slice is costed as one copy of 16 floats
    (64 bytes written), and a note says where the shape came from."""
    pred = _predict(_slice_by_data([2, 8]))
    assert not pred.unsupported
    (op,) = [o for o in pred.ops if o.cost.op_type == "Slice"]
    assert op.cost.work.bytes_written == 64.0
    assert any("taken from the model's declared shapes" in n for n in pred.notes)


def test_declared_shape_not_used_when_an_input_is_symbolic():
    node = helper.make_node("Slice", ["x", "starts", "ends"], ["y"])
    m = make_model([node], [("x", "float32", ["N", 8]), ("starts", "int64", [2]), ("ends", "int64", [2])],
                   [("y", "float32", [2, 8])])
    assert dict(_predict(m).unsupported) == {"Slice (unknown shape)": 1}


def _reduce_l2_expanded(castlike: bool):
    """ReduceL2 as the onnx function expands it: Mul, ReduceSum over axes given as data, Cast to double, Sqrt,
    then CastLike (or Cast) back to float before the declared output y[3, 2, 1]."""
    nodes = [helper.make_node("Mul", ["x", "x"], ["sq"]),
             helper.make_node("ReduceSum", ["sq", "axes"], ["s"], keepdims=1),
             helper.make_node("Cast", ["s"], ["s64"], to=TensorProto.DOUBLE),
             helper.make_node("Sqrt", ["s64"], ["r"]),
             helper.make_node("CastLike", ["r", "x"], ["y"]) if castlike else
             helper.make_node("Cast", ["r"], ["y"], to=TensorProto.FLOAT)]
    return make_model(nodes, [("x", "float32", [3, 2, 2]), ("axes", "int64", [1])], [("y", "float32", [3, 2, 1])])


@pytest.mark.parametrize("castlike", [True, False])
def test_declared_output_shape_passes_back_through_cast_and_castlike(castlike):
    """The declared y[3, 2, 1] reaches the ReduceSum through CastLike/Cast, Sqrt and Cast: each tensor takes
    the shape, and the type its producer writes (ReduceSum: float32, Cast: double)."""
    g = load_model_proto(_reduce_l2_expanded(castlike))
    by_out = {n.outputs[0].name: n.outputs[0] for n in g.nodes}
    assert [(by_out[k].dtype, by_out[k].shape) for k in ("s", "s64", "r", "y")] == [
        ("float32", (3, 2, 1)), ("float64", (3, 2, 1)), ("float64", (3, 2, 1)), ("float32", (3, 2, 1))]
    pred = predict_graph(g, load_profile("h200"))
    assert not pred.unsupported
    (reduce,) = [o for o in pred.ops if o.cost.op_type == "ReduceSum"]
    assert reduce.cost.work.bytes_written == 24.0   # 6 float32
    assert not any("declared" in n and "unknown" in n for n in pred.notes)
