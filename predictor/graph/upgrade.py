"""Upgrade a model whose default-domain opset is older than the cost model supports (onnx.version_converter).

Old exports (the onnx package's pytorch-converted and pytorch-operator test models are opset 6) are converted
to ``TARGET_OPSET`` on load instead of being refused. The converter works on the weight-free model proto the
loader read (big initializers keep name, dims and type, not values), so weights are still not read. The
``onnx`` package is imported only on this path. The conversion is reported as a note on the prediction.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..types import PredictorError

if TYPE_CHECKING:
    import onnx

MIN_OPSET = 7       # the oldest default-domain opset the shape functions and cost formulas read
TARGET_OPSET = 13   # what old models are converted to (Softmax/ReduceSum/Split semantics of today's exporters)


def needs_upgrade(opset: int) -> bool:
    """Whether a default-domain opset is older than what the cost model supports (0 = no default domain)."""
    return 0 < opset < MIN_OPSET


def upgrade(model: onnx.ModelProto, opset: int) -> tuple[onnx.ModelProto, str]:
    """(converted model, note); a failed conversion is a one-line PredictorError."""
    try:
        import onnx
        from onnx import version_converter
    except ImportError:
        raise PredictorError(f"default-domain opset {opset} is older than {MIN_OPSET}: upgrading it needs the "
                             "onnx package") from None
    if not isinstance(model, onnx.ModelProto):  # the loader's privately loaded protobuf module
        model = onnx.ModelProto.FromString(model.SerializeToString())
    try:
        converted = version_converter.convert_version(model, TARGET_OPSET)
    except Exception as e:  # noqa: BLE001 - the converter raises RuntimeError, ValidationError, ...
        msg = " ".join(str(e).split())[:200]
        raise PredictorError(f"default-domain opset {opset} is older than {MIN_OPSET} and onnx.version_converter "
                             f"could not upgrade it to {TARGET_OPSET}: {msg}") from None
    return converted, f"upgraded from default-domain opset {opset} to {TARGET_OPSET} on load (onnx.version_converter)"
