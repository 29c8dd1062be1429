"""The protobuf classes of ONNX without the ``onnx`` package (graph/loader.py, graph/validation.py)."""
from __future__ import annotations

import os
import sys


def onnx_pb():
    """The protobuf classes of ONNX (``onnx.onnx_ml_pb2``): ModelProto, TensorProto, ...

    Importing the ``onnx`` package costs ~0.3 s (it imports numpy, ml_dtypes, the C++ checker...) while
    the generated protobuf module alone costs ~0.05 s: when ``onnx`` is not imported yet, that module is
    loaded on its own, under a private name. Its message classes are the ones ``onnx`` uses (the
    protobuf descriptor pool deduplicates the identical file), so a later ``import onnx`` coexists.
    """
    global _ONNX_PB
    if _ONNX_PB is not None:
        return _ONNX_PB
    mod = sys.modules.get("onnx.onnx_ml_pb2")
    if mod is None:
        try:
            import importlib.util

            spec = importlib.util.find_spec("onnx")
            origin = os.path.join(os.path.dirname(spec.origin), "onnx_ml_pb2.py")
            pb_spec = importlib.util.spec_from_file_location("predictor_onnx_ml_pb2", origin)
            mod = importlib.util.module_from_spec(pb_spec)
            pb_spec.loader.exec_module(mod)
        except Exception:  # an unusual onnx build: the package itself
            import onnx

            mod = onnx
    _ONNX_PB = mod
    return mod


_ONNX_PB = None
