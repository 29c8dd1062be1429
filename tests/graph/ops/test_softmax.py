"""Softmax, LogSoftmax, Hardmax."""
import pytest

from predictor.types import WorkKind
from tests.helpers import one_node

VEC = WorkKind.VECTOR


@pytest.mark.parametrize("op, opset, attrs", [("Softmax", 13, {}), ("LogSoftmax", 13, {}),
                                              ("Softmax", 11, dict(axis=1))])
def test_softmax(op, opset, attrs):
    work = one_node(op, [("x", "float32", (4, 1000))], [("y", "float32", None)], attrs=attrs, opset=opset).work
    assert work.flops == {VEC: 8 * 4000}  # max, sub, exp (4), sum, div: 32000
    assert work.kernels == 1
    assert work.bytes_read == 16000 and work.bytes_written == 16000


def test_softmax_fp16():
    work = one_node("Softmax", [("x", "float32", (2, 12, 128, 128))], [("y", "float32", None)],
                    precision="fp16").work
    assert work.bytes_read == 2 * 12 * 128 * 128 * 2  # 786432


def test_hardmax():
    work = one_node("Hardmax", [("x", "float32", (3, 5))], [("y", "float32", None)]).work
    assert work.flops == {VEC: 2 * 15}  # 30
    assert work.kernels == 3
    # argmax: X 60 -> 3 int64 indices 24; zeros -> Y 60; scatter: 24 -> 3 elements 12
    assert work.bytes_read == 60 + 24 and work.bytes_written == 24 + 60 + 12
