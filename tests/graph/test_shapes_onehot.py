"""Folding of OneHot (predictor/graph/shapes_onehot.py): against ONNX's reference evaluator, and the loader on
the repeat_interleave pattern of Mamba2's chunked scan and CANINE's molecule upsampling (OneHot -> Reshape ->
Tile with a count computed from shapes), which left every shape after the Tile unknown."""
import numpy as np
import pytest
from onnx import helper

from predictor.graph import shapes
from predictor.graph.cost import node_work, to_cost
from predictor.graph.loader import load_model_proto
from predictor.precision import policy
from tests.graph.test_shapes import I64, F32, fold, reference
from tests.helpers import make_model


@pytest.mark.parametrize("arrays, attrs", [
    ([np.array([3], I64), np.array(5, I64), np.array([1, 24], I64)], {}),  # Mamba2: repeats of the head axis
    ([np.array([2], I64), np.array([4], I64), np.array([1, 4], I64)], {}),  # CANINE: depth given as a 1-vector
    ([np.array([[0, -1], [7, 2]], I64), np.array(3, I64), np.array([0.5, 2.0], F32)], {}),  # negative, out of range
    ([np.array([[0, 1, 2], [2, 1, 0]], I64), np.array(3, I64), np.array([0, 9], I64)], dict(axis=0)),
    ([np.array([[0, 1, 2], [2, 1, 0]], I64), np.array(4, I64), np.array([0, 9], I64)], dict(axis=1)),
    ([np.array([1, 0], np.int32), np.array(2, I64), np.array([0, 1], np.int32)], dict(axis=-2)),
])
def test_one_hot_folds_like_the_reference_evaluator(arrays, attrs):
    node, got = fold("OneHot", arrays, **attrs)
    # the reference evaluator takes depth as a scalar only (the spec allows a one-element vector)
    want = reference(node, [arrays[0], arrays[1].reshape(()), arrays[2]])[0]
    assert got is not None
    assert got[0].shape == want.shape and got[0].dtype == str(want.dtype)
    assert got[0].data == want.reshape(-1).tolist()


def test_one_hot_gives_up_without_values_or_beyond_the_size_limit():
    assert fold("OneHot", [np.array([1], I64), None, np.array([0, 1], I64)])[1] is None
    big = shapes.MAX_FOLD_ELEMS + 1
    assert fold("OneHot", [np.array([0], I64), np.array(big, I64), np.array([0, 1], I64)])[1] is None
    assert fold("OneHot", [np.array([0], I64), np.array(3, I64), np.array([0, 1], I64)], axis=2)[1] is None


def _repeat_interleave_model():
    """``x.unsqueeze(3).repeat(1, 1, 1, H // G, 1)`` with H // G computed from shapes, as the TorchScript exporter
    writes it: Shape/Gather/Div -> Concat([1, n]) as OneHot's values -> Reshape(-1) -> Tile; then a MatMul on the
    tiled tensor (x: (N, 16, 1, 8), 24 heads of the weight's 24 * 8 columns -> repeats 3 on axis 3)."""
    n = helper.make_node
    inits = {"w": np.zeros((8, 4), F32), "heads": np.array(24, I64), "i2": np.array(2, I64),
             "ax0": np.array([0], I64), "one": np.array([1], I64), "axis3": np.array([3], I64),
             "rank": np.array(5, I64), "m1": np.array([-1], I64), "g": np.array(8, I64)}
    nodes = [
        n("Shape", ["x"], ["s"]), n("Gather", ["s", "i2"], ["groups"], axis=0),  # 1
        n("Mul", ["groups", "g"], ["gg"]), n("Div", ["heads", "gg"], ["reps"]),  # 24 // 8 = 3
        n("Unsqueeze", ["reps", "ax0"], ["reps1"]), n("Concat", ["one", "reps1"], ["onoff"], axis=0),
        n("OneHot", ["axis3", "rank", "onoff"], ["oh"], axis=-1), n("Reshape", ["oh", "m1"], ["repeats"]),
        n("Unsqueeze", ["x", "axis3"], ["x5"]), n("Tile", ["x5", "repeats"], ["t"]),
        n("MatMul", ["t", "w"], ["y"]),
    ]
    return make_model(nodes, [("x", "float32", ["N", 16, 1, 8])], [("y", "float32", None)], inits)


@pytest.mark.parametrize("batch", [1, 32])
def test_loader_folds_the_repeat_interleave_pattern(batch):
    g = load_model_proto(_repeat_interleave_model(), batch=batch)
    by_out = {t.name: t for nd in g.nodes for t in nd.outputs}
    assert by_out["oh"].shape == (1, 5)
    tile = next(nd for nd in g.nodes if nd.op_type == "Tile")
    assert dict(tile.const_inputs)["repeats"] == (1, 1, 1, 3, 1)
    assert by_out["t"].shape == (batch, 16, 1, 3, 8)
    mm = next(nd for nd in g.nodes if nd.op_type == "MatMul")
    assert mm.outputs[0].shape == (batch, 16, 1, 3, 4)
    pol = policy("fp32")
    assert to_cost(mm, node_work(mm, pol), pol).total_flops == 2 * batch * 16 * 3 * 8 * 4
    assert by_out["oh"].dtype == "int64"
