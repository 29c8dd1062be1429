import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from predictor.graph.loader import load, load_model_proto
from predictor.types import PredictorError
from tests.helpers import make_model


def _reshape_chain_model():
    # x[B,3,4] -> Reshape to [B, 24/2] where 24/2 is computed with Div+Cast (beyond ONNX data propagation)
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Gather", ["s", "i0"], ["b"], axis=0),
        helper.make_node("Unsqueeze", ["b", "ax0"], ["bu"]),
        helper.make_node("Div", ["c24", "c2"], ["c12"]),
        helper.make_node("Cast", ["c12"], ["c12i"], to=TensorProto.INT64),
        helper.make_node("Concat", ["bu", "c12i"], ["shape"], axis=0),
        helper.make_node("Reshape", ["x", "shape"], ["y"]),
        helper.make_node("Relu", ["y"], ["z"]),
    ]
    inits = {"i0": np.array(0, dtype=np.int64), "ax0": np.array([0], dtype=np.int64),
             "c24": np.array([24.0], dtype=np.float32), "c2": np.array([2.0], dtype=np.float32)}
    return make_model(nodes, [("x", "float32", ["B", 3, 4])], [("z", "float32", None)], inits)


def test_binds_batch_and_folds_shape_arithmetic():
    g = load_model_proto(_reshape_chain_model(), batch=5)
    relu = g.nodes[-1]
    assert relu.inputs[0].shape == (5, 12)  # 5*3*4 = 60 = 5*12
    assert g.input_bindings["x"] == (5, 3, 4)
    assert dict(g.nodes[-2].const_inputs)["shape"] == (5, 12)


def test_default_batch_is_one():
    g = load_model_proto(_reshape_chain_model())
    assert g.nodes[-1].outputs[0].shape == (1, 12)


def test_shape_option_binds_whole_input():
    g = load_model_proto(_reshape_chain_model(), shapes={"x": (2, 3, 4)})
    assert g.nodes[-1].outputs[0].shape == (2, 12)


def test_shape_option_contradicting_a_fixed_dim_is_an_error():
    """x is [B, 3, 4]: --shape x=2,6,2 would leave the model's fixed axis 1 (3) silently replaced."""
    with pytest.raises(PredictorError, match=r"--shape x=2,6,2 contradicts the model: dimension 1 of input 'x' is "
                                             r"fixed at 3"):
        load_model_proto(_reshape_chain_model(), shapes={"x": (2, 6, 2)})


def test_batch_with_no_symbolic_leading_dim_is_an_error():
    m = make_model([helper.make_node("Relu", ["x"], ["y"])], [("x", "float32", [1, 8])], [("y", "float32", None)])
    with pytest.raises(PredictorError, match=r"--batch 4 contradicts the model: .*dimension 0 of input 'x' is fixed "
                                             r"at 1"):
        load_model_proto(m, batch=4)
    assert load_model_proto(m, batch=1).nodes[0].outputs[0].shape == (1, 8)  # agrees: fine


def test_unbound_non_leading_dim_names_input_and_fix():
    m = make_model([helper.make_node("Relu", ["x"], ["y"])], [("x", "float32", ["N", "seq"])],
                   [("y", "float32", None)])
    with pytest.raises(PredictorError, match=r"input 'x' has unbound symbolic dimension 'seq'.*--shape x=N,seq"):
        load_model_proto(m, batch=2)


def test_shape_for_unknown_input():
    with pytest.raises(PredictorError, match="unknown input 'y'"):
        load_model_proto(_reshape_chain_model(), shapes={"y": (1,)})


def test_digraph_edges():
    g = load_model_proto(_reshape_chain_model(), batch=2)
    dg = g.digraph
    assert dg.number_of_nodes() == 8
    assert dg.has_edge(g.nodes[-2].name, g.nodes[-1].name)


def test_cycle_rejected():
    nodes = [helper.make_node("Relu", ["b"], ["a"]), helper.make_node("Relu", ["a"], ["b"])]
    m = make_model(nodes, [("x", "float32", [1])], [("b", "float32", None)])
    with pytest.raises(PredictorError, match="reads tensor|cycle"):
        load_model_proto(m)


def test_dangling_input_rejected():
    m = make_model([helper.make_node("Add", ["x", "ghost"], ["y"])], [("x", "float32", [1])],
                   [("y", "float32", None)])
    with pytest.raises(PredictorError, match="'ghost' that no node"):
        load_model_proto(m)


def test_external_data_never_read(tmp_path):
    w = np.random.default_rng(0).standard_normal((64, 64)).astype(np.float32)
    m = make_model([helper.make_node("MatMul", ["x", "w"], ["y"])], [("x", "float32", ["N", 64]),
                   ("w", "float32", [64, 64])], [("y", "float32", None)], {"w": w})
    path = tmp_path / "m.onnx"
    onnx.save_model(m, str(path), save_as_external_data=True, location="m.onnx.data", size_threshold=1024)
    (tmp_path / "m.onnx.data").unlink()  # weights gone: the loader must not care
    g = load(str(path), batch=3)
    assert g.nodes[0].outputs[0].shape == (3, 64)


@pytest.mark.parametrize("payload,msg", [
    (b"", "is empty"),
    (b"\x00\xff\x13garbage" * 10, "not a valid ONNX model|holds no ONNX graph"),
])
def test_bad_files(tmp_path, payload, msg):
    p = tmp_path / "bad.onnx"
    p.write_bytes(payload)
    with pytest.raises(PredictorError, match=msg):
        load(str(p))


def test_truncated_file(tmp_path):
    m = _reshape_chain_model()
    data = m.SerializeToString()
    for cut in (len(data) // 3, len(data) // 2, len(data) - 3):
        p = tmp_path / f"t{cut}.onnx"
        p.write_bytes(data[:cut])
        with pytest.raises(PredictorError):
            load(str(p))


def test_dynamo_style_functions_are_inlined():
    from onnx import helper as h

    fn = h.make_function("pkg.local", "MyRelu", ["a"], ["b"], [h.make_node("Relu", ["a"], ["b"])],
                         opset_imports=[h.make_opsetid("", 18)])
    node = h.make_node("MyRelu", ["x"], ["y"], domain="pkg.local")
    graph = h.make_graph([node], "g", [h.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 8])],
                         [h.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    m = h.make_model(graph, opset_imports=[h.make_opsetid("", 18), h.make_opsetid("pkg.local", 1)],
                     functions=[fn])
    g = load_model_proto(m, batch=4)
    assert [n.op_type for n in g.nodes] == ["Relu"]
    assert g.nodes[0].outputs[0].shape == (4, 8)


def test_big_file_scan_path_matches_direct_read(tmp_path, monkeypatch):
    """A file above DIRECT_READ_BYTES is scanned without reading its big initializers; both paths load the same."""
    from predictor.graph import protoscan

    w = np.ones((128, 128), dtype=np.float32)  # 16,384 elements: above the loader's value limit
    m = make_model([helper.make_node("MatMul", ["x", "w"], ["y"]), helper.make_node("Reshape", ["y", "s"], ["z"])],
                   [("x", "float32", ["N", 128])], [("z", "float32", None)],
                   {"w": w, "s": np.array([-1, 64], dtype=np.int64)})
    path = tmp_path / "inline.onnx"
    onnx.save_model(m, str(path))
    direct = load(str(path), batch=2)
    monkeypatch.setattr(protoscan, "DIRECT_READ_BYTES", 0)
    stripped = protoscan.read_model_bytes(str(path), 4096)
    assert len(stripped) < 128 * 128 * 4  # the weight's values were skipped
    scanned = load(str(path), batch=2)
    assert [n.outputs[0].shape for n in scanned.nodes] == [n.outputs[0].shape for n in direct.nodes] == [(2, 128), (4, 64)]
    assert scanned.nodes[0].inputs[1].is_initializer and scanned.nodes[0].inputs[1].shape == (128, 128)


def test_mean_variance_normalization_gets_a_shape_and_a_cost():
    from predictor.graph.cost import node_work
    from predictor.precision import policy

    m = make_model([helper.make_node("MeanVarianceNormalization", ["x"], ["y"]), helper.make_node("Relu", ["y"], ["z"])],
                   [("x", "float32", ["N", 3, 8, 8])], [("z", "float32", None)], opset=13)
    g = load_model_proto(m, batch=2)
    assert g.nodes[0].outputs[0].shape == (2, 3, 8, 8)
    assert node_work(g.nodes[1], policy("fp32")).kernels == 1
    assert node_work(g.nodes[0], policy("fp32")).kernels == 8


def test_weight_bytes_come_from_initializers_only():
    from predictor.graph.cost import node_work
    from predictor.precision import policy

    nodes = [helper.make_node("MatMul", ["x", "w"], ["y"]), helper.make_node("MatMul", ["y", "v"], ["z"])]
    m = make_model(nodes, [("x", "float32", ["N", 4]), ("v", "float32", [8, 2])], [("z", "float32", None)],
                   {"w": np.ones((4, 8), np.float32)})
    g = load_model_proto(m, batch=3)
    pol = policy("fp32")
    assert node_work(g.nodes[0], pol).weight_bytes == 4 * 8 * 4  # w: an initializer
    assert node_work(g.nodes[1], pol).weight_bytes == 0  # v: a graph input, though 2-D like a weight


def _mismatch_model(key_perm):
    """Attention scores q @ k^T with k's heads and head size transposed by ``key_perm``; (0, 2, 3, 1) is right,
    (0, 3, 1, 2) is the invalid export of CANINE's final encoder (an exporter bug): the scores' MatMul and the
    Softmax after it then have no shape."""
    n = helper.make_node
    nodes = [n("Transpose", ["k"], ["kt"], perm=key_perm), n("MatMul", ["q", "kt"], ["s"], name="scores"),
             n("Softmax", ["s"], ["p"], axis=-1)]
    return make_model(nodes, [("q", "float32", ["N", 12, 128, 64]), ("k", "float32", ["N", 128, 12, 64])],
                      [("p", "float32", None)])


def test_note_names_the_op_where_shapes_stop():
    g = load_model_proto(_mismatch_model([0, 3, 1, 2]), batch=2)
    assert [t.shape for n in g.nodes for t in n.outputs] == [(2, 64, 128, 12), None, None]
    stops = [s for s in g.notes if s.startswith("shapes stay unknown")]
    assert stops == ["shapes stay unknown from scores (MatMul) on: no output shape follows from its input shapes "
                     "(2x12x128x64, 2x64x128x12) (shapes that do not fit together, as in an invalid export; a size "
                     "computed from data; or an op whose shape rules are not known here)"]


def test_no_stop_note_when_every_shape_is_known():
    g = load_model_proto(_mismatch_model([0, 2, 3, 1]), batch=2)
    assert g.nodes[-1].outputs[0].shape == (2, 12, 128, 128)
    assert not [s for s in g.notes if s.startswith("shapes stay unknown")]
