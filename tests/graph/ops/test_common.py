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
        register("Relu", cls="elementwise")(lambda ctx: None)


def test_helpers():
    assert _common.prod(()) == 1
    assert _common.prod((2, 3, 4)) == 24
    assert _common.norm_axis(-1, 4) == 3
    assert _common.SIGMOID == 6 and _common.TRANSCENDENTAL == 4


def test_bundled_schema_defaults_match_onnx_defs():
    """The table formulas read attribute defaults from (no onnx import) agrees with onnx.defs."""
    import onnx.defs
    from onnx import helper

    from predictor.graph.ops._schema_defaults import DEFAULTS, schema_defaults

    def ref(schema):
        out = {}
        for name, a in schema.attributes.items():
            if a.default_value is not None and a.default_value.name:
                v = helper.get_attribute_value(a.default_value)
                out[name] = v.decode() if isinstance(v, bytes) else (
                    [x.decode() if isinstance(x, bytes) else x for x in v] if isinstance(v, list) else v)
        return out

    checked = 0
    for op in DEFAULTS:
        for opset in (7, 11, 13, 17, 18, 21):
            try:
                schema = onnx.defs.get_schema(op, opset, "")
            except Exception:
                continue
            assert schema_defaults(op, "", opset) == ref(schema), (op, opset)
            checked += 1
    assert checked > 300
    assert schema_defaults("Gemm", "com.microsoft", 17) is None and schema_defaults("NoSuchOp", "", 17) is None


def test_attr_reads_node_then_schema_then_default():
    from onnx import helper as h

    from predictor.graph.context import OpContext
    from predictor.graph.loader import load_model_proto
    from predictor.graph.ops._common import attr
    from predictor.precision import policy
    from tests.helpers import make_model

    m = make_model([h.make_node("Gemm", ["a", "b"], ["y"], transB=1)], [("a", "float32", (2, 3)), ("b", "float32", (4, 3))],
                   [("y", "float32", None)])
    ctx = OpContext(load_model_proto(m).nodes[0], policy("fp32"), 17)
    assert attr(ctx, "transB") == 1  # the node's
    assert attr(ctx, "alpha", 7.0) == 1.0  # the schema's default
    assert attr(ctx, "no_such", 3) == 3
