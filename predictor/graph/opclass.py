"""Op classes: groups of op types that the same kind of GPU kernel runs, for calibration and charts."""
from __future__ import annotations

_CLASSES: dict[str, tuple[str, ...]] = {
    "conv": ("Conv", "ConvTranspose", "ConvInteger", "QLinearConv"),
    "gemm": ("MatMul", "Gemm", "Einsum", "MatMulInteger", "QLinearMatMul"),
    "attention": ("Attention", "MultiHeadAttention", "FusedAttention"),
    "rnn": ("LSTM", "GRU", "RNN"),
    "norm": ("BatchNormalization", "LayerNormalization", "GroupNormalization", "InstanceNormalization",
             "LpNormalization", "SimplifiedLayerNormalization", "RMSNormalization", "MeanVarianceNormalization"),
    "softmax": ("Softmax", "LogSoftmax", "Hardmax"),
    "reduce": ("ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
               "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare", "ArgMax", "ArgMin", "TopK"),
    "pool": ("MaxPool", "AveragePool", "LpPool", "GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool"),
    "resize": ("Resize", "Upsample"),
    "copy": ("Concat", "Split", "Slice", "Gather", "GatherElements", "GatherND", "ScatterND", "ScatterElements",
             "Transpose", "Pad", "Expand", "Tile", "Cast", "CastLike", "CumSum", "Range", "Trilu", "OneHot",
             "NonZero", "ConstantOfShape", "Where", "DepthToSpace", "SpaceToDepth"),
}
_BY_OP = {op: cls for cls, ops in _CLASSES.items() for op in ops}
CLASSES = tuple(_CLASSES) + ("elementwise",)


def op_class(op_type: str) -> str:
    """The class of an op type; anything not listed is elementwise (unary/binary pointwise ops)."""
    return _BY_OP.get(op_type, "elementwise")
