"""The protobuf classes of ONNX without the ``onnx`` package (graph/loader.py, graph/validation.py)."""
from __future__ import annotations

import os
import sys


def onnx_pb():
    """The protobuf classes of ONNX (``onnx.onnx_ml_pb2``): ModelProto, TensorProto, ...

    Importing the ``onnx`` package costs ~0.3 s (it imports numpy, ml_dtypes, the C++ checker...) while
    the generated protobuf module alone costs ~0.05 s: when ``onnx`` is not imported yet, its message classes
    are made from that module's file descriptor by protobuf's upb extension (:func:`_upb_classes`, ~0.01 s),
    else that module is loaded on its own, under a private name. Either way the message classes are the ones
    ``onnx`` uses (the protobuf descriptor pool deduplicates the identical file), so a later ``import onnx``
    coexists. Only ``ModelProto`` and ``GraphProto`` are read from the result.
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
            mod = _upb_classes(origin)
            if mod is None:
                pb_spec = importlib.util.spec_from_file_location("predictor_onnx_ml_pb2", origin)
                mod = importlib.util.module_from_spec(pb_spec)
                pb_spec.loader.exec_module(mod)
        except Exception:  # an unusual onnx build: the package itself
            import onnx

            mod = onnx
    _ONNX_PB = mod
    return mod


def _upb_classes(origin: str):
    """ModelProto and GraphProto made by protobuf's upb extension from the file descriptor inside the generated
    module at ``origin``, without importing ``google.protobuf.descriptor_pool`` (~12 ms: it loads protobuf's
    pure-Python implementation too); the classes are the ones upb gives that descriptor, so ``onnx``'s own
    module gets them too. None when this protobuf is not upb-backed or the module is not laid out as expected
    (then the module is executed as it is)."""
    try:
        import codecs

        with open(origin, "rb") as f:
            literal = _serialized_literal(f.read())
        if literal is None:
            return None
        from google._upb import _message  # noqa: PLC2701 (protobuf's C extension; any failure falls back)
        from google.protobuf.message import Message

        pool = _message.default_pool
        pool.AddSerializedFile(codecs.escape_decode(literal)[0])
        stub = _well_known_types_stub()
        try:
            model_cls = _message.MessageMeta("ModelProto", (Message,), {
                "DESCRIPTOR": pool.FindMessageTypeByName("onnx.ModelProto"), "__module__": "predictor_onnx_ml_pb2"})
        finally:
            if stub is not None and sys.modules.get(_WKT) is stub:
                del sys.modules[_WKT]
        import types

        return types.SimpleNamespace(ModelProto=model_cls, GraphProto=type(model_cls().graph))
    except Exception:
        return None


_WKT = "google.protobuf.internal.well_known_types"


def _well_known_types_stub():
    """In a run of the program (predictor/fastexit.py), a stand-in for protobuf's ``well_known_types`` module while
    the first message class is made, or None. upb imports that module when it makes its first message class, for the
    mixins of the well-known types (Timestamp, Duration, Any...: none in ONNX), and keeps its table for the
    process; the import costs ~4 ms (datetime, calendar, protobuf's descriptor module), a twentieth of a small
    model's whole run. The stand-in's table is empty and it leaves ``sys.modules`` once the class is made (a later
    import gets the real module). In-process callers (the API, tests) get the real module: a well-known type made
    after this call would lack its mixins."""
    from ..fastexit import active

    if not active() or _WKT in sys.modules:
        return None
    import types

    stub = types.ModuleType(_WKT)
    stub.WKTBASES = {}
    sys.modules[_WKT] = stub
    return stub


def _serialized_literal(src: bytes) -> bytes | None:
    """The escaped bytes of the ``AddSerializedFile(b'...')`` call in the generated module's source: up to the first
    quote no backslash escapes, which must close the call (a regular expression over the ~6 KB literal takes ~5 ms).
    None when the source is not laid out so."""
    head = b"AddSerializedFile(b'"
    start = src.find(head)
    if start < 0:
        return None
    i = j = start + len(head)
    while True:
        j = src.find(b"'", j)
        if j < 0:
            return None
        k = j - 1
        while src[k] == 0x5C:  # backslashes before the quote: an odd count escapes it
            k -= 1
        if (j - 1 - k) % 2 == 0:
            break
        j += 1
    return src[i:j] if src[j + 1:j + 2] == b")" else None


_ONNX_PB = None
