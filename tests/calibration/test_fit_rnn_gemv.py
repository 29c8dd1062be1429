"""Batch-1 recurrent layers are class ``rnn_gemv`` (their parameters: tests/calibration/test_rnn_fit.py)."""
import pytest
from onnx import helper

from predictor.graph.opclass import hidden_key, kernel_class
from tests.helpers import load_nodes, make_model


@pytest.mark.parametrize("shape,layout,key,cls", [
    ([6, 1, 4], 0, "LSTM:gemv", "rnn_gemv"),   # [S, B, I], B = 1
    ([6, 2, 4], 0, "LSTM", "rnn"),
    ([1, 6, 4], 1, "LSTM:gemv", "rnn_gemv"),   # [B, S, I]
    ([2, 6, 4], 1, "LSTM", "rnn"),
])
def test_batch_one_recurrent_layer_is_rnn_gemv(shape, layout, key, cls):
    model = make_model([helper.make_node("LSTM", ["x", "w", "r"], ["y"], hidden_size=8, layout=layout, name="l")],
                       [("x", "float32", shape), ("w", "float32", [1, 32, 4]), ("r", "float32", [1, 32, 8])],
                       [("y", "float32", None)])
    (node,) = load_nodes(model).nodes
    assert (hidden_key(node), kernel_class(node)) == (key, cls)
