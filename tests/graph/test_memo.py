"""Per-node results reused across nodes alike but for their names (graph/memo.py): exact, and never shared
between nodes that differ."""
from __future__ import annotations

import dataclasses

import numpy as np
from onnx import helper

from predictor.calibrate import Uncalibrated
from predictor.graph.cost import cost_graph, node_work
from predictor.graph.loader import load_model_proto
from predictor.graph.memo import node_key, with_names, work_template
from predictor.graph.traffic import traffic_for
from predictor.machine.profile import load_profile
from predictor.precision import policy
from predictor.predict import _with_cost, predict_graph
from predictor.types import Bound, OpPrediction, OpWork, WorkKind, frozen_map
from tests.helpers import make_model


def _layers(n: int = 3):
    """x -> (MatMul W_i -> Relu) x n, every W_i [64, 64]: n layers alike but for their names."""
    nodes, inits, cur = [], {}, "x"
    for i in range(n):
        inits[f"w{i}"] = np.zeros((64, 64), np.float32)
        nodes += [helper.make_node("MatMul", [cur, f"w{i}"], [f"m{i}"], name=f"mm{i}"),
                  helper.make_node("Relu", [f"m{i}"], [f"r{i}"], name=f"relu{i}")]
        cur = f"r{i}"
    model = make_model(nodes, [("x", "float32", [8, 64])], [(cur, "float32", None)], inits)
    return load_model_proto(model)


def test_reused_work_is_each_nodes_own():
    g = _layers()
    pol = policy("fp16")
    gc = cost_graph(g.nodes, pol, 17, runtime_patterns=False)
    assert len(gc.costs) == 6
    for node, c in zip(g.nodes, gc.costs):
        assert c.name == node.name
        assert c.work == node_work(node, pol, 17)  # input_bytes named after this node's own inputs
    assert set(gc.costs[2].work.input_bytes) == {"r0", "w1"}


def test_predictions_equal_those_made_one_by_one():
    g = _layers()
    prof = load_profile("h200")
    pred = predict_graph(g, prof, "fp16", Uncalibrated())
    gc = cost_graph(g.nodes, policy("fp16"), 17, traffic_for(prof), frozenset({"x"}))
    for o, c, node in zip(pred.ops, gc.costs, g.nodes):
        assert o == Uncalibrated().predict_op(node, c, prof, policy("fp16"))
        assert o.cost.name == node.name


def test_keys_tell_apart_what_formulas_read():
    mk = lambda nodes, inputs, inits=None: load_model_proto(make_model(nodes, inputs, [("y", "float32", None)],
                                                                        inits)).nodes[-1]
    spec = [("a", "float32", [4, 8]), ("b", "float32", [4, 8])]
    same = mk([helper.make_node("Mul", ["a", "a"], ["y"])], spec[:1])
    other = mk([helper.make_node("Mul", ["a", "b"], ["y"])], spec)
    assert node_key(same) != node_key(other)  # one tensor read twice vs two tensors
    shape1 = mk([helper.make_node("Reshape", ["a", "s"], ["y"])], spec[:1], {"s": np.array([8, 4])})
    shape2 = mk([helper.make_node("Reshape", ["a", "s"], ["y"])], spec[:1], {"s": np.array([32, 1])})
    assert node_key(shape1) != node_key(shape2)  # known input values
    wide = mk([helper.make_node("Softmax", ["a"], ["y"], axis=0)], spec[:1])
    narrow = mk([helper.make_node("Softmax", ["a"], ["y"], axis=1)], spec[:1])
    assert node_key(wide) != node_key(narrow)  # attributes


def test_copies_keep_every_field():
    """with_names and _with_cost build the dataclasses field by field: a field added later must not be lost."""
    w = OpWork(flops=frozen_map({WorkKind.MATMUL: 3.0}), bytes_read=5.0, bytes_written=6.0, kernels=2,
               weight_bytes=1.0, notes=("n",), input_bytes=frozen_map({"a": 5.0}), gemm=(1, 2, 3, 4),
               gemm_operand_bytes=4.0, rows=7, overlaps_producer=True, runtime_kernel="Attention", channel_walk=(3, 9),
               attention_tiles=(8, 197, 64, 197), attention_causal=True, thread_loop=(6, 256))
    assert {f.name for f in dataclasses.fields(OpWork)} == {
        "flops", "bytes_read", "bytes_written", "kernels", "weight_bytes", "notes", "input_bytes", "gemm",
        "gemm_operand_bytes", "rows", "overlaps_producer", "runtime_kernel", "channel_walk", "attention_tiles",
        "attention_causal", "thread_loop"}
    g = _layers(1)
    node = g.nodes[0]
    w = dataclasses.replace(w, input_bytes=frozen_map({node.inputs[0].name: 2.0, node.inputs[1].name: 3.0}))
    t = work_template(node, w)
    assert t[:2] == ((0, 1), (2.0, 3.0))  # (input positions, bytes)
    assert with_names(w, t, node) == w
    p = OpPrediction(cost="c", time_s=1.0, bound=Bound.HBM, level_time_s=frozen_map({"x": 1.0}), efficiency=0.5,
                     extra_kernels=("k",), extra_time_s=2.0)
    assert {f.name for f in dataclasses.fields(OpPrediction)} == {
        "cost", "time_s", "bound", "level_time_s", "efficiency", "extra_kernels", "extra_time_s"}
    assert _with_cost(p, "d") == dataclasses.replace(p, cost="d")


def test_memlevel_hash_is_enums_own():
    """MemLevel hashes with str's C function: the same value Enum's own __hash__ gives (its name's)."""
    from predictor.types import MemLevel

    for lv in MemLevel:
        assert lv.name == lv.value and hash(lv) == hash(lv.name)


def test_quant_op_types_agree():
    """predict.QUANT_OPS (checked before the quant module is imported) names the op types quant.py rewrites."""
    from predictor.predict import QUANT_OPS
    from predictor.quant import INT8_OPS

    assert QUANT_OPS == INT8_OPS | {"DequantizeLinear", "QuantizeLinear"}


def test_constants_alike_share_one_attribute_map_and_one_key():
    """Constant nodes whose tensors differ but whose attribute maps read alike ({'value': '<tensor>'}) share one
    map, hence one node key (costed once); maps that differ in a value's type or sign are never shared."""
    from predictor.graph.loader import _exact_key

    c = [helper.make_node("Constant", [], [f"c{i}"], name=f"const{i}",
                          value=helper.make_tensor(f"t{i}", 1, [4], [float(i)] * 4)) for i in range(2)]
    add = helper.make_node("Add", ["c0", "c1"], ["y"], name="add")
    g = load_model_proto(make_model([*c, add], [], [("y", "float32", None)], {}))
    c0, c1 = (n for n in g.nodes if n.op_type == "Constant")
    assert dict(c0.attrs) == {"value": "<tensor>"} and c0.attrs is c1.attrs and node_key(c0) == node_key(c1)
    assert _exact_key({"a": -0.0}) != _exact_key({"a": 0.0}) and _exact_key({"a": 1}) != _exact_key({"a": 1.0})
    assert _exact_key({"a": (1, 2)}) != _exact_key({"a": (1.0, 2)})
    assert _exact_key({"a": float("nan")}) == _exact_key({"a": float("nan")})
    assert _exact_key({"a": [1]}) is None
