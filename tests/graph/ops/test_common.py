"""The ops package as a whole: every family registered, helpers, coverage of the ops the brief names."""
import pytest

from predictor.graph import ops
from predictor.graph.ops import _common
from predictor.graph.registry import lookup, register, registered_ops

FAMILIES = ["attention", "conv", "data_movement", "elementwise", "matmul", "normalization", "pooling", "reduction",
            "resize", "rnn", "shape_ops", "softmax"]

REQUIRED = """Conv ConvTranspose MatMul Gemm Einsum LSTM GRU RNN BatchNormalization LayerNormalization
GroupNormalization InstanceNormalization LpNormalization Softmax LogSoftmax Relu LeakyRelu PRelu Elu Selu Celu
Sigmoid HardSigmoid HardSwish Tanh Gelu Erf Exp Log Sqrt Reciprocal Pow Add Sub Mul Div Mod Min Max Sum Mean Where
Clip Neg Abs Sign Floor Ceil Round Equal Less LessOrEqual Greater GreaterOrEqual And Or Xor Not IsNaN IsInf Sin Cos
Tan Softplus Softsign Mish Shrink ThresholdedRelu BitShift BitwiseAnd BitwiseOr BitwiseXor BitwiseNot Cast CastLike
ReduceSum ReduceMean ReduceMax ReduceMin ReduceProd ReduceL1 ReduceL2 ReduceLogSumExp ReduceSumSquare ArgMax ArgMin
MaxPool AveragePool LpPool GlobalAveragePool GlobalMaxPool Resize Upsample Concat Split Slice Gather GatherElements
ScatterND Transpose Pad Tile Expand CumSum Range Trilu OneHot NonZero TopK Shape Size Reshape Flatten Squeeze
Unsqueeze Constant ConstantOfShape Identity Dropout""".split()


@pytest.mark.parametrize("family", FAMILIES)
def test_every_family_is_imported_by_the_package(family):
    assert hasattr(ops, family)


@pytest.mark.parametrize("op", REQUIRED)
def test_required_op_is_registered(op):
    assert lookup(op) is not None


def test_registered_ops_are_unique_and_default_domain():
    names = registered_ops()
    assert len(names) == len(set(names))
    assert lookup("Relu", "ai.onnx") is lookup("Relu")
    assert lookup("FusedConv", "com.microsoft") is None


def test_duplicate_registration_raises():
    with pytest.raises(ValueError):
        register("Relu")(lambda ctx: None)


def test_helpers():
    assert _common.prod(()) == 1
    assert _common.prod((2, 3, 4)) == 24
    assert _common.norm_axis(-1, 4) == 3
    assert _common.SIGMOID == 6 and _common.TRANSCENDENTAL == 4
