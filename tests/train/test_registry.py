"""The backward-rule registry: keyed by op type, no duplicates, unknown ops reported."""
import pytest

from predictor.train import registry


def test_every_family_is_registered():
    ops = registry.registered()
    for op in ("Conv", "MatMul", "Gemm", "Relu", "BatchNormalization", "LayerNormalization", "Softmax", "MaxPool",
               "Gather", "FusedAttention", "FusedElementwise", "View", "AmpCast", "Resize", "Add", "Mul"):
        assert op in ops
    assert registry.lookup("AmpCast", "ai.predictor") is not None
    assert registry.lookup("Conv", "ai.onnx") is registry.lookup("Conv")
    assert registry.lookup("LSTM") is not None and registry.lookup("GRU").fn is registry.lookup("RNN").fn
    assert registry.lookup("NonMaxSuppression") is None and registry.lookup("FancyOp", "acme") is None


def test_registering_twice_raises():
    registry.lookup("Conv")  # load the rules first
    with pytest.raises(ValueError, match="registered twice"):
        registry.backward("Conv")(lambda ctx: [])


def test_diff_slots():
    assert registry.lookup("Gather").diff == (0,)
    assert registry.lookup("BatchNormalization").diff == (0, 1, 2)
    assert registry.lookup("Where").diff == (1, 2)
    assert registry.lookup("Mul").diff is None  # every floating-point input
