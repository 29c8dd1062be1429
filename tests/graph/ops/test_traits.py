"""Op traits are declared once, at registration (graph/registry.OpTraits), and every table is derived from them."""
import pytest

from predictor.graph.opclass import CLASSES, op_class
from predictor.graph.registry import (
    OP_CLASSES, UNREGISTERED, declare, declared, op_traits, ops_with, register, registered_ops,
)


def test_every_registered_op_declares_its_class():
    for name in registered_ops():
        op = name.rsplit(".", 1)[-1]
        assert declared(op), op
        assert op_traits(op).cls in OP_CLASSES, op


def test_class_vocabulary_and_the_unregistered_default():
    assert CLASSES == OP_CLASSES == ("conv", "gemm", "attention", "rnn", "norm", "softmax", "reduce", "pool",
                                     "resize", "copy", "elementwise")
    assert not declared("NoSuchOp") and op_traits("NoSuchOp") is UNREGISTERED and op_class("NoSuchOp") == "elementwise"


def test_register_needs_a_known_class_and_consistent_traits():
    with pytest.raises(TypeError):
        register("NoSuchOpA")(lambda ctx: None)  # no cls: no silent default
    with pytest.raises(ValueError, match="op class"):
        declare("NoSuchOpB", cls="pointwise")
    with pytest.raises(ValueError, match="autocast"):
        declare("NoSuchOpC", cls="elementwise", autocast="fp16")
    with pytest.raises(ValueError, match="different traits"):
        declare("Conv", cls="gemm")  # Conv declared "conv" by graph/ops/conv.py
    assert not declared("NoSuchOpA") and not declared("NoSuchOpB") and not declared("NoSuchOpC")


def test_an_op_of_two_domains_has_one_set_of_traits():
    assert op_traits("Attention").autocast == "low" and op_traits("Attention").cls == "attention"
    assert op_traits("SimplifiedLayerNormalization").cls == "norm"


def test_derived_tables():
    """The tables that were written by hand in amp.py, graph/runtime.py, graph/traffic.py, optimize/ and train/."""
    assert ops_with(autocast="low") == {"Conv", "ConvTranspose", "MatMul", "Gemm", "Einsum", "LSTM", "GRU", "RNN",
                                        "Attention", "MultiHeadAttention", "FusedAttention"}
    assert ops_with(autocast="fp32") == {
        "Softmax", "LogSoftmax", "LayerNormalization", "GroupNormalization", "InstanceNormalization",
        "LpNormalization", "ReduceSum", "ReduceProd", "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp",
        "ReduceSumSquare", "CumSum", "Pow", "Exp", "Log", "Reciprocal", "Softplus", "Cosh", "Sinh", "Tan", "Acos",
        "Asin", "Acosh", "Asinh", "Atanh", "SoftmaxCrossEntropyLoss", "NegativeLogLikelihoodLoss"}
    assert ops_with(recurrent=True) == {"LSTM", "GRU", "RNN"}
    assert ops_with(cls="conv") == {"Conv", "ConvInteger", "QLinearConv", "ConvTranspose", "FusedConv"}
    assert ops_with(view=("reshape",)) == {"Reshape", "Flatten", "Squeeze", "Unsqueeze"}
    assert ops_with(view=("reshape", "alias", "transpose")) == {"Reshape", "Flatten", "Squeeze", "Unsqueeze",
                                                                "Identity", "Transpose"}
    assert ops_with(view=("reshape", "alias", "dropout")) == {"Reshape", "Flatten", "Squeeze", "Unsqueeze",
                                                              "Identity", "Dropout"}


def test_a_stacked_registration_keeps_one_formula_per_op():
    from predictor.graph.registry import lookup

    assert lookup("ReduceSum") is lookup("ReduceMean")  # one formula, two registrations (autocast differs)
    assert op_traits("ReduceSum").autocast == "fp32" and op_traits("ReduceMean").autocast == "follow"
