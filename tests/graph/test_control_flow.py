"""graph/control_flow.py: If/Loop/Scan bodies are inlined and costed (branch taken, trips repeated)."""
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from predictor.graph import control_flow
from predictor.graph.loader import load_model_proto
from predictor.machine.profile import load_profile
from predictor.predict import predict_graph
from tests.helpers import make_model

X = ("x", "float32", [4, 8])          # 32 elements
W = np.zeros((8, 16), np.float32)     # x @ w: 2 * 4 * 8 * 16 = 1024 FLOPs


def _vi(name, elem=TensorProto.FLOAT, shape=(4, 8)):
    return helper.make_tensor_value_info(name, elem, list(shape) if shape is not None else None)


def _branches():
    then_g = helper.make_graph([helper.make_node("Relu", ["x"], ["t_out"])], "then", [], [_vi("t_out")])
    else_g = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["e_mm"]),
                                helper.make_node("Slice", ["e_mm", "starts", "ends", "axes"], ["e_out"])],
                               "else", [], [_vi("e_out")])
    return then_g, else_g


def _if_model(cond_nodes, extra_inputs=()):
    then_g, else_g = _branches()
    nodes = list(cond_nodes) + [helper.make_node("If", ["cond"], ["y"], name="branchy", then_branch=then_g,
                                                 else_branch=else_g)]
    inits = {"w": W, "starts": np.array([0], np.int64), "ends": np.array([8], np.int64),
             "axes": np.array([1], np.int64)}
    return make_model(nodes, [X, *extra_inputs], [("y", "float32", [4, 8])], initializers=inits)


def _predict(model, **opts):
    with control_flow.options(**opts):
        g = load_model_proto(model)
    return predict_graph(g, load_profile("h200"))


def _flops(pred, op_type):
    return sum(o.cost.total_flops for o in pred.ops if o.cost.op_type == op_type)


def _const_bool(value):
    return helper.make_node("Constant", [], ["cond"], value=helper.make_tensor("c", TensorProto.BOOL, [], [value]))


def test_constant_condition_takes_its_branch():
    pred = _predict(_if_model([_const_bool(True)]))
    assert _flops(pred, "Relu") == 32 and _flops(pred, "MatMul") == 0        # then: one max per element
    assert not pred.unsupported
    assert any("condition is known (True): costed the then branch" in n for n in pred.notes)
    pred = _predict(_if_model([_const_bool(False)]))
    assert _flops(pred, "MatMul") == 1024 and _flops(pred, "Relu") == 0      # else: 2 * 4 * 8 * 16


def _shape_cond():
    # cond = (x.shape[0] == 1): folded by the loader from the bound batch
    return [helper.make_node("Shape", ["x"], ["s"]),
            helper.make_node("Gather", ["s", "zero"], ["d0"], axis=0),
            helper.make_node("Equal", ["d0", "one"], ["cond"])]


def test_shape_derived_condition_is_folded():
    m = _if_model(_shape_cond())
    m.graph.initializer.extend([numpy_helper.from_array(np.array(0, np.int64), "zero"),
                                numpy_helper.from_array(np.array(1, np.int64), "one")])
    m.graph.input[0].type.tensor_type.shape.dim[0].dim_param = "batch"
    with control_flow.options():
        g1 = load_model_proto(_copy(m), batch=1)
        g4 = load_model_proto(_copy(m), batch=4)
    p1, p4 = predict_graph(g1, load_profile("h200")), predict_graph(g4, load_profile("h200"))
    assert _flops(p1, "Relu") == 8 and _flops(p1, "MatMul") == 0              # batch 1: then, 1 * 8 elements
    assert _flops(p4, "MatMul") == 1024 and _flops(p4, "Relu") == 0            # batch 4: else


def _copy(m):
    c = type(m)()
    c.CopyFrom(m)
    return c


def test_data_condition_reports_both_and_takes_the_larger():
    flag = ("cond", "bool", [])
    pred = _predict(_if_model([], extra_inputs=[flag]))
    assert _flops(pred, "MatMul") == 1024 and _flops(pred, "Relu") == 0      # the MatMul branch is slower
    note = next(n for n in pred.notes if "condition is data" in n)
    assert "then branch" in note and "else branch" in note and "costed the larger (else" in note
    pred = _predict(_if_model([], extra_inputs=[flag]), branch="then")
    assert _flops(pred, "Relu") == 32 and _flops(pred, "MatMul") == 0


def _loop_model(trip_source):
    # body: (iter, cond, acc) -> (cond, acc + x); plus a scan output relu(acc) of shape [4, 8] per iteration
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Add", ["acc_in", "x"], ["acc_out"]),
         helper.make_node("Relu", ["acc_in"], ["scan_out"])],
        "body", [_vi("iter", TensorProto.INT64, ()), _vi("cond_in", TensorProto.BOOL, ()), _vi("acc_in")],
        [_vi("cond_out", TensorProto.BOOL, ()), _vi("acc_out"), _vi("scan_out")])
    nodes = list(trip_source) + [helper.make_node("Loop", ["M", "", "acc0"], ["acc", "stacked"], name="loopy",
                                                  body=body)]
    inputs = [X, ("acc0", "float32", [4, 8])]
    if not trip_source:
        inputs.append(("M", "int64", []))
    return make_model(nodes, inputs, [("acc", "float32", [4, 8]), ("stacked", "float32", None)])


def test_loop_with_constant_trip_count_repeats_its_body():
    m = _loop_model([helper.make_node("Constant", [], ["M"], value=helper.make_tensor("m", TensorProto.INT64, [], [5]))])
    pred = _predict(m)
    assert _flops(pred, "Add") == 5 * 32 and _flops(pred, "Relu") == 5 * 32     # 5 iterations x 32 elements
    assert not pred.unsupported
    stack = next(o for o in pred.ops if o.cost.op_type == "Expand")
    assert stack.cost.kernels == 1                      # stacking the scan output: one copy of 5 x 4 x 8 floats
    assert stack.cost.work.bytes_written == 5 * 32 * 4
    assert not any(o.cost.op_type == "Loop" for o in pred.ops)
    assert any("body costed 5 times" in n for n in pred.notes)


def test_loop_with_data_trip_count_is_named_or_given():
    pred = _predict(_loop_model([]))
    assert _flops(pred, "Add") == 32                                            # one iteration costed ...
    assert pred.unsupported == {"Loop (trip count is data)": 1}                 # ... and said so
    pred = _predict(_loop_model([]), loop_trips={"loopy": 12})
    assert _flops(pred, "Add") == 12 * 32 and not pred.unsupported


def test_scan_runs_its_body_per_sequence_element():
    # running sum over a [7, 4, 8] sequence: state s [4, 8], per step s + x_t
    body = helper.make_graph([helper.make_node("Add", ["s_in", "x_t"], ["s_out"]),
                              helper.make_node("Identity", ["s_out"], ["y_t"])],
                             "body", [_vi("s_in"), _vi("x_t")], [_vi("s_out"), _vi("y_t")])
    node = helper.make_node("Scan", ["s0", "seq"], ["s_final", "ys"], name="scanny", body=body, num_scan_inputs=1)
    m = make_model([node], [("s0", "float32", [4, 8]), ("seq", "float32", [7, 4, 8])],
                   [("s_final", "float32", [4, 8]), ("ys", "float32", [7, 4, 8])])
    pred = _predict(m)
    assert _flops(pred, "Add") == 7 * 32                                         # 7 steps x 32 elements
    assert not pred.unsupported
    (gather,) = [o for o in pred.ops if o.cost.op_type == "Gather"]
    assert gather.cost.kernels == 0 and gather.cost.work.bytes_written == 0  # seq[t] per step: a select, a view
    (stack,) = [o for o in pred.ops if o.cost.op_type == "Expand"]
    assert stack.cost.work.bytes_written == 7 * 32 * 4                            # ys stacked once: 7 x 128 B


def test_nested_if_inside_loop_multiplies():
    inner_then = helper.make_graph([helper.make_node("Relu", ["acc_in"], ["r"])], "t", [], [_vi("r")])
    inner_else = helper.make_graph([helper.make_node("Neg", ["acc_in"], ["r2"])], "e", [], [_vi("r2")])
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Constant", [], ["k"], value=helper.make_tensor("kv", TensorProto.BOOL, [], [True])),
         helper.make_node("If", ["k"], ["acc_out"], name="inner", then_branch=inner_then, else_branch=inner_else)],
        "body", [_vi("iter", TensorProto.INT64, ()), _vi("cond_in", TensorProto.BOOL, ()), _vi("acc_in")],
        [_vi("cond_out", TensorProto.BOOL, ()), _vi("acc_out")])
    nodes = [helper.make_node("Constant", [], ["M"], value=helper.make_tensor("m", TensorProto.INT64, [], [3])),
             helper.make_node("Loop", ["M", "", "x"], ["acc"], name="outer", body=body)]
    pred = _predict(make_model(nodes, [X], [("acc", "float32", [4, 8])]))
    assert _flops(pred, "Relu") == 3 * 32 and _flops(pred, "Neg") == 0          # inner then-branch, 3 times
    assert not pred.unsupported


def test_branch_option_is_checked():
    with pytest.raises(ValueError):
        with control_flow.options(branch="both"):
            pass


def test_cli_loop_trips_and_unknown_name(tmp_path, capsys):
    import onnx

    from predictor.cli import main

    path = tmp_path / "loop.onnx"
    onnx.save(_loop_model([]), str(path))
    assert main([str(path), "--gpu", "h200", "--format", "json"]) == 0
    import json

    doc = json.loads(capsys.readouterr().out)
    assert doc["unsupported"] == {"Loop (trip count is data)": 1}
    assert main([str(path), "--gpu", "h200", "--loop-trips", "loopy=4", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["unsupported"] == {} and any("body costed 4 (--loop-trips) times" in n for n in doc["notes"])
    assert main([str(path), "--gpu", "h200", "--loop-trips", "nope=4"]) == 2
    assert "error: --loop-trips names no Loop node: nope (Loops: loopy)" in capsys.readouterr().err


def test_no_shape_stop_note_at_a_control_node():
    """Branches of different ranks: the first load knows no shape for the If's output (its folded branch is inlined
    afterwards), and no note names the If as where shapes stop (graph/loader.py's _shape_stop)."""
    then_g = helper.make_graph([helper.make_node("Relu", ["x"], ["t_out"])], "then", [], [_vi("t_out", shape=None)])
    else_g = helper.make_graph([helper.make_node("Reshape", ["x", "flat"], ["e_out"])], "else", [],
                               [_vi("e_out", shape=None)])
    nodes = [_const_bool(False), helper.make_node("If", ["cond"], ["y"], name="branchy", then_branch=then_g,
                                                  else_branch=else_g), helper.make_node("Relu", ["y"], ["z"])]
    model = make_model(nodes, [X], [("z", "float32", None)], initializers={"flat": np.array([-1], np.int64)})
    pred = _predict(model)
    assert not pred.unsupported and _flops(pred, "Relu") == 32
    assert not [n for n in pred.notes if n.startswith("shapes stay unknown")]


def _rank_if(name: str, src: str, out: str, cond_nodes: list, cond: str) -> list:
    """``out`` = src (else) or src flattened (then), on ``cond``; the node list computing the condition first."""
    then_g = helper.make_graph([helper.make_node("Reshape", [src, "flat"], [name + "_t"])], name + "_then", [],
                               [_vi(name + "_t", shape=None)])
    else_g = helper.make_graph([helper.make_node("Identity", [src], [name + "_e"])], name + "_else", [],
                               [_vi(name + "_e", shape=None)])
    return cond_nodes + [helper.make_node("If", [cond], [out], name=name, then_branch=then_g, else_branch=else_g)]


def _rank_is_zero(src: str, cond: str) -> list:
    return [helper.make_node("Shape", [src], [cond + "_shape"]), helper.make_node("Size", [cond + "_shape"],
                                                                                   [cond + "_rank"]),
            helper.make_node("Equal", [cond + "_rank", "zero"], [cond])]


def test_condition_on_another_ifs_output_folds_once_that_if_is_inlined():
    # torch_geometric's traced scatter: an If on the rank of another If's output (a data condition until the first
    # If is inlined, a shape fact after): it takes its else branch, so the Add sees x's shape, not a flattened one
    nodes = (_rank_if("first", "x", "a", _rank_is_zero("x", "c1"), "c1")
             + _rank_if("second", "a", "b", _rank_is_zero("a", "c2"), "c2")
             + [helper.make_node("Add", ["b", "x"], ["y"])])
    model = make_model(nodes, [X], [("y", "float32", None)],
                       initializers={"flat": np.array([-1], np.int64), "zero": np.array(0, np.int64)})
    g = load_model_proto(model)
    assert next(n for n in g.nodes if n.op_type == "Add").outputs[0].shape == (4, 8)
    assert "If 'second': condition is known (False): costed the else branch" in g.control.notes
    assert not g.control.conditions and not any(n.name.endswith(control_flow.CONDITION_PROBE + "/wire")
                                                for n in g.nodes)


def test_a_data_condition_leaves_no_probe_in_the_graph():
    g = load_model_proto(_if_model([], extra_inputs=[("cond", "bool", [])]))
    assert dict(g.control.conditions) == {"branchy": "cond"}
    assert not any(n.outputs[0].name == "branchy" + control_flow.CONDITION_PROBE for n in g.nodes)
