"""Our own shape functions and small-tensor folding, for a whole graph in one pass.

Once the inputs are concrete, every output shape follows from input shapes and, for some ops, from
the *values* of small computed tensors (Reshape of a shape built with Div/Cast/Where, Pad with
computed pads, Expand of a ConstantOfShape, Range with computed limits, Slice with computed starts,
ScatterND into a computed mask...). Two registries keyed by op type compute them:

* ``fold(n, vals, ins)`` evaluates a node when the values of its inputs are known (small tensors:
  shape vectors, axes, pads, indices, masks up to ``MAX_FOLD_ELEMS`` elements) and returns its output
  values; a folder returns None when an input value it needs is unknown.
* ``infer(n, ins, vals, k)`` gives the shape of output ``k`` from the input shapes and whatever input
  values are known (never the value of a big tensor: ScatterND's output has its data's shape whatever
  the updates hold).

``output_dtype(n, ins, k)`` gives an output's element type. An op with no entry returns None (the
loader then asks ONNX shape inference). Values are :class:`Val` (plain Python lists: numpy is not
imported on this path, its import alone costs more than folding a whole graph). Nodes are
:class:`RawNode`, the loader's light copy of a NodeProto with decoded attributes.
"""
from __future__ import annotations

import math
import struct
import sys
from array import array
from typing import Callable, Sequence

from ..types import TensorInfo

MAX_FOLD_ELEMS = 4096  # a folder never materialises a bigger tensor (the loader keeps as many)

Folder = Callable[..., list]
ShapeFn = Callable[..., tuple]

_FOLD: dict[str, Folder] = {}
_SHAPE: dict[str, ShapeFn] = {}
FOLDERS = _FOLD  # read-only view for the loader's hot loop: op type -> folder


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
    """A NodeProto's fields copied once into Python objects (protobuf field access is slow). It keeps no reference
    to the proto (the loader drops the parsed model before it builds the graph)."""

    __slots__ = ("op_type", "domain", "name", "input", "output", "attrs", "index", "meta", "attr_key")

    def __init__(self, proto, index: int = 0):
        self.index = index  # the node's position in its graph's node list
        props = proto.metadata_props  # {key: value}, None when there is none
        self.meta = {p.key: p.value for p in props} if len(props) else None
        self.op_type = proto.op_type
        self.domain = proto.domain
        self.name = proto.name
        self.input = proto.input[:]  # a list (slicing a repeated field is faster than list())
        self.output = proto.output[:]
        attrs = {}
        # the attributes as a hashable tuple (lists as tuples), None when one holds a tensor, graph or type
        key: list | None = []
        attributes = proto.attribute  # (one wrapper: each read of the field makes another)
        for a in attributes[:] if len(attributes) else ():
            t = a.type
            if t == 2:
                attrs[a.name] = v = a.i
            elif t == 7:
                attrs[a.name] = v = list(a.ints)
                v = tuple(v)
            else:
                reader = _ATTR_READERS.get(t)
                if reader is None:
                    continue
                attrs[a.name] = v = reader(a)
                if t in _PLAIN_LISTS:
                    v = tuple(v)
                elif t not in _PLAIN:
                    key = None
            if key is not None:
                key.append((a.name, t, v))
        self.attrs = attrs
        self.attr_key = tuple(key) if key is not None else None


_PLAIN = frozenset({1, 2, 3})  # FLOAT, INT, STRING attributes: hashable values
_PLAIN_LISTS = frozenset({6, 7, 8})  # FLOATS, INTS, STRINGS: hashable as tuples


def _attr(n, name, default=None):
    return n.attrs.get(name, default)


def _str_attr(n, name, default: str) -> str:
    v = n.attrs.get(name, default)
    return v.decode() if isinstance(v, bytes) else v


# ------------------------------------------------------------------------------ values
INT_TYPES = frozenset({"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"})
FLOAT_TYPES = frozenset({"float16", "float32", "float64", "bfloat16"})

# ONNX TensorProto.DataType -> numpy-style name (the loader's dtype names)
ONNX_TYPE_NAMES = {
    1: "float32", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32", 7: "int64", 8: "string",
    9: "bool", 10: "float16", 11: "float64", 12: "uint32", 13: "uint64", 14: "complex64", 15: "complex128",
    16: "bfloat16", 17: "float8e4m3fn", 18: "float8e4m3fnuz", 19: "float8e5m2", 20: "float8e5m2fnuz",
    21: "uint4", 22: "int4", 23: "float4e2m1", 24: "float8e8m0", 25: "uint2", 26: "int2",
    27: "float6e2m3", 28: "float6e3m2",
}
ONNX_TYPES = {v: k for k, v in ONNX_TYPE_NAMES.items()}


class Val:
    """A small tensor's value: ``shape``, ``data`` (flat row-major list of Python numbers), ``dtype``
    (numpy-style name: int64, float32, bool, ...)."""

    __slots__ = ("shape", "data", "dtype")

    def __init__(self, shape, data: list, dtype: str):
        self.shape = tuple(shape)
        self.data = data
        self.dtype = dtype

    @property
    def size(self) -> int:
        return len(self.data)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def ints(self) -> list[int]:
        return [int(x) for x in self.data]

    def scalar(self):
        return self.data[0]

    def __repr__(self) -> str:
        return f"Val({self.shape}, {self.data[:8]}{'...' if len(self.data) > 8 else ''}, {self.dtype})"


def numel_of(dims) -> int:
    n = 1
    for d in dims:
        n *= int(d)
    return n


def row_major_strides(shape) -> tuple[int, ...]:
    """Row-major (contiguous) strides of ``shape``, in elements."""
    st = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        st[i] = st[i + 1] * shape[i + 1]
    return tuple(st)


def _gather_flat(positions, strides) -> list[int]:
    """Flat indices of the row-major cartesian product of per-axis positions (each times its stride)."""
    res = [0]
    for pos, st in zip(positions, strides):
        res = [r + p * st for r in res for p in pos]
    return res


def _cast(x, dtype: str):
    if dtype == "bool":
        return bool(x)
    if dtype in INT_TYPES:
        return x if type(x) is int else int(x) if type(x) is bool else int(math.trunc(x))  # NaN raises: no fold
    return float(x)


def _zero(dtype: str):
    return False if dtype == "bool" else 0 if dtype in INT_TYPES else 0.0


def _small(shape) -> bool:
    return numel_of(shape) <= MAX_FOLD_ELEMS


_BIG_ENDIAN = sys.byteorder == "big"  # ONNX stores raw data little-endian
_ARRAY_CODES = {"float32": "f", "float64": "d", "int8": "b", "uint8": "B", "int16": "h", "uint16": "H",
                "int32": "i", "uint32": "I", "int64": "q", "uint64": "Q"}
_TYPED_FIELD = {"float32": "float_data", "int32": "int32_data", "int64": "int64_data", "float64": "double_data",
                "uint64": "uint64_data", "uint32": "uint64_data", "int8": "int32_data", "uint8": "int32_data",
                "int16": "int32_data", "uint16": "int32_data", "bool": "int32_data"}


def tensor_value(t) -> Val | None:
    """The value of a TensorProto stored inside the file; None for external data or exotic types."""
    if t.data_location == 1:
        return None
    dims = tuple(t.dims)
    dtype = ONNX_TYPE_NAMES.get(t.data_type, "unknown")
    raw = t.raw_data
    if raw:
        code = _ARRAY_CODES.get(dtype)
        if len(raw) % (array(code).itemsize if code is not None else 2 if dtype in ("float16", "bfloat16") else 1):
            return None  # corrupt: not a whole number of elements
        if code is not None:
            a = array(code, raw)
            if _BIG_ENDIAN:
                a.byteswap()
            data = a.tolist()
        elif dtype == "bool":
            data = [b != 0 for b in raw]
        elif dtype == "float16":
            data = list(struct.unpack(f"<{len(raw) // 2}e", raw))
        elif dtype == "bfloat16":
            data = [struct.unpack("<f", struct.pack("<I", h << 16))[0] for h in struct.unpack(f"<{len(raw) // 2}H", raw)]
        else:
            return None
    else:
        field = _TYPED_FIELD.get(dtype)
        if field is not None:
            data = list(getattr(t, field))
            if dtype == "bool":
                data = [x != 0 for x in data]
        elif dtype == "float16":  # bit patterns in int32_data
            if any(not 0 <= x <= 0xFFFF for x in t.int32_data):
                return None  # corrupt: not 16-bit patterns
            data = list(struct.unpack(f"<{len(t.int32_data)}e", struct.pack(f"<{len(t.int32_data)}H", *t.int32_data)))
        else:
            return None
    if t.external_data or len(data) != numel_of(dims):
        return None
    return Val(dims, data, dtype)


# ------------------------------------------------------------------------------ folding
def fold(n, vals: Sequence[Val | None], ins: Sequence[TensorInfo | None] = ()) -> list | None:
    fn = _FOLD.get(n.op_type)
    if fn is None:
        return None
    return fn(n, vals, ins)


def has_folder(op_type: str) -> bool:
    return op_type in _FOLD


def _all(vals, count=None):
    sel = vals if count is None else vals[:count]
    return all(v is not None for v in sel)


def _elementwise(fn, vals: Sequence[Val], dtype: str) -> Val | None:
    """``fn`` over the broadcast of ``vals`` (numpy rules), results cast to ``dtype``."""
    out = _broadcast(*(v.shape for v in vals))
    if out is None or not _small(out):
        return None
    n = numel_of(out)
    cols = []
    for v in vals:
        if v.shape == out:
            cols.append(v.data)
        elif len(v.data) == 1:
            cols.append(v.data * n)
        else:
            shape = (1,) * (len(out) - v.ndim) + v.shape
            pos = [range(d) if s == d else [0] * d for s, d in zip(shape, out)]
            data = v.data
            cols.append([data[i] for i in _gather_flat(pos, row_major_strides(shape))])
    if len(cols) == 1:
        data = [fn(a) for a in cols[0]]
    elif len(cols) == 2:
        data = [fn(a, b) for a, b in zip(cols[0], cols[1])]
    else:
        data = [fn(*xs) for xs in zip(*cols)]
    kind = bool if dtype == "bool" else int if dtype in INT_TYPES else float
    if not all(type(x) is kind for x in data):
        data = [_cast(x, dtype) for x in data]
    return Val(out, data, dtype)


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
        return [Val((), [int(a["value_int"])], "int64")]
    if "value_ints" in a:
        return [Val((len(a["value_ints"]),), [int(x) for x in a["value_ints"]], "int64")]
    if "value_float" in a:
        return [Val((), [float(a["value_float"])], "float32")]
    if "value_floats" in a:
        return [Val((len(a["value_floats"]),), [float(x) for x in a["value_floats"]], "float32")]
    return None


@_register(_FOLD, "Identity", "Dropout")
def _f_identity(n, vals, ins):
    if vals[0] is None:
        return None
    if n.op_type == "Dropout" and len(n.output) > 1:
        return [vals[0], Val(vals[0].shape, [True] * vals[0].size, "bool")]
    return [vals[0]]


def _int_div(a, b):
    if type(a) is int and type(b) is int:
        q = abs(a) // abs(b)  # ONNX integer Div truncates toward zero (C semantics)
        return q if (a >= 0) == (b > 0) else -q
    return a / b


def _mod(a, b):
    return a % b  # Python's sign-of-divisor remainder is numpy's mod (ONNX Mod with fmod=0)


_BINARY = {
    "Add": (lambda a, b: a + b, None), "Sub": (lambda a, b: a - b, None), "Mul": (lambda a, b: a * b, None),
    "Div": (_int_div, None), "Sum": (lambda a, b: a + b, None),
    "Max": (lambda a, b: a if a >= b else b, None), "Min": (lambda a, b: a if a <= b else b, None),
    "Equal": (lambda a, b: a == b, "bool"), "Less": (lambda a, b: a < b, "bool"),
    "Greater": (lambda a, b: a > b, "bool"), "LessOrEqual": (lambda a, b: a <= b, "bool"),
    "GreaterOrEqual": (lambda a, b: a >= b, "bool"), "And": (lambda a, b: bool(a) and bool(b), "bool"),
    "Or": (lambda a, b: bool(a) or bool(b), "bool"), "Xor": (lambda a, b: bool(a) != bool(b), "bool"),
    "BitwiseAnd": (lambda a, b: a & b, None), "BitwiseOr": (lambda a, b: a | b, None),
    "BitwiseXor": (lambda a, b: a ^ b, None),
}


@_register(_FOLD, *_BINARY)
def _f_binary(n, vals, ins):
    if not vals or not _all(vals):
        return None
    fn, out_type = _BINARY[n.op_type]
    if n.op_type == "Div" and any(x == 0 for x in vals[1].data):
        return None
    out = vals[0]
    for v in vals[1:]:
        out = _elementwise(fn, [out, v], out_type or vals[0].dtype)
        if out is None:
            return None
    return [out]


@_register(_FOLD, "Mean")
def _f_mean(n, vals, ins):
    if not vals or not _all(vals):
        return None
    out = vals[0]
    for v in vals[1:]:
        out = _elementwise(lambda a, b: a + b, [out, v], "float64")
        if out is None:
            return None
    return [Val(out.shape, [_cast(x / len(vals), vals[0].dtype) for x in out.data], vals[0].dtype)]


@_register(_FOLD, "Mod")
def _f_mod(n, vals, ins):
    if not _all(vals, 2) or any(x == 0 for x in vals[1].data):
        return None
    fn = math.fmod if _attr(n, "fmod", 0) else _mod
    if _attr(n, "fmod", 0) and vals[0].dtype in INT_TYPES:
        fn = lambda a, b: int(math.fmod(a, b))  # noqa: E731
    return [_elementwise(fn, vals[:2], vals[0].dtype)]


@_register(_FOLD, "Pow")
def _f_pow(n, vals, ins):
    if not _all(vals, 2):
        return None
    return [_elementwise(lambda a, b: a ** b, vals[:2], vals[0].dtype)]


@_register(_FOLD, "BitShift")
def _f_bitshift(n, vals, ins):
    if not _all(vals, 2):
        return None
    left = _str_attr(n, "direction", "LEFT") == "LEFT"
    return [_elementwise((lambda a, b: a << b) if left else (lambda a, b: a >> b), vals[:2], vals[0].dtype)]


def _guard(fn):
    def g(x):
        try:
            return fn(x)
        except (ValueError, OverflowError, ZeroDivisionError):
            return math.nan
    return g


_UNARY = {
    "Neg": lambda x: -x, "Abs": abs, "Floor": math.floor, "Ceil": math.ceil, "Sqrt": _guard(math.sqrt),
    "Sign": lambda x: (x > 0) - (x < 0), "Reciprocal": _guard(lambda x: 1.0 / x), "Exp": _guard(math.exp),
    "Log": _guard(math.log), "Sin": math.sin, "Cos": math.cos, "Tanh": math.tanh, "Round": round,
    "Relu": lambda x: x if x > 0 else x * 0, "BitwiseNot": lambda x: ~x,
    "Sigmoid": _guard(lambda x: 1.0 / (1.0 + math.exp(-x))),
    "Not": lambda x: not x, "IsNaN": lambda x: x != x,
}
_UNARY_BOOL = {"Not", "IsNaN"}


@_register(_FOLD, *_UNARY)
def _f_unary(n, vals, ins):
    if not _all(vals, 1):
        return None
    v = vals[0]
    return [_elementwise(_UNARY[n.op_type], [v], "bool" if n.op_type in _UNARY_BOOL else v.dtype)]


@_register(_FOLD, "Clip")
def _f_clip(n, vals, ins):
    if vals[0] is None:
        return None
    if (len(n.input) > 1 and n.input[1] and vals[1] is None) or (len(n.input) > 2 and n.input[2] and vals[2] is None):
        return None
    lo = vals[1].scalar() if len(vals) > 1 and vals[1] is not None else _attr(n, "min")
    hi = vals[2].scalar() if len(vals) > 2 and vals[2] is not None else _attr(n, "max")

    def clip(x):
        if lo is not None and x < lo:
            x = lo
        if hi is not None and x > hi:
            x = hi
        return x

    return [_elementwise(clip, [vals[0]], vals[0].dtype)]


@_register(_FOLD, "Shape")
def _f_shape(n, vals, ins):
    if not ins or ins[0] is None or ins[0].shape is None:
        return None
    shape = list(ins[0].shape)
    dims = shape[_attr(n, "start", 0):_attr(n, "end", None)]
    return [Val((len(dims),), dims, "int64")]


@_register(_FOLD, "Size")
def _f_size(n, vals, ins):
    if not ins or ins[0] is None or ins[0].shape is None:
        return None
    return [Val((), [numel_of(ins[0].shape)], "int64")]


def _cast_val(v: Val, dtype: str) -> Val | None:
    if dtype not in INT_TYPES and dtype not in FLOAT_TYPES and dtype != "bool":
        return None
    return Val(v.shape, [_cast(x, dtype) for x in v.data], dtype)


@_register(_FOLD, "Cast")
def _f_cast(n, vals, ins):
    if not _all(vals, 1):
        return None
    return [_cast_val(vals[0], ONNX_TYPE_NAMES.get(int(_attr(n, "to", 1)), "unknown"))]


@_register(_FOLD, "CastLike")
def _f_cast_like(n, vals, ins):
    if vals[0] is None:
        return None
    if len(vals) > 1 and vals[1] is not None:
        return [_cast_val(vals[0], vals[1].dtype)]
    if len(ins) > 1 and ins[1] is not None:
        return [_cast_val(vals[0], ins[1].dtype)]
    return None


def _norm_indices(idx: list[int], dim: int) -> list[int] | None:
    out = [i + dim if i < 0 else i for i in idx]
    return out if all(0 <= i < dim for i in out) else None


@_register(_FOLD, "Gather")
def _f_gather(n, vals, ins):
    if not _all(vals, 2):
        return None
    data, ind = vals[0], vals[1]
    if data.ndim == 0:
        return None
    ax = _attr(n, "axis", 0) % data.ndim
    idx = _norm_indices(ind.ints(), data.shape[ax])
    out_shape = data.shape[:ax] + ind.shape + data.shape[ax + 1:]
    if idx is None or not _small(out_shape):
        return None
    pos = [range(d) for d in data.shape[:ax]] + [idx] + [range(d) for d in data.shape[ax + 1:]]
    d = data.data
    return [Val(out_shape, [d[i] for i in _gather_flat(pos, row_major_strides(data.shape))], data.dtype)]


def _element_base(data_shape, ind_shape, ax):
    """Flat data index of every position of an indices tensor, without the ``ax`` component."""
    pos = [range(d) if k != ax else [0] * d for k, d in enumerate(ind_shape)]
    return _gather_flat(pos, row_major_strides(data_shape))


@_register(_FOLD, "GatherElements")
def _f_gather_elements(n, vals, ins):
    if not _all(vals, 2):
        return None
    data, ind = vals[0], vals[1]
    ax = _attr(n, "axis", 0) % data.ndim
    idx = _norm_indices(ind.ints(), data.shape[ax])
    if idx is None:
        return None
    st = row_major_strides(data.shape)[ax]
    d = data.data
    return [Val(ind.shape, [d[b + i * st] for b, i in zip(_element_base(data.shape, ind.shape, ax), idx)], data.dtype)]


def _nd_offsets(data: Val, ind: Val) -> tuple[list[int], int, int] | None:
    """(flat offsets of the addressed blocks, block size, k) of GatherND/ScatterND indices."""
    k = ind.shape[-1]
    if k > data.ndim:
        return None
    st = row_major_strides(data.shape)
    block = numel_of(data.shape[k:])
    flat = ind.ints()
    offsets = []
    for r in range(0, len(flat), k) if k else range(max(len(flat), 1)):
        off = 0
        for j in range(k):
            i = flat[r + j]
            dim = data.shape[j]
            i = i + dim if i < 0 else i
            if not 0 <= i < dim:
                return None
            off += i * st[j]
        offsets.append(off)
    return offsets, block, k


@_register(_FOLD, "GatherND")
def _f_gather_nd(n, vals, ins):
    if not _all(vals, 2) or _attr(n, "batch_dims", 0):
        return None
    data, ind = vals[0], vals[1]
    spec = _nd_offsets(data, ind)
    if spec is None:
        return None
    offsets, block, k = spec
    out = []
    for off in offsets:
        out.extend(data.data[off:off + block])
    return [Val(ind.shape[:-1] + data.shape[k:], out, data.dtype)]


@_register(_FOLD, "ScatterND")
def _f_scatter_nd(n, vals, ins):
    if not _all(vals, 3):
        return None
    data, ind, upd = vals
    spec = _nd_offsets(data, ind)
    if spec is None:
        return None
    offsets, block, _ = spec
    red = _str_attr(n, "reduction", "none")
    combine = {"add": lambda a, b: a + b, "mul": lambda a, b: a * b, "max": max, "min": min}.get(red)
    out = list(data.data)
    u = upd.data
    for j, off in enumerate(offsets):
        chunk = u[j * block:(j + 1) * block]
        if combine is None:
            out[off:off + block] = chunk
        else:
            out[off:off + block] = [combine(a, b) for a, b in zip(out[off:off + block], chunk)]
    return [Val(data.shape, [_cast(x, data.dtype) for x in out], data.dtype)]


@_register(_FOLD, "ScatterElements", "Scatter")
def _f_scatter_elements(n, vals, ins):
    if not _all(vals, 3) or _str_attr(n, "reduction", "none") != "none":
        return None
    data, ind, upd = vals
    ax = _attr(n, "axis", 0) % data.ndim
    idx = _norm_indices(ind.ints(), data.shape[ax])
    if idx is None:
        return None
    st = row_major_strides(data.shape)[ax]
    out = list(data.data)
    for b, i, u in zip(_element_base(data.shape, ind.shape, ax), idx, upd.data):
        out[b + i * st] = _cast(u, data.dtype)
    return [Val(data.shape, out, data.dtype)]


def _axes_input(n, vals, ins, i=1, attr="axes"):
    """Axes from input ``i`` (newer opsets) or the attribute; ``False`` when the input is unknown."""
    if len(n.input) > i and n.input[i]:
        return vals[i].ints() if vals[i] is not None else False
    a = _attr(n, attr)
    return None if a is None else [int(x) for x in a]


def _reshaped(v: Val, shape) -> Val:
    return Val(shape, v.data, v.dtype)


@_register(_FOLD, "Unsqueeze")
def _f_unsqueeze(n, vals, ins):
    if vals[0] is None:
        return None
    shape = _s_unsqueeze(n, [vals[0].shape], vals, 0)
    return None if shape is None else [_reshaped(vals[0], shape)]


@_register(_FOLD, "Squeeze")
def _f_squeeze(n, vals, ins):
    if vals[0] is None:
        return None
    shape = _s_squeeze(n, [vals[0].shape], vals, 0)
    return None if shape is None else [_reshaped(vals[0], shape)]


@_register(_FOLD, "Flatten")
def _f_flatten(n, vals, ins):
    if vals[0] is None:
        return None
    return [_reshaped(vals[0], _s_flatten(n, [vals[0].shape], vals, 0))]


@_register(_FOLD, "Reshape")
def _f_reshape(n, vals, ins):
    if not _all(vals, 2):
        return None
    shape = _reshape_target(vals[0].shape, vals[1].ints(), _attr(n, "allowzero", 0))
    return None if shape is None else [_reshaped(vals[0], shape)]


@_register(_FOLD, "Concat")
def _f_concat(n, vals, ins):
    if not vals or not _all(vals):
        return None
    vs = [v if v.ndim else _reshaped(v, (1,)) for v in vals]
    shape = _s_concat(n, [v.shape for v in vs], vals, 0)
    if shape is None:
        return None
    ax = _attr(n, "axis", 0) % len(shape)
    outer = numel_of(shape[:ax])
    blocks = [numel_of(v.shape[ax:]) for v in vs]
    out = []
    for o in range(outer):
        for v, b in zip(vs, blocks):
            out.extend(v.data[o * b:(o + 1) * b])
    return [Val(shape, out, vals[0].dtype)]


def _take(v: Val, positions) -> Val:
    shape = tuple(len(p) for p in positions)
    d = v.data
    return Val(shape, [d[i] for i in _gather_flat(positions, row_major_strides(v.shape))], v.dtype)


@_register(_FOLD, "Slice")
def _f_slice(n, vals, ins):
    v = vals[0]
    if v is None or v.ndim == 0:
        return None
    spec = _slice_spec(n, vals, v.ndim)
    if spec is None:
        return None
    pos = [range(d) for d in v.shape]
    for ax, (s, e, st) in spec.items():
        pos[ax] = range(*slice(s, e, st).indices(v.shape[ax]))
    return [_take(v, pos)]


@_register(_FOLD, "Transpose")
def _f_transpose(n, vals, ins):
    v = vals[0]
    if v is None:
        return None
    perm = _attr(n, "perm") or list(reversed(range(v.ndim)))
    st = row_major_strides(v.shape)
    d = v.data
    idx = _gather_flat([range(v.shape[p]) for p in perm], [st[p] for p in perm])
    return [Val(tuple(v.shape[p] for p in perm), [d[i] for i in idx], v.dtype)]


@_register(_FOLD, "Tile")
def _f_tile(n, vals, ins):
    if not _all(vals, 2):
        return None
    v, reps = vals[0], vals[1].ints()
    if len(reps) != v.ndim or not _small([d * r for d, r in zip(v.shape, reps)]):
        return None
    return [_take(v, [list(range(d)) * r for d, r in zip(v.shape, reps)])]


@_register(_FOLD, "Split")
def _f_split(n, vals, ins):
    v = vals[0]
    if v is None or v.ndim == 0:
        return None
    sizes = [_s_split(n, [v.shape], vals, k) for k in range(len(n.output))]
    if any(s is None for s in sizes):
        return None
    ax = _attr(n, "axis", 0) % v.ndim
    out, start = [], 0
    for s in sizes:
        pos = [range(d) for d in v.shape]
        pos[ax] = range(start, start + s[ax])
        out.append(_take(v, pos))
        start += s[ax]
    return out


@_register(_FOLD, "Pad")
def _f_pad(n, vals, ins):
    v = vals[0]
    if v is None:
        return None
    spec = _pad_spec(n, vals, v.ndim)
    if spec is None:
        return None
    pads, axes = spec
    if any(p < 0 for p in pads):
        return None
    before, after = [0] * v.ndim, [0] * v.ndim
    for j, a in enumerate(axes):
        before[a], after[a] = pads[j], pads[j + len(axes)]
    shape = tuple(d + b + e for d, b, e in zip(v.shape, before, after))
    if not _small(shape):
        return None
    mode = _str_attr(n, "mode", "constant")
    pos = []
    for d, b, size in zip(v.shape, before, shape):
        src = []
        for j in range(size):
            i = j - b
            if 0 <= i < d:
                src.append(i)
            elif mode == "constant" or d == 0:
                src.append(None)
            elif mode == "edge":
                src.append(min(max(i, 0), d - 1))
            elif mode == "wrap":
                src.append(i % d)
            elif mode == "reflect" and d > 1:
                period = 2 * (d - 1)
                i %= period
                src.append(i if i < d else period - i)
            else:
                return None
        pos.append(src)
    fill = 0
    if mode == "constant":
        cv = vals[2] if len(vals) > 2 and vals[2] is not None else None
        fill = cv.scalar() if cv is not None and cv.size else _attr(n, "value", 0)
    fill = _cast(fill, v.dtype)
    res = [0]
    for p, st in zip(pos, row_major_strides(v.shape)):
        res = [None if (r is None or q is None) else r + q * st for r in res for q in p]
    d = v.data
    return [Val(shape, [fill if i is None else d[i] for i in res], v.dtype)]


@_register(_FOLD, "ConstantOfShape")
def _f_constant_of_shape(n, vals, ins):
    if not _all(vals, 1):
        return None
    shape = vals[0].ints()
    if any(d < 0 for d in shape) or not _small(shape):
        return None
    t = _attr(n, "value")
    fill = tensor_value(t) if t is not None else Val((1,), [0.0], "float32")
    if fill is None or not fill.size:
        return None
    return [Val(shape, [fill.data[0]] * numel_of(shape), fill.dtype)]


def _range_count(vals) -> int | None:
    if not _all(vals, 3):
        return None
    start, limit, delta = (v.scalar() for v in vals[:3])
    if delta == 0:
        return None
    return max(int(math.ceil((limit - start) / delta)), 0)


@_register(_FOLD, "Range")
def _f_range(n, vals, ins):
    count = _range_count(vals)
    if count is None or count > MAX_FOLD_ELEMS:
        return None
    start, delta = vals[0].scalar(), vals[2].scalar()
    dtype = vals[0].dtype
    return [Val((count,), [_cast(start + i * delta, dtype) for i in range(count)], dtype)]


@_register(_FOLD, "Where")
def _f_where(n, vals, ins):
    if not _all(vals, 3):
        return None
    return [_elementwise(lambda c, x, y: x if c else y, vals[:3], vals[1].dtype)]


@_register(_FOLD, "Expand")
def _f_expand(n, vals, ins):
    if not _all(vals, 2):
        return None
    shape = _broadcast(vals[0].shape, tuple(vals[1].ints()))
    if shape is None or not _small(shape):  # (before the zeros that give the shape are built: a [384, 3, 256, 257]
        return None                         # index grid of Longformer's took 0.1 s per Expand)
    return [_elementwise(lambda x, _: x, [vals[0], Val(shape, [0] * numel_of(shape), "int64")], vals[0].dtype)]


@_register(_FOLD, "Trilu")
def _f_trilu(n, vals, ins):
    v = vals[0]
    if v is None or v.ndim < 2:
        return None
    k = 0
    if len(n.input) > 1 and n.input[1]:
        if vals[1] is None:
            return None
        k = int(vals[1].scalar())
    upper = _attr(n, "upper", 1)
    rows, cols = v.shape[-2], v.shape[-1]
    zero = _zero(v.dtype)
    out = list(v.data)
    for p in range(len(out)):
        i, j = (p // cols) % rows, p % cols
        if (j - i < k) if upper else (j - i > k):
            out[p] = zero
    return [Val(v.shape, out, v.dtype)]


@_register(_FOLD, "CumSum")
def _f_cumsum(n, vals, ins):
    if not _all(vals, 2) or vals[0].ndim == 0:
        return None
    v = vals[0]
    ax = int(vals[1].scalar()) % v.ndim
    st, d = row_major_strides(v.shape)[ax], v.shape[ax]
    x = v.data
    out = list(x)
    rev = _attr(n, "reverse", 0)
    order = range(len(x) - 1, -1, -1) if rev else range(len(x))
    for p in order:
        c = (p // st) % d
        prev = p + st if rev else p - st
        if (c < d - 1) if rev else (c > 0):
            out[p] = out[prev] + x[p]
    if _attr(n, "exclusive", 0):
        out = [a - b for a, b in zip(out, x)]
    return [Val(v.shape, [_cast(a, v.dtype) for a in out], v.dtype)]


@_register(_FOLD, "NonZero")
def _f_nonzero(n, vals, ins):
    v = vals[0]
    if v is None:
        return None
    shape = v.shape or (1,)
    st = row_major_strides(shape)
    hits = [p for p, x in enumerate(v.data) if x]
    data = [(p // st[a]) % shape[a] for a in range(len(shape)) for p in hits]
    return [Val((len(shape), len(hits)), data, "int64")]


def _reduce_plan(n, v: Val, vals):
    """(output shape, output flat index of every input element) of a reduction, or None."""
    axes = _reduce_axes(n, vals, v.ndim)
    if axes is False:
        return None
    if axes == ():
        if _attr(n, "noop_with_empty_axes", 0):
            return v.shape, list(range(v.size))
        axes = tuple(range(v.ndim))
    keep = _attr(n, "keepdims", 1)
    red_shape = tuple(1 if i in axes else d for i, d in enumerate(v.shape))
    out_st = row_major_strides(red_shape)
    pos = [[0] * d if i in axes else range(d) for i, d in enumerate(v.shape)]
    out_shape = red_shape if keep else tuple(d for i, d in enumerate(v.shape) if i not in axes)
    return out_shape, _gather_flat(pos, out_st)


_REDUCE = {
    "ReduceSum": (lambda a, x: a + x, 0, None), "ReduceProd": (lambda a, x: a * x, 1, None),
    "ReduceMax": (lambda a, x: x if a is None or x > a else a, None, None),
    "ReduceMin": (lambda a, x: x if a is None or x < a else a, None, None),
    "ReduceMean": (lambda a, x: a + x, 0, "mean"), "ReduceL1": (lambda a, x: a + abs(x), 0, None),
    "ReduceSumSquare": (lambda a, x: a + x * x, 0, None),
}


@_register(_FOLD, *_REDUCE)
def _f_reduce(n, vals, ins):
    v = vals[0]
    if v is None:
        return None
    plan = _reduce_plan(n, v, vals)
    if plan is None:
        return None
    out_shape, target = plan
    fn, init, post = _REDUCE[n.op_type]
    size = numel_of(out_shape)
    acc = [init] * size
    count = [0] * size
    for t, x in zip(target, v.data):
        acc[t] = fn(acc[t], x)
        count[t] += 1
    if any(a is None for a in acc):
        return None
    if post == "mean":
        acc = [a / c if c else math.nan for a, c in zip(acc, count)]
    return [Val(out_shape, [_cast(a, v.dtype) for a in acc], v.dtype)]


@_register(_FOLD, "ArgMax", "ArgMin")
def _f_argmax(n, vals, ins):
    v = vals[0]
    if v is None or v.ndim == 0 or _attr(n, "select_last_index", 0):
        return None
    ax = _attr(n, "axis", 0) % v.ndim
    st, d = row_major_strides(v.shape)[ax], v.shape[ax]
    keep = _attr(n, "keepdims", 1)
    red = tuple(1 if i == ax else s for i, s in enumerate(v.shape))
    out_shape = red if keep else tuple(s for i, s in enumerate(v.shape) if i != ax)
    better = (lambda x, b: x > b) if n.op_type == "ArgMax" else (lambda x, b: x < b)
    bases = _gather_flat([[0] if i == ax else range(s) for i, s in enumerate(v.shape)], row_major_strides(v.shape))
    out = []
    for b in bases:
        best, arg = v.data[b], 0
        for j in range(1, d):
            x = v.data[b + j * st]
            if better(x, best):
                best, arg = x, j
        out.append(arg)
    return [Val(out_shape, out, "int64")]


@_register(_FOLD, "MatMul")
def _f_matmul(n, vals, ins):
    if not _all(vals, 2) or vals[0].ndim != 2 or vals[1].ndim != 2:
        return None
    a, b = vals
    m, k = a.shape
    k2, nn = b.shape
    if k != k2 or not _small((m, nn)):
        return None
    out = [sum(a.data[i * k + j] * b.data[j * nn + c] for j in range(k)) for i in range(m) for c in range(nn)]
    return [Val((m, nn), [_cast(x, a.dtype) for x in out], a.dtype)]


# ------------------------------------------------------------------------------ shapes
def infer(n, ins: Sequence[TensorInfo | None], vals: Sequence[Val | None], k: int) -> tuple | None:
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
    return ONNX_TYPE_NAMES.get(int(elem_type), "unknown")


def _broadcast(*shapes: tuple) -> tuple | None:
    first = shapes[0]
    if all(s == first for s in shapes):
        return tuple(first)
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
    return _reshape_target(shapes[0], vals[1].ints(), _attr(n, "allowzero", 0))


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
    return _broadcast(shapes[0], tuple(vals[1].ints()))


@_register(_SHAPE, "ConstantOfShape")
def _s_constant_of_shape(n, shapes, vals, k):
    return None if vals[0] is None else tuple(vals[0].ints())


@_register(_SHAPE, "Tile")
def _s_tile(n, shapes, vals, k):
    if shapes[0] is None or vals[1] is None:
        return None
    return tuple(d * r for d, r in zip(shapes[0], vals[1].ints()))


@_register(_SHAPE, "Range")
def _s_range(n, shapes, vals, k):
    count = _range_count(vals)
    return None if count is None else (count,)


def _slice_spec(n, vals, rank) -> dict | None:
    if len(n.input) >= 3:
        if vals[1] is None or vals[2] is None:
            return None
        starts, ends = vals[1].ints(), vals[2].ints()
        axes = list(range(len(starts)))
        steps = [1] * len(starts)
        if len(n.input) > 3 and n.input[3]:
            if vals[3] is None:
                return None
            axes = vals[3].ints()
        if len(n.input) > 4 and n.input[4]:
            if vals[4] is None:
                return None
            steps = vals[4].ints()
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
        scales = vals[1].data if len(vals) > 1 and vals[1] is not None else _attr(n, "scales")
        return None if scales is None else tuple(int(math.floor(d * s)) for d, s in zip(x, list(scales)))
    axes = _attr(n, "axes")
    if len(vals) > 3 and vals[3] is not None and vals[3].size:
        sizes = vals[3].ints()
        if axes:
            out = list(x)
            for a, s in zip(axes, sizes):
                out[a % len(x)] = s
            return tuple(out)
        return tuple(sizes)
    if len(vals) > 2 and vals[2] is not None and vals[2].size:
        scales = vals[2].data
        if axes:
            out = list(x)
            for a, s in zip(axes, scales):
                out[a % len(x)] = int(math.floor(x[a % len(x)] * s))
            return tuple(out)
        return tuple(int(math.floor(d * s)) for d, s in zip(x, scales))
    return None


def _pad_spec(n, vals, rank) -> tuple[list[int], list[int]] | None:
    if len(n.input) > 1 and n.input[1]:
        if vals[1] is None:
            return None
        pads = vals[1].ints()
    else:
        pads = _attr(n, "pads")
        if pads is None:
            return None
    axes = list(range(rank))
    if len(n.input) > 3 and n.input[3]:
        if vals[3] is None:
            return None
        axes = [a % rank for a in vals[3].ints()]
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
        split = vals[1].ints()
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
    out[ax] = int(vals[1].scalar())
    return tuple(out)


@_register(_SHAPE, "NonZero")
def _s_nonzero(n, shapes, vals, k):
    return None  # data-dependent: known only when folded


@_register(_SHAPE, "OneHot")
def _s_one_hot(n, shapes, vals, k):
    if shapes[0] is None or vals[1] is None:
        return None
    depth = int(vals[1].scalar())
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


@_register(_SHAPE, "Col2Im")
def _s_col2im(n, shapes, vals, k):
    x = shapes[0]
    if x is None or len(x) != 3 or vals[1] is None or vals[2] is None:
        return None
    block = 1
    for b in vals[2].ints():
        block *= int(b)
    return (x[0], x[1] // max(block, 1)) + tuple(int(v) for v in vals[1].ints())


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
