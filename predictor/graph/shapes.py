"""Our own shape functions and small-tensor folding, for what ONNX shape inference leaves unknown.

ONNX's inference (with data propagation) handles most graphs once the inputs are concrete; it gives
up where an output shape depends on the *values* of a computed tensor (Reshape of a shape built with
Div/Cast/Where, Pad with computed pads, Expand of a ConstantOfShape, Range with computed limits,
ScatterND into a computed mask...). Two registries keyed by op type fill the gap:

* ``fold(n, vals, ins)`` evaluates a node with numpy when the values of its inputs are known (small
  tensors: shape vectors, axes, pads, indices, masks up to ``MAX_FOLD_ELEMS`` elements) and returns
  its output values; a folder returns None when an input value it needs is unknown.
* ``infer(n, ins, vals, k)`` gives the shape of output ``k`` from the input shapes and whatever input
  values are known (never the value of a big tensor: ScatterND's output has its data's shape whatever
  the updates hold).

``output_dtype(n, ins, k)`` gives the element type of an output ONNX left untyped. An op with no entry
returns None (left unknown; the loader then asks ONNX inference again). Nodes are :class:`RawNode`
(the loader's light copy of a NodeProto with decoded attributes).
"""
from __future__ import annotations

import math
from typing import Callable, Sequence

import numpy as np

from ..types import TensorInfo

MAX_FOLD_ELEMS = 1 << 16  # a folder never materialises a bigger tensor (the loader keeps <= 4096)

Folder = Callable[..., list]
ShapeFn = Callable[..., tuple]

_FOLD: dict[str, Folder] = {}
_SHAPE: dict[str, ShapeFn] = {}


def _register(table: dict, *ops: str):
    def deco(fn):
        for op in ops:
            if op in table:
                raise ValueError(f"{op} registered twice")
            table[op] = fn
        return fn

    return deco


# ------------------------------------------------------------------------------ nodes
# AttributeProto.type -> how to read the value (a light helper.get_attribute_value)
_ATTR_READERS = {
    1: lambda a: a.f, 2: lambda a: a.i, 3: lambda a: a.s, 4: lambda a: a.t, 5: lambda a: a.g,
    6: lambda a: list(a.floats), 7: lambda a: list(a.ints), 8: lambda a: list(a.strings),
    9: lambda a: list(a.tensors), 10: lambda a: list(a.graphs), 11: lambda a: a.sparse_tensor,
    12: lambda a: list(a.sparse_tensors), 13: lambda a: a.tp, 14: lambda a: list(a.type_protos),
}


class RawNode:
    """A NodeProto's fields copied once into Python objects (protobuf field access is slow)."""

    __slots__ = ("op_type", "domain", "name", "input", "output", "attrs", "proto")

    def __init__(self, proto):
        self.proto = proto
        self.op_type = proto.op_type
        self.domain = proto.domain
        self.name = proto.name
        self.input = list(proto.input)
        self.output = list(proto.output)
        attrs = {}
        for a in proto.attribute:
            reader = _ATTR_READERS.get(a.type)
            if reader is not None:
                attrs[a.name] = reader(a)
        self.attrs = attrs


def _attr(n, name, default=None):
    return n.attrs.get(name, default)


def _ints(v) -> list[int]:
    return [int(x) for x in np.asarray(v).reshape(-1).tolist()]


# ------------------------------------------------------------------------------ tensor values
_NP_OF_ONNX = {1: np.float32, 2: np.uint8, 3: np.int8, 4: np.uint16, 5: np.int16, 6: np.int32, 7: np.int64,
               9: np.bool_, 10: np.float16, 11: np.float64, 12: np.uint32, 13: np.uint64}
_TYPED_FIELD = {1: "float_data", 6: "int32_data", 7: "int64_data", 11: "double_data", 13: "uint64_data",
                12: "uint64_data", 2: "int32_data", 3: "int32_data", 4: "int32_data", 5: "int32_data",
                9: "int32_data"}


def numel_of(dims) -> int:
    n = 1
    for d in dims:
        n *= int(d)
    return n


def tensor_value(t) -> np.ndarray | None:
    """The value of a TensorProto stored inside the file; None for external data or exotic types."""
    if t.data_location == 1 or len(t.external_data):
        return None
    dims = tuple(int(d) for d in t.dims)
    np_type = _NP_OF_ONNX.get(t.data_type)
    if np_type is not None:
        raw = t.raw_data
        if raw:
            arr = np.frombuffer(raw, dtype=np.uint8 if np_type is np.bool_ else np_type)
            if np_type is np.bool_:
                arr = arr.astype(np.bool_)
            return arr.reshape(dims).copy()
        field = _TYPED_FIELD.get(t.data_type)
        if field is not None:
            data = getattr(t, field)
            if len(data) == numel_of(dims):
                return np.array(data, dtype=np_type).reshape(dims)
        if t.data_type == 10 and len(t.int32_data) == numel_of(dims):  # float16 bits in int32_data
            return np.array(t.int32_data, dtype=np.uint16).view(np.float16).reshape(dims)
    try:  # bfloat16, float8, strings, ...: the reference decoder
        from onnx import numpy_helper

        return numpy_helper.to_array(t)
    except Exception:
        return None


# ------------------------------------------------------------------------------ folding
def fold(n, vals: Sequence[np.ndarray | None], ins: Sequence[TensorInfo | None] = ()) -> list | None:
    fn = _FOLD.get(n.op_type)
    if fn is None:
        return None
    return fn(n, vals, ins)


def has_folder(op_type: str) -> bool:
    return op_type in _FOLD


def _all(vals, count=None):
    sel = vals if count is None else vals[:count]
    return all(v is not None for v in sel)


def _small(shape) -> bool:
    return numel_of(shape) <= MAX_FOLD_ELEMS


@_register(_FOLD, "Constant")
def _f_constant(n, vals, ins):
    a = n.attrs
    if "value" in a:
        t = a["value"]
        if numel_of(t.dims) > MAX_FOLD_ELEMS:
            return None
        v = tensor_value(t)
        return None if v is None else [v]
    if "value_int" in a:
        return [np.array(a["value_int"], dtype=np.int64)]
    if "value_ints" in a:
        return [np.array(a["value_ints"], dtype=np.int64)]
    if "value_float" in a:
        return [np.array(a["value_float"], dtype=np.float32)]
    if "value_floats" in a:
        return [np.array(a["value_floats"], dtype=np.float32)]
    return None


@_register(_FOLD, "Identity", "Dropout")
def _f_identity(n, vals, ins):
    if vals[0] is None:
        return None
    if n.op_type == "Dropout" and len(n.output) > 1:
        return [vals[0], np.ones(vals[0].shape, dtype=np.bool_)]
    return [vals[0]]


_BINARY = {
    "Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Equal": np.equal, "Less": np.less,
    "Greater": np.greater, "LessOrEqual": np.less_equal, "GreaterOrEqual": np.greater_equal,
    "And": np.logical_and, "Or": np.logical_or, "Xor": np.logical_xor, "Max": np.maximum, "Min": np.minimum,
    "Sum": np.add, "BitwiseAnd": np.bitwise_and, "BitwiseOr": np.bitwise_or, "BitwiseXor": np.bitwise_xor,
}
_KEEPS_TYPE = {"Add", "Sub", "Mul", "Max", "Min", "Sum"}


@_register(_FOLD, *_BINARY)
def _f_binary(n, vals, ins):
    if not vals or not _all(vals):
        return None
    if not _small(np.broadcast_shapes(*(v.shape for v in vals))):
        return None
    fn = _BINARY[n.op_type]
    out = vals[0]
    for v in vals[1:]:
        out = fn(out, v)
    out = np.asarray(out)
    if n.op_type in _KEEPS_TYPE and out.dtype != vals[0].dtype:
        out = out.astype(vals[0].dtype)
    return [out]


@_register(_FOLD, "Mean")
def _f_mean(n, vals, ins):
    if not vals or not _all(vals):
        return None
    return [np.asarray(sum(vals) / len(vals)).astype(vals[0].dtype)]


@_register(_FOLD, "Div")
def _f_div(n, vals, ins):
    if not _all(vals, 2):
        return None
    a, b = vals[0], vals[1]
    if a.dtype.kind in "iu" and b.dtype.kind in "iu":
        if np.any(b == 0):
            return None
        q = np.abs(a) // np.abs(b)  # ONNX integer Div truncates toward zero
        return [(np.sign(a) * np.sign(b) * q).astype(a.dtype)]
    return [np.asarray(a / b).astype(a.dtype)]


@_register(_FOLD, "Mod")
def _f_mod(n, vals, ins):
    if not _all(vals, 2) or np.any(vals[1] == 0):
        return None
    fn = np.fmod if _attr(n, "fmod", 0) else np.mod
    return [np.asarray(fn(vals[0], vals[1])).astype(vals[0].dtype)]


@_register(_FOLD, "Pow")
def _f_pow(n, vals, ins):
    if not _all(vals, 2):
        return None
    return [np.asarray(np.power(vals[0].astype(np.float64), vals[1])).astype(vals[0].dtype)]


@_register(_FOLD, "BitShift")
def _f_bitshift(n, vals, ins):
    if not _all(vals, 2):
        return None
    fn = np.left_shift if _attr(n, "direction", b"LEFT") in (b"LEFT", "LEFT") else np.right_shift
    return [np.asarray(fn(vals[0], vals[1])).astype(vals[0].dtype)]


_UNARY = {"Neg": np.negative, "Abs": np.abs, "Not": np.logical_not, "Floor": np.floor, "Ceil": np.ceil,
          "Sqrt": np.sqrt, "Sign": np.sign, "Reciprocal": np.reciprocal, "Exp": np.exp, "Log": np.log,
          "Sin": np.sin, "Cos": np.cos, "Tanh": np.tanh, "Round": np.round, "IsNaN": np.isnan,
          "Relu": lambda x: np.maximum(x, 0), "BitwiseNot": np.invert,
          "Sigmoid": lambda x: 1.0 / (1.0 + np.exp(-x))}
_UNARY_BOOL = {"Not", "IsNaN"}


@_register(_FOLD, *_UNARY)
def _f_unary(n, vals, ins):
    if not _all(vals, 1):
        return None
    with np.errstate(all="ignore"):
        out = np.asarray(_UNARY[n.op_type](vals[0]))
    return [out if n.op_type in _UNARY_BOOL else out.astype(vals[0].dtype)]


@_register(_FOLD, "Clip")
def _f_clip(n, vals, ins):
    if vals[0] is None:
        return None
    lo = vals[1] if len(vals) > 1 and vals[1] is not None else _attr(n, "min")
    hi = vals[2] if len(vals) > 2 and vals[2] is not None else _attr(n, "max")
    if (len(vals) > 1 and n.input[1] and vals[1] is None) or (len(vals) > 2 and n.input[2] and vals[2] is None):
        return None
    out = vals[0]
    if lo is not None:
        out = np.maximum(out, lo)
    if hi is not None:
        out = np.minimum(out, hi)
    return [np.asarray(out).astype(vals[0].dtype)]


@_register(_FOLD, "Shape")
def _f_shape(n, vals, ins):
    if not ins or ins[0] is None or ins[0].shape is None:
        return None
    shape = list(ins[0].shape)
    start = _attr(n, "start", 0)
    end = _attr(n, "end", None)
    return [np.array(shape[start:end], dtype=np.int64)]


@_register(_FOLD, "Size")
def _f_size(n, vals, ins):
    if not ins or ins[0] is None or ins[0].shape is None:
        return None
    return [np.array(numel_of(ins[0].shape), dtype=np.int64)]


def _np_type(onnx_type: int):
    t = _NP_OF_ONNX.get(int(onnx_type))
    if t is not None:
        return t
    from onnx import helper

    return helper.tensor_dtype_to_np_dtype(int(onnx_type))


@_register(_FOLD, "Cast")
def _f_cast(n, vals, ins):
    if not _all(vals, 1):
        return None
    return [vals[0].astype(_np_type(_attr(n, "to", 1)))]


@_register(_FOLD, "CastLike")
def _f_cast_like(n, vals, ins):
    if vals[0] is None:
        return None
    if len(vals) > 1 and vals[1] is not None:
        return [vals[0].astype(vals[1].dtype)]
    if len(ins) > 1 and ins[1] is not None and ins[1].dtype not in ("unknown", "bfloat16"):
        return [vals[0].astype(np.dtype(ins[1].dtype))]
    return None


@_register(_FOLD, "Gather")
def _f_gather(n, vals, ins):
    if not _all(vals, 2):
        return None
    return [np.take(vals[0], vals[1].astype(np.int64), axis=_attr(n, "axis", 0))]


@_register(_FOLD, "GatherElements")
def _f_gather_elements(n, vals, ins):
    if not _all(vals, 2):
        return None
    axis = _attr(n, "axis", 0)
    idx = vals[1].astype(np.int64)
    idx = np.where(idx < 0, idx + vals[0].shape[axis], idx)
    return [np.take_along_axis(vals[0], idx, axis=axis)]


@_register(_FOLD, "GatherND")
def _f_gather_nd(n, vals, ins):
    if not _all(vals, 2) or _attr(n, "batch_dims", 0):
        return None
    data, idx = vals[0], vals[1].astype(np.int64)
    k = idx.shape[-1]
    flat = idx.reshape(-1, k)
    out = np.stack([data[tuple(row)] for row in flat]) if flat.shape[0] else np.zeros((0,) + data.shape[k:], data.dtype)
    return [out.reshape(idx.shape[:-1] + data.shape[k:])]


@_register(_FOLD, "ScatterND")
def _f_scatter_nd(n, vals, ins):
    if not _all(vals, 3):
        return None
    out = vals[0].copy()
    idx = vals[1].astype(np.int64)
    k = idx.shape[-1]
    upd = vals[2].reshape((-1,) + out.shape[k:])
    red = _attr(n, "reduction", b"none")
    red = red.decode() if isinstance(red, bytes) else red
    for row, u in zip(idx.reshape(-1, k), upd):
        key = tuple(row)
        if red == "add":
            out[key] += u
        elif red == "mul":
            out[key] *= u
        elif red == "max":
            out[key] = np.maximum(out[key], u)
        elif red == "min":
            out[key] = np.minimum(out[key], u)
        else:
            out[key] = u
    return [out]


@_register(_FOLD, "ScatterElements", "Scatter")
def _f_scatter_elements(n, vals, ins):
    if not _all(vals, 3):
        return None
    red = _attr(n, "reduction", b"none")
    if red not in (b"none", "none"):
        return None
    out = vals[0].copy()
    axis = _attr(n, "axis", 0)
    idx = vals[1].astype(np.int64)
    idx = np.where(idx < 0, idx + out.shape[axis], idx)
    np.put_along_axis(out, idx, vals[2], axis=axis)
    return [out]


def _axes_input(n, vals, ins, i=1, attr="axes"):
    """Axes from input ``i`` (newer opsets) or the attribute; ``False`` when the input is unknown."""
    if len(n.input) > i and n.input[i]:
        return _ints(vals[i]) if vals[i] is not None else False
    a = _attr(n, attr)
    return None if a is None else [int(x) for x in a]


@_register(_FOLD, "Unsqueeze")
def _f_unsqueeze(n, vals, ins):
    if vals[0] is None:
        return None
    axes = _axes_input(n, vals, ins)
    if not axes:
        return None
    out = vals[0]
    rank = out.ndim + len(axes)
    for ax in sorted(a % rank for a in axes):
        out = np.expand_dims(out, ax)
    return [out]


@_register(_FOLD, "Squeeze")
def _f_squeeze(n, vals, ins):
    if vals[0] is None:
        return None
    axes = _axes_input(n, vals, ins)
    if axes is False:
        return None
    if not axes:
        return [np.squeeze(vals[0])]
    return [np.squeeze(vals[0], axis=tuple(a % vals[0].ndim for a in axes))]


@_register(_FOLD, "Concat")
def _f_concat(n, vals, ins):
    if not vals or not _all(vals):
        return None
    return [np.concatenate([np.atleast_1d(v) for v in vals], axis=_attr(n, "axis", 0))]


@_register(_FOLD, "Slice")
def _f_slice(n, vals, ins):
    if vals[0] is None:
        return None
    spec = _slice_spec(n, vals, vals[0].ndim)
    if spec is None:
        return None
    idx = [slice(None)] * vals[0].ndim
    for ax, (s, e, st) in spec.items():
        idx[ax] = slice(s, e, st)
    return [vals[0][tuple(idx)]]


@_register(_FOLD, "Reshape")
def _f_reshape(n, vals, ins):
    if not _all(vals, 2):
        return None
    shape = _reshape_target(vals[0].shape, _ints(vals[1]), _attr(n, "allowzero", 0))
    return None if shape is None else [vals[0].reshape(shape)]


@_register(_FOLD, "Flatten")
def _f_flatten(n, vals, ins):
    if vals[0] is None:
        return None
    return [vals[0].reshape(_s_flatten(n, [vals[0].shape], vals, 0))]


@_register(_FOLD, "Transpose")
def _f_transpose(n, vals, ins):
    if vals[0] is None:
        return None
    perm = _attr(n, "perm")
    return [np.transpose(vals[0], perm if perm else None)]


@_register(_FOLD, "Tile")
def _f_tile(n, vals, ins):
    if not _all(vals, 2):
        return None
    reps = _ints(vals[1])
    if not _small([d * r for d, r in zip(vals[0].shape, reps)]):
        return None
    return [np.tile(vals[0], reps)]


@_register(_FOLD, "Split")
def _f_split(n, vals, ins):
    if vals[0] is None:
        return None
    shape = vals[0].shape
    sizes = [_s_split(n, [shape], vals, k) for k in range(len(n.output))]
    if any(s is None for s in sizes):
        return None
    ax = _attr(n, "axis", 0) % len(shape)
    out, start = [], 0
    for s in sizes:
        idx = [slice(None)] * len(shape)
        idx[ax] = slice(start, start + s[ax])
        out.append(vals[0][tuple(idx)])
        start += s[ax]
    return out


@_register(_FOLD, "Pad")
def _f_pad(n, vals, ins):
    if vals[0] is None:
        return None
    shape = _s_pad(n, [vals[0].shape], vals, 0)
    if shape is None or not _small(shape):
        return None
    pads, axes = _pad_spec(n, vals, vals[0].ndim)
    if any(p < 0 for p in pads):
        return None
    width = [(0, 0)] * vals[0].ndim
    na = len(axes)
    for j, a in enumerate(axes):
        width[a] = (pads[j], pads[j + na])
    mode = _attr(n, "mode", b"constant")
    mode = mode.decode() if isinstance(mode, bytes) else mode
    if mode == "constant":
        cv = vals[2] if len(vals) > 2 and vals[2] is not None else _attr(n, "value", 0)
        return [np.pad(vals[0], width, mode="constant", constant_values=np.asarray(cv).reshape(-1)[0]
                       if np.asarray(cv).size else 0)]
    np_mode = {"reflect": "reflect", "edge": "edge", "wrap": "wrap"}.get(mode)
    return None if np_mode is None else [np.pad(vals[0], width, mode=np_mode)]


@_register(_FOLD, "ConstantOfShape")
def _f_constant_of_shape(n, vals, ins):
    if not _all(vals, 1):
        return None
    shape = _ints(vals[0])
    if any(d < 0 for d in shape) or not _small(shape):
        return None
    t = _attr(n, "value")
    fill = tensor_value(t).reshape(-1)[0] if t is not None else np.float32(0)
    return [np.full(shape, fill, dtype=fill.dtype)]


def _range_count(vals) -> int | None:
    if not _all(vals, 3):
        return None
    start, limit, delta = (v.reshape(-1)[0].item() for v in vals[:3])
    if delta == 0:
        return None
    return max(int(math.ceil((limit - start) / delta)), 0)


@_register(_FOLD, "Range")
def _f_range(n, vals, ins):
    count = _range_count(vals)
    if count is None or count > MAX_FOLD_ELEMS:
        return None
    start, delta = vals[0].reshape(-1)[0], vals[2].reshape(-1)[0]
    return [(start + np.arange(count) * delta).astype(vals[0].dtype)]


@_register(_FOLD, "Where")
def _f_where(n, vals, ins):
    if not _all(vals, 3) or not _small(np.broadcast_shapes(*(v.shape for v in vals[:3]))):
        return None
    return [np.where(vals[0], vals[1], vals[2])]


@_register(_FOLD, "Expand")
def _f_expand(n, vals, ins):
    if not _all(vals, 2):
        return None
    shape = _broadcast(tuple(vals[0].shape), tuple(_ints(vals[1])))
    if shape is None or not _small(shape):
        return None
    return [np.broadcast_to(vals[0], shape).copy()]


@_register(_FOLD, "Trilu")
def _f_trilu(n, vals, ins):
    if vals[0] is None:
        return None
    k = 0
    if len(n.input) > 1 and n.input[1]:
        if vals[1] is None:
            return None
        k = int(vals[1].reshape(-1)[0])
    fn = np.triu if _attr(n, "upper", 1) else np.tril
    return [fn(vals[0], k)]


@_register(_FOLD, "CumSum")
def _f_cumsum(n, vals, ins):
    if not _all(vals, 2):
        return None
    ax = int(vals[1].reshape(-1)[0])
    x = vals[0]
    if _attr(n, "reverse", 0):
        x = np.flip(x, ax)
    out = np.cumsum(x, axis=ax)
    if _attr(n, "exclusive", 0):
        out = out - x
    if _attr(n, "reverse", 0):
        out = np.flip(out, ax)
    return [out.astype(vals[0].dtype)]


@_register(_FOLD, "NonZero")
def _f_nonzero(n, vals, ins):
    if vals[0] is None:
        return None
    return [np.array(np.nonzero(vals[0]), dtype=np.int64).reshape(vals[0].ndim, -1)]


_REDUCE = {"ReduceProd": np.prod, "ReduceSum": np.sum, "ReduceMax": np.max, "ReduceMin": np.min,
           "ReduceMean": np.mean, "ReduceL1": lambda x, **k: np.sum(np.abs(x), **k),
           "ReduceSumSquare": lambda x, **k: np.sum(x * x, **k)}


@_register(_FOLD, *_REDUCE)
def _f_reduce(n, vals, ins):
    if vals[0] is None:
        return None
    axes = _reduce_axes(n, vals, vals[0].ndim)
    if axes is False:
        return None
    keep = bool(_attr(n, "keepdims", 1))
    if axes == () and _attr(n, "noop_with_empty_axes", 0):
        return [vals[0]]
    if vals[0].size == 0 and n.op_type in ("ReduceMax", "ReduceMin"):
        return None
    out = _REDUCE[n.op_type](vals[0], axis=axes or None, keepdims=keep)
    return [np.asarray(out).astype(vals[0].dtype)]


@_register(_FOLD, "ArgMax", "ArgMin")
def _f_argmax(n, vals, ins):
    if vals[0] is None or _attr(n, "select_last_index", 0):
        return None
    ax = _attr(n, "axis", 0)
    fn = np.argmax if n.op_type == "ArgMax" else np.argmin
    out = fn(vals[0], axis=ax)
    if _attr(n, "keepdims", 1):
        out = np.expand_dims(out, ax)
    return [np.asarray(out, dtype=np.int64)]


@_register(_FOLD, "MatMul")
def _f_matmul(n, vals, ins):
    if not _all(vals, 2):
        return None
    shape = _s_matmul(n, [vals[0].shape, vals[1].shape], vals, 0)
    if shape is None or not _small(shape):
        return None
    return [np.matmul(vals[0], vals[1])]


# ------------------------------------------------------------------------------ shapes
def infer(n, ins: Sequence[TensorInfo | None], vals: Sequence[np.ndarray | None], k: int) -> tuple | None:
    fn = _SHAPE.get(n.op_type)
    if fn is None:
        return None
    shapes = [i.shape if i is not None else None for i in ins]
    return fn(n, shapes, vals, k)


def has_shape_fn(op_type: str) -> bool:
    return op_type in _SHAPE


_BOOL_OUT = {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "Not", "And", "Or", "Xor", "IsNaN",
             "IsInf"}
_INT64_OUT = {"Shape", "Size", "NonZero", "ArgMax", "ArgMin"}


def output_dtype(n, ins: Sequence[TensorInfo | None], k: int = 0) -> str:
    """Element type of output ``k`` (numpy-style name) by the op's type rule."""
    op = n.op_type
    if op in _INT64_OUT or (op in ("TopK", "MaxPool", "Unique") and k > 0):
        return "int64"
    if op in _BOOL_OUT or (op == "Dropout" and k == 1):
        return "bool"
    if op == "Cast":
        return _dtype_name(_attr(n, "to", 1))
    if op in ("ConstantOfShape", "Constant"):
        t = _attr(n, "value")
        if t is not None:
            return _dtype_name(t.data_type)
        if op == "Constant" and ("value_int" in n.attrs or "value_ints" in n.attrs):
            return "int64"
        return "float32"
    if op in ("EyeLike", "RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Multinomial"):
        dt = _attr(n, "dtype")
        if dt is not None:
            return _dtype_name(dt)
    if op in ("MatMulInteger", "ConvInteger"):
        return "int32"
    if op in ("QuantizeLinear", "QLinearConv", "QLinearMatMul"):
        zp = {"QuantizeLinear": 2, "QLinearConv": 7, "QLinearMatMul": 7}[op]
        if len(ins) > zp and ins[zp] is not None:
            return ins[zp].dtype
        return "uint8"
    if op == "DequantizeLinear":
        return ins[1].dtype if len(ins) > 1 and ins[1] is not None else "float32"
    pick = {"Where": 1, "CastLike": 1, "OneHot": 2}.get(op, 0)
    if len(ins) > pick and ins[pick] is not None and ins[pick].dtype != "unknown":
        return ins[pick].dtype
    for i in ins:
        if i is not None and i.dtype != "unknown":
            return i.dtype
    return "float32"


def _dtype_name(elem_type: int) -> str:
    from .loader import dtype_name

    return dtype_name(int(elem_type))


def _broadcast(*shapes: tuple) -> tuple | None:
    rank = max(len(s) for s in shapes)
    out = []
    for k in range(rank):
        dims = {s[len(s) - rank + k] for s in shapes if len(s) - rank + k >= 0}
        dims.discard(1)
        if len(dims) > 1:
            return None
        out.append(dims.pop() if dims else 1)
    return tuple(out)


BROADCAST = (
    "Add", "Sub", "Mul", "Div", "Pow", "Mod", "Max", "Min", "Sum", "Mean", "Where", "Equal", "Less",
    "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor", "PRelu", "BitShift", "BitwiseAnd",
    "BitwiseOr", "BitwiseXor",
)
SAME_SHAPE = (
    "Relu", "Sigmoid", "Tanh", "Erf", "Exp", "Log", "Sqrt", "Neg", "Abs", "Not", "Cast", "CastLike",
    "Clip", "Gelu", "HardSwish", "HardSigmoid", "LeakyRelu", "Elu", "Softplus", "Reciprocal", "Floor",
    "Ceil", "Round", "Sign", "IsNaN", "IsInf", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh",
    "Asinh", "Acosh", "Atanh", "Identity", "Dropout", "Softmax", "LogSoftmax", "Hardmax",
    "BatchNormalization", "InstanceNormalization", "GroupNormalization", "MeanVarianceNormalization",
    "LpNormalization", "LRN", "RMSNormalization", "Mish", "Selu", "Celu", "Softsign", "Shrink",
    "ThresholdedRelu", "Swish", "BitwiseNot", "Trilu", "CumSum", "CumProd", "QuantizeLinear",
    "DequantizeLinear", "RotaryEmbedding",
)


@_register(_SHAPE, *BROADCAST)
def _s_broadcast(n, shapes, vals, k):
    if k > 0 or not shapes or any(s is None for s in shapes):
        return None
    return _broadcast(*shapes)


@_register(_SHAPE, *SAME_SHAPE)
def _s_same(n, shapes, vals, k):
    if k > 0 and not (n.op_type == "Dropout" and k == 1):
        return None  # BatchNorm's training statistics and similar side outputs: left to ONNX
    return shapes[0]


@_register(_SHAPE, "LayerNormalization")
def _s_layer_norm(n, shapes, vals, k):
    x = shapes[0]
    if x is None or k == 0:
        return x
    axis = _attr(n, "axis", -1) % len(x)
    return x[:axis] + (1,) * (len(x) - axis)  # Mean and InvStdDev


@_register(_SHAPE, "Constant")
def _s_constant(n, shapes, vals, k):
    t = _attr(n, "value")
    if t is not None:
        return tuple(int(d) for d in t.dims)
    if "value_ints" in n.attrs or "value_floats" in n.attrs:
        return (len(n.attrs.get("value_ints", n.attrs.get("value_floats"))),)
    if "value_int" in n.attrs or "value_float" in n.attrs:
        return ()
    return None


@_register(_SHAPE, "Reshape")
def _s_reshape(n, shapes, vals, k):
    if shapes[0] is None or len(vals) < 2 or vals[1] is None:
        return None
    return _reshape_target(shapes[0], _ints(vals[1]), _attr(n, "allowzero", 0))


def _reshape_target(in_shape, target, allowzero) -> tuple | None:
    target = [int(d) for d in target]
    out = [in_shape[i] if (d == 0 and not allowzero and i < len(in_shape)) else d for i, d in enumerate(target)]
    total = numel_of(in_shape)
    if out.count(-1) == 1:
        rest = numel_of([d for d in out if d != -1])
        if rest == 0 or total % rest:
            return None
        out[out.index(-1)] = total // rest
    if any(d < 0 for d in out) or numel_of(out) != total:
        return None
    return tuple(out)


@_register(_SHAPE, "Flatten")
def _s_flatten(n, shapes, vals, k):
    x = shapes[0]
    if x is None:
        return None
    axis = _attr(n, "axis", 1)
    axis = axis + len(x) if axis < 0 else axis
    return (numel_of(x[:axis]), numel_of(x[axis:]))


@_register(_SHAPE, "Expand")
def _s_expand(n, shapes, vals, k):
    if shapes[0] is None or vals[1] is None:
        return None
    return _broadcast(shapes[0], tuple(_ints(vals[1])))


@_register(_SHAPE, "ConstantOfShape")
def _s_constant_of_shape(n, shapes, vals, k):
    return None if vals[0] is None else tuple(_ints(vals[0]))


@_register(_SHAPE, "Tile")
def _s_tile(n, shapes, vals, k):
    if shapes[0] is None or vals[1] is None:
        return None
    return tuple(d * r for d, r in zip(shapes[0], _ints(vals[1])))


@_register(_SHAPE, "Range")
def _s_range(n, shapes, vals, k):
    count = _range_count(vals)
    return None if count is None else (count,)


def _slice_spec(n, vals, rank) -> dict | None:
    if len(n.input) >= 3:
        if vals[1] is None or vals[2] is None:
            return None
        starts, ends = _ints(vals[1]), _ints(vals[2])
        axes = list(range(len(starts)))
        steps = [1] * len(starts)
        if len(n.input) > 3 and n.input[3]:
            if vals[3] is None:
                return None
            axes = _ints(vals[3])
        if len(n.input) > 4 and n.input[4]:
            if vals[4] is None:
                return None
            steps = _ints(vals[4])
    elif _attr(n, "starts") is not None:
        starts, ends = list(_attr(n, "starts")), list(_attr(n, "ends"))
        axes = list(_attr(n, "axes", range(len(starts))))
        steps = [1] * len(starts)
    else:
        return None
    if any(st == 0 for st in steps):
        return None
    return {int(a) % rank: (int(s), int(e), int(st)) for a, s, e, st in zip(axes, starts, ends, steps)}


@_register(_SHAPE, "Slice")
def _s_slice(n, shapes, vals, k):
    if shapes[0] is None:
        return None
    spec = _slice_spec(n, vals, len(shapes[0]))
    if spec is None:
        return None
    out = list(shapes[0])
    for ax, (s, e, st) in spec.items():
        out[ax] = len(range(*slice(s, e, st).indices(shapes[0][ax])))
    return tuple(out)


@_register(_SHAPE, "Unsqueeze")
def _s_unsqueeze(n, shapes, vals, k):
    if shapes[0] is None:
        return None
    axes = _axes_input(n, vals, ())
    if not axes:
        return None
    out = list(shapes[0])
    rank = len(out) + len(axes)
    for ax in sorted(a % rank for a in axes):
        out.insert(ax, 1)
    return tuple(out)


@_register(_SHAPE, "Squeeze")
def _s_squeeze(n, shapes, vals, k):
    if shapes[0] is None:
        return None
    axes = _axes_input(n, vals, ())
    if axes is False:
        return None
    if not axes:
        return tuple(d for d in shapes[0] if d != 1)
    drop = {a % len(shapes[0]) for a in axes}
    return tuple(d for i, d in enumerate(shapes[0]) if i not in drop)


@_register(_SHAPE, "Resize", "Upsample")
def _s_resize(n, shapes, vals, k):
    if shapes[0] is None:
        return None
    x = shapes[0]
    if n.op_type == "Upsample":
        scales = vals[1] if len(vals) > 1 and vals[1] is not None else _attr(n, "scales")
        return None if scales is None else tuple(int(np.floor(d * s)) for d, s in zip(x, list(scales)))
    axes = _attr(n, "axes")
    if len(vals) > 3 and vals[3] is not None and vals[3].size:
        sizes = _ints(vals[3])
        if axes:
            out = list(x)
            for a, s in zip(axes, sizes):
                out[a % len(x)] = s
            return tuple(out)
        return tuple(sizes)
    if len(vals) > 2 and vals[2] is not None and vals[2].size:
        scales = vals[2].reshape(-1).tolist()
        if axes:
            out = list(x)
            for a, s in zip(axes, scales):
                out[a % len(x)] = int(np.floor(x[a % len(x)] * s))
            return tuple(out)
        return tuple(int(np.floor(d * s)) for d, s in zip(x, scales))
    return None


def _pad_spec(n, vals, rank) -> tuple[list[int], list[int]] | None:
    if len(n.input) > 1 and n.input[1]:
        if vals[1] is None:
            return None
        pads = _ints(vals[1])
    else:
        pads = _attr(n, "pads")
        if pads is None:
            return None
    axes = list(range(rank))
    if len(n.input) > 3 and n.input[3]:
        if vals[3] is None:
            return None
        axes = [a % rank for a in _ints(vals[3])]
    if len(pads) != 2 * len(axes):
        return None
    return [int(p) for p in pads], axes


@_register(_SHAPE, "Pad")
def _s_pad(n, shapes, vals, k):
    if shapes[0] is None:
        return None
    spec = _pad_spec(n, vals, len(shapes[0]))
    if spec is None:
        return None
    pads, axes = spec
    out = list(shapes[0])
    na = len(axes)
    for j, a in enumerate(axes):
        out[a] += pads[j] + pads[j + na]
    return tuple(out)


@_register(_SHAPE, "MatMul", "MatMulInteger")
def _s_matmul(n, shapes, vals, k):
    a, b = shapes[0], shapes[1]
    if a is None or b is None or not a or not b:
        return None
    a2 = (1,) + tuple(a) if len(a) == 1 else tuple(a)
    b2 = tuple(b) + (1,) if len(b) == 1 else tuple(b)
    batch = _broadcast(a2[:-2], b2[:-2]) if len(a2) > 2 or len(b2) > 2 else ()
    if batch is None:
        return None
    out = batch + (a2[-2], b2[-1])
    if len(a) == 1:
        out = out[:-2] + out[-1:]
    if len(b) == 1:
        out = out[:-1]
    return out


@_register(_SHAPE, "Gemm")
def _s_gemm(n, shapes, vals, k):
    a, b = shapes[0], shapes[1]
    if a is None or b is None or len(a) != 2 or len(b) != 2:
        return None
    m = a[1] if _attr(n, "transA", 0) else a[0]
    nn = b[0] if _attr(n, "transB", 0) else b[1]
    return (m, nn)


@_register(_SHAPE, "Einsum")
def _s_einsum(n, shapes, vals, k):
    if any(s is None for s in shapes):
        return None
    from .ops.matmul import parse_einsum

    eq = _attr(n, "equation", b"")
    eq = eq.decode() if isinstance(eq, bytes) else eq
    _, out, sizes = parse_einsum(eq, [tuple(s) for s in shapes])
    return tuple(sizes[c] for c in out)


@_register(_SHAPE, "Transpose")
def _s_transpose(n, shapes, vals, k):
    if shapes[0] is None:
        return None
    perm = _attr(n, "perm") or list(reversed(range(len(shapes[0]))))
    return tuple(shapes[0][p] for p in perm)


@_register(_SHAPE, "Concat")
def _s_concat(n, shapes, vals, k):
    if not shapes or any(s is None for s in shapes):
        return None
    ax = _attr(n, "axis", 0) % len(shapes[0])
    out = list(shapes[0])
    out[ax] = sum(s[ax] for s in shapes)
    return tuple(out)


@_register(_SHAPE, "Gather")
def _s_gather(n, shapes, vals, k):
    if shapes[0] is None or shapes[1] is None:
        return None
    ax = _attr(n, "axis", 0) % len(shapes[0])
    return tuple(shapes[0][:ax]) + tuple(shapes[1]) + tuple(shapes[0][ax + 1:])


@_register(_SHAPE, "GatherElements")
def _s_gather_elements(n, shapes, vals, k):
    return shapes[1]


@_register(_SHAPE, "GatherND")
def _s_gather_nd(n, shapes, vals, k):
    data, idx = shapes[0], shapes[1]
    if data is None or idx is None:
        return None
    b = _attr(n, "batch_dims", 0)
    return tuple(idx[:-1]) + tuple(data[b + idx[-1]:])


@_register(_SHAPE, "ScatterND", "ScatterElements", "Scatter")
def _s_scatter(n, shapes, vals, k):
    return shapes[0]


@_register(_SHAPE, "Split")
def _s_split(n, shapes, vals, k):
    if shapes[0] is None:
        return None
    ax = _attr(n, "axis", 0) % len(shapes[0])
    if len(n.input) > 1 and n.input[1]:
        if vals[1] is None:
            return None
        split = _ints(vals[1])
    else:
        split = _attr(n, "split")
    n_out = len(n.output)
    if split is None:
        dim = shapes[0][ax]
        size = -(-dim // n_out)
        split = [max(min(size, dim - size * i), 0) for i in range(n_out)]
    out = list(shapes[0])
    out[ax] = int(split[k])
    return tuple(out)


def _reduce_axes(n, vals, rank):
    """Normalised reduced axes; () when none given; False when the axes input is not known."""
    axes = _axes_input(n, vals, ())
    if axes is False:
        return False
    return tuple(sorted({a % rank for a in axes})) if axes else ()


@_register(_SHAPE, "ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
           "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare")
def _s_reduce(n, shapes, vals, k):
    x = shapes[0]
    if x is None:
        return None
    axes = _reduce_axes(n, vals, len(x))
    if axes is False:
        return None
    if axes == ():
        if _attr(n, "noop_with_empty_axes", 0):
            return x
        axes = tuple(range(len(x)))
    keep = _attr(n, "keepdims", 1)
    return tuple((1 if i in axes else d) for i, d in enumerate(x) if keep or i not in axes)


@_register(_SHAPE, "ArgMax", "ArgMin")
def _s_argmax(n, shapes, vals, k):
    x = shapes[0]
    if x is None:
        return None
    ax = _attr(n, "axis", 0) % len(x)
    keep = _attr(n, "keepdims", 1)
    return tuple((1 if i == ax else d) for i, d in enumerate(x) if keep or i != ax)


@_register(_SHAPE, "TopK")
def _s_topk(n, shapes, vals, k):
    x = shapes[0]
    if x is None or vals[1] is None:
        return None
    ax = _attr(n, "axis", -1) % len(x)
    out = list(x)
    out[ax] = int(vals[1].reshape(-1)[0])
    return tuple(out)


@_register(_SHAPE, "NonZero")
def _s_nonzero(n, shapes, vals, k):
    return None  # data-dependent: known only when folded


@_register(_SHAPE, "OneHot")
def _s_one_hot(n, shapes, vals, k):
    if shapes[0] is None or vals[1] is None:
        return None
    depth = int(vals[1].reshape(-1)[0])
    out = list(shapes[0])
    ax = _attr(n, "axis", -1)
    out.insert(ax % (len(out) + 1), depth)
    return tuple(out)


@_register(_SHAPE, "GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool")
def _s_global_pool(n, shapes, vals, k):
    x = shapes[0]
    return None if x is None else tuple(x[:2]) + (1,) * (len(x) - 2)


@_register(_SHAPE, "DepthToSpace", "SpaceToDepth")
def _s_depth_to_space(n, shapes, vals, k):
    x = shapes[0]
    if x is None or len(x) != 4:
        return None
    b = _attr(n, "blocksize", 1)
    if n.op_type == "DepthToSpace":
        return (x[0], x[1] // (b * b), x[2] * b, x[3] * b)
    return (x[0], x[1] * b * b, x[2] // b, x[3] // b)


def _window_out(n, spatial, kernel, ceil_mode=False) -> tuple | None:
    r = len(spatial)
    strides = _attr(n, "strides") or [1] * r
    dil = _attr(n, "dilations") or [1] * r
    pads = _attr(n, "pads") or [0] * (2 * r)
    auto = _attr(n, "auto_pad", b"NOTSET")
    auto = auto.decode() if isinstance(auto, bytes) else auto
    out = []
    for i in range(r):
        eff = (kernel[i] - 1) * dil[i] + 1
        if auto in ("SAME_UPPER", "SAME_LOWER"):
            out.append(-(-spatial[i] // strides[i]))
        elif auto == "VALID":
            out.append((spatial[i] - eff) // strides[i] + 1)
        else:
            span = spatial[i] + pads[i] + pads[i + r] - eff
            o = (-(-span // strides[i]) if ceil_mode else span // strides[i]) + 1
            if ceil_mode and (o - 1) * strides[i] >= spatial[i] + pads[i]:
                o -= 1  # the last window must start inside the input or the left padding
            out.append(o)
    return tuple(out)


@_register(_SHAPE, "Conv", "ConvInteger", "QLinearConv")
def _s_conv(n, shapes, vals, k):
    xi, wi = (0, 3) if n.op_type == "QLinearConv" else (0, 1)
    x, w = shapes[xi], shapes[wi]
    if x is None or w is None:
        return None
    kernel = _attr(n, "kernel_shape") or w[2:]
    return (x[0], w[0]) + _window_out(n, x[2:], kernel)


@_register(_SHAPE, "ConvTranspose")
def _s_conv_transpose(n, shapes, vals, k):
    x, w = shapes[0], shapes[1]
    if x is None or w is None:
        return None
    r = len(x) - 2
    cout = w[1] * _attr(n, "group", 1)
    if _attr(n, "output_shape"):
        return (x[0], cout) + tuple(_attr(n, "output_shape")[-r:])
    kernel = _attr(n, "kernel_shape") or w[2:]
    strides = _attr(n, "strides") or [1] * r
    dil = _attr(n, "dilations") or [1] * r
    pads = _attr(n, "pads") or [0] * (2 * r)
    opad = _attr(n, "output_padding") or [0] * r
    auto = _attr(n, "auto_pad", b"NOTSET")
    auto = auto.decode() if isinstance(auto, bytes) else auto
    out = []
    for i in range(r):
        if auto in ("SAME_UPPER", "SAME_LOWER"):
            out.append(x[2 + i] * strides[i])
        else:
            out.append(strides[i] * (x[2 + i] - 1) + opad[i] + (kernel[i] - 1) * dil[i] + 1 - pads[i] - pads[i + r])
    return (x[0], cout) + tuple(out)


@_register(_SHAPE, "MaxPool", "AveragePool", "LpPool")
def _s_pool(n, shapes, vals, k):
    x = shapes[0]
    kernel = _attr(n, "kernel_shape")
    if x is None or not kernel:
        return None
    return tuple(x[:2]) + _window_out(n, x[2:], kernel, bool(_attr(n, "ceil_mode", 0)))


@_register(_SHAPE, "LSTM", "GRU", "RNN")
def _s_recurrent(n, shapes, vals, k):
    x, w = shapes[0], shapes[1]
    if x is None or w is None:
        return None
    gates = {"LSTM": 4, "GRU": 3, "RNN": 1}[n.op_type]
    h = _attr(n, "hidden_size") or w[1] // gates
    d = w[0]
    layout = _attr(n, "layout", 0)
    s, b = (x[0], x[1]) if layout == 0 else (x[1], x[0])
    if k == 0:
        return (s, d, b, h) if layout == 0 else (b, s, d, h)
    return (d, b, h) if layout == 0 else (b, d, h)
