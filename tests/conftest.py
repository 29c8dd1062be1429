"""Fixtures shared by the CLI-level tests."""
import numpy as np
import onnx
import pytest
from onnx import helper

from tests.helpers import make_model


@pytest.fixture()
def conv_model(tmp_path):
    """A Conv(3->8, 3x3) + Relu model with a symbolic batch, saved to a file: its path."""
    w = np.random.default_rng(0).standard_normal((8, 3, 3, 3)).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1], name="/conv/Conv"),
             helper.make_node("Relu", ["c"], ["y"], name="/relu/Relu")]
    m = make_model(nodes, [("x", "float32", ["N", 3, 16, 16]), ("w", "float32", [8, 3, 3, 3])],
                   [("y", "float32", None)], {"w": w})
    path = tmp_path / "conv.onnx"
    onnx.save(m, str(path))
    return str(path)
