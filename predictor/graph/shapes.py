"""Our own shape functions and small-tensor folding, for what ONNX shape inference leaves unknown.

ONNX's inference (with data propagation) handles most graphs once the inputs are concrete; it gives
up where an output shape depends on the *values* of a computed shape tensor (Reshape of a shape built
with Div/Cast/Where, Expand of a ConstantOfShape, Range...). ``fold`` evaluates small integer tensors
with numpy so those values are known; ``infer`` computes an output shape from input shapes and values.
Both are registries keyed by op type; an op with no entry returns None (left unknown).
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
from onnx import helper, numpy_helper

from ..types import TensorInfo

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


def _attr(n, name, default=None):
    for a in n.attribute:
        if a.name == name:
            return helper.get_attribute_value(a)
    return default


# ------------------------------------------------------------------------------ folding
def fold(n, vals: Sequence[np.ndarray | None], ins: Sequence[TensorInfo | None] = ()) -> list | None:
    fn = _FOLD.get(n.op_type)
    if fn is None:
        return None
    return fn(n, vals, ins)


def _all(vals, count=None):
    sel = vals if count is None else vals[:count]
    return all(v is not None for v in sel)


@_register(_FOLD, "Constant")
def _f_constant(n, vals, ins):
    for a in n.attribute:
        if a.name == "value" and a.t is not None:
            if a.t.data_location == 1 or a.t.external_data:
                return None
            return [numpy_helper.to_array(a.t)]
        if a.name == "value_int":
            return [np.array(a.i, dtype=np.int64)]
        if a.name == "value_ints":
            return [np.array(list(a.ints), dtype=np.int64)]
        if a.name == "value_float":
            return [np.array(a.f, dtype=np.float32)]
        if a.name == "value_floats":
            return [np.array(list(a.floats), dtype=np.float32)]
    return None


@_register(_FOLD, "Identity")
def _f_identity(n, vals, ins):
    return [vals[0]] if _all(vals) else None


_BINARY = {
    "Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Equal": np.equal, "Less": np.less,
    "Greater": np.greater, "LessOrEqual": np.less_equal, "GreaterOrEqual": np.greater_equal,
    "And": np.logical_and, "Or": np.logical_or, "Max": np.maximum, "Min": np.minimum,
}


@_register(_FOLD, *_BINARY)
def _f_binary(n, vals, ins):
    if len(vals) < 2 or not _all(vals):
        return None
    out = vals[0]
    for v in vals[1:]:
        out = _BINARY[n.op_type](out, v)
    return [np.asarray(out)]


@_register(_FOLD, "Div")
def _f_div(n, vals, ins):
    if not _all(vals, 2):
        return None
    a, b = vals[0], vals[1]
    if a.dtype.kind in "iu" and b.dtype.kind in "iu":
        if np.any(b == 0):
            return None
        return [np.trunc(a / b).astype(a.dtype)]
    return [np.asarray(a / b)]


@_register(_FOLD, "Mod")
def _f_mod(n, vals, ins):
    if not _all(vals, 2) or np.any(vals[1] == 0):
        return None
    return [np.asarray(np.fmod(vals[0], vals[1]) if _attr(n, "fmod", 0) else np.mod(vals[0], vals[1]))]


_UNARY = {"Neg": np.negative, "Abs": np.abs, "Not": np.logical_not, "Floor": np.floor, "Ceil": np.ceil,
          "Sqrt": np.sqrt, "Sign": np.sign}


@_register(_FOLD, *_UNARY)
def _f_unary(n, vals, ins):
    return [np.asarray(_UNARY[n.op_type](vals[0]))] if _all(vals, 1) else None


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
    return [np.array(int(np.prod(ins[0].shape, dtype=np.int64)), dtype=np.int64)]


@_register(_FOLD, "Cast")
def _f_cast(n, vals, ins):
    if not _all(vals, 1):
        return None
    to = _attr(n, "to", 1)
    try:
        np_type = helper.tensor_dtype_to_np_dtype(to)
    except Exception:
        return None
    return [vals[0].astype(np_type)]


@_register(_FOLD, "Gather")
def _f_gather(n, vals, ins):
    if not _all(vals, 2):
        return None
    return [np.take(vals[0], vals[1].astype(np.int64), axis=_attr(n, "axis", 0))]


@_register(_FOLD, "Unsqueeze")
def _f_unsqueeze(n, vals, ins):
    if vals[0] is None:
        return None
    axes = _attr(n, "axes") if len(vals) < 2 or vals[1] is None else vals[1].tolist()
    if axes is None:
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
    axes = _attr(n, "axes") if len(vals) < 2 or vals[1] is None else vals[1].tolist()
    if axes is None:
        return [np.squeeze(vals[0])]
    return [np.squeeze(vals[0], axis=tuple(a % vals[0].ndim for a in axes))]


@_register(_FOLD, "Concat")
def _f_concat(n, vals, ins):
    if not _all(vals):
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
    shape = _reshape_target(vals[0].shape, vals[1].tolist(), _attr(n, "allowzero", 0))
    return None if shape is None else [vals[0].reshape(shape)]


@_register(_FOLD, "ConstantOfShape")
def _f_constant_of_shape(n, vals, ins):
    if not _all(vals, 1):
        return None
    shape = [int(d) for d in vals[0].tolist()]
    if any(d < 0 for d in shape) or int(np.prod(shape, dtype=np.int64)) > 4096:
        return None
    t = _attr(n, "value")
    fill = numpy_helper.to_array(t).reshape(-1)[0] if t is not None else np.float32(0)
    return [np.full(shape, fill, dtype=fill.dtype)]


@_register(_FOLD, "Range")
def _f_range(n, vals, ins):
    if not _all(vals, 3):
        return None
    start, limit, delta = (v.reshape(-1)[0] for v in vals[:3])
    if delta == 0:
        return None
    count = max(int(np.ceil((limit - start) / delta)), 0)
    if count > 4096:
        return None
    return [np.arange(start, limit, delta).astype(vals[0].dtype)]


@_register(_FOLD, "Where")
def _f_where(n, vals, ins):
    return [np.where(vals[0], vals[1], vals[2])] if _all(vals, 3) else None


@_register(_FOLD, "Expand")
def _f_expand(n, vals, ins):
    if not _all(vals, 2):
        return None
    shape = _broadcast(tuple(vals[0].shape), tuple(int(d) for d in vals[1].tolist()))
    if shape is None or int(np.prod(shape, dtype=np.int64)) > 4096:
        return None
    return [np.broadcast_to(vals[0], shape).copy()]


@_register(_FOLD, "ReduceProd", "ReduceSum", "ReduceMax", "ReduceMin")
def _f_reduce(n, vals, ins):
    if vals[0] is None:
        return None
    axes = _attr(n, "axes")
    if len(vals) > 1 and vals[1] is not None:
        axes = vals[1].tolist()
    keep = bool(_attr(n, "keepdims", 1))
    fn = {"ReduceProd": np.prod, "ReduceSum": np.sum, "ReduceMax": np.max, "ReduceMin": np.min}[n.op_type]
    ax = None if not axes else tuple(a % max(vals[0].ndim, 1) for a in axes)
    return [np.asarray(fn(vals[0], axis=ax, keepdims=keep))]


# ------------------------------------------------------------------------------ shapes
def infer(n, ins: Sequence[TensorInfo | None], vals: Sequence[np.ndarray | None], k: int) -> tuple | None:
    fn = _SHAPE.get(n.op_type)
    if fn is None:
        return None
    shapes = [i.shape if i is not None else None for i in ins]
    return fn(n, shapes, vals, k)


def output_dtype(n, ins: Sequence[TensorInfo | None]) -> str:
    if n.op_type in ("Shape", "Size", "NonZero", "ArgMax", "ArgMin"):
        return "int64"
    if n.op_type in ("Equal", "Less", "Greater", "Not", "And", "Or", "IsNaN", "IsInf"):
        return "bool"
    if n.op_type == "Cast":
        from .loader import dtype_name

        return dtype_name(_attr(n, "to", 1))
    for i in ins:
        if i is not None and i.dtype != "unknown":
            return i.dtype
    return "float32"


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


ELEMENTWISE = (
    "Add", "Sub", "Mul", "Div", "Pow", "Mod", "Max", "Min", "Sum", "Mean", "Where", "Equal", "Less",
    "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor", "PRelu", "BitShift",
    "Relu", "Sigmoid", "Tanh", "Erf", "Exp", "Log", "Sqrt", "Neg", "Abs", "Not", "Cast", "CastLike",
    "Clip", "Gelu", "HardSwish", "HardSigmoid", "LeakyRelu", "Elu", "Softplus", "Reciprocal", "Floor",
    "Ceil", "Round", "Sign", "IsNaN", "IsInf", "Sin", "Cos", "Identity", "Dropout", "Softmax",
    "LogSoftmax", "LayerNormalization", "BatchNormalization", "InstanceNormalization",
    "GroupNormalization", "Mish", "Selu", "Celu", "Softsign", "Trilu", "CumSum",
)


@_register(_SHAPE, *ELEMENTWISE)
def _s_elementwise(n, shapes, vals, k):
    if n.op_type in ("Dropout", "LayerNormalization", "BatchNormalization") and k > 0:
        return None
    known = [s for s in shapes if s is not None]
    if n.op_type in ("Softmax", "LogSoftmax", "LayerNormalization", "BatchNormalization", "Trilu",
                     "CumSum", "InstanceNormalization", "GroupNormalization", "Clip", "Dropout",
                     "Identity", "Cast", "CastLike"):
        return shapes[0]
    if len(known) != len([s for s in shapes]) or not known:
        return None
    return _broadcast(*known)


@_register(_SHAPE, "Reshape")
def _s_reshape(n, shapes, vals, k):
    if shapes[0] is None or len(vals) < 2 or vals[1] is None:
        return None
    return _reshape_target(shapes[0], vals[1].tolist(), _attr(n, "allowzero", 0))


def _reshape_target(in_shape, target, allowzero) -> tuple | None:
    target = [int(d) for d in target]
    out = [in_shape[i] if (d == 0 and not allowzero and i < len(in_shape)) else d for i, d in enumerate(target)]
    total = int(np.prod(in_shape, dtype=np.int64))
    if out.count(-1) == 1:
        rest = int(np.prod([d for d in out if d != -1], dtype=np.int64))
        if rest == 0 or total % rest:
            return None
        out[out.index(-1)] = total // rest
    if any(d < 0 for d in out) or int(np.prod(out, dtype=np.int64)) != total:
        return None
    return tuple(out)


@_register(_SHAPE, "Expand")
def _s_expand(n, shapes, vals, k):
    if shapes[0] is None or vals[1] is None:
        return None
    return _broadcast(shapes[0], tuple(int(d) for d in vals[1].tolist()))


@_register(_SHAPE, "ConstantOfShape")
def _s_constant_of_shape(n, shapes, vals, k):
    return None if vals[0] is None else tuple(int(d) for d in vals[0].tolist())


@_register(_SHAPE, "Tile")
def _s_tile(n, shapes, vals, k):
    if shapes[0] is None or vals[1] is None:
        return None
    return tuple(d * int(r) for d, r in zip(shapes[0], vals[1].tolist()))


@_register(_SHAPE, "Range")
def _s_range(n, shapes, vals, k):
    out = _f_range(n, vals, ())
    return None if out is None else out[0].shape


def _slice_spec(n, vals, rank) -> dict | None:
    if len(vals) >= 3 and vals[1] is not None and vals[2] is not None:
        starts, ends = vals[1].tolist(), vals[2].tolist()
        axes = vals[3].tolist() if len(vals) > 3 and vals[3] is not None else list(range(len(starts)))
        steps = vals[4].tolist() if len(vals) > 4 and vals[4] is not None else [1] * len(starts)
    elif _attr(n, "starts") is not None:
        starts, ends = list(_attr(n, "starts")), list(_attr(n, "ends"))
        axes = list(_attr(n, "axes", range(len(starts))))
        steps = [1] * len(starts)
    else:
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
    axes = _attr(n, "axes") if len(vals) < 2 or vals[1] is None else vals[1].tolist()
    if axes is None:
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
    axes = _attr(n, "axes") if len(vals) < 2 or vals[1] is None else vals[1].tolist()
    if axes is None:
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
    if len(vals) > 3 and vals[3] is not None and vals[3].size:
        sizes = [int(s) for s in vals[3].tolist()]
        axes = _attr(n, "axes")
        if axes:
            out = list(x)
            for a, s in zip(axes, sizes):
                out[a % len(x)] = s
            return tuple(out)
        return tuple(sizes)
    if len(vals) > 2 and vals[2] is not None and vals[2].size:
        return tuple(int(np.floor(d * s)) for d, s in zip(x, vals[2].tolist()))
    return None


@_register(_SHAPE, "Pad")
def _s_pad(n, shapes, vals, k):
    if shapes[0] is None:
        return None
    pads = vals[1].tolist() if len(vals) > 1 and vals[1] is not None else _attr(n, "pads")
    if pads is None:
        return None
    r = len(shapes[0])
    axes = vals[3].tolist() if len(vals) > 3 and vals[3] is not None else list(range(r))
    out = list(shapes[0])
    na = len(axes)
    for j, a in enumerate(axes):
        out[a % r] += int(pads[j]) + int(pads[j + na])
    return tuple(out)


@_register(_SHAPE, "MatMul")
def _s_matmul(n, shapes, vals, k):
    a, b = shapes[0], shapes[1]
    if a is None or b is None:
        return None
    a2 = (1,) + a if len(a) == 1 else a
    b2 = b + (1,) if len(b) == 1 else b
    batch = _broadcast(a2[:-2], b2[:-2])
    if batch is None:
        return None
    out = batch + (a2[-2], b2[-1])
    if len(a) == 1:
        out = out[:-2] + out[-1:]
    if len(b) == 1:
        out = out[:-1]
    return out


@_register(_SHAPE, "Transpose")
def _s_transpose(n, shapes, vals, k):
    if shapes[0] is None:
        return None
    perm = _attr(n, "perm") or list(reversed(range(len(shapes[0]))))
    return tuple(shapes[0][p] for p in perm)


@_register(_SHAPE, "Concat")
def _s_concat(n, shapes, vals, k):
    if any(s is None for s in shapes) or not shapes:
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
    return shapes[0][:ax] + shapes[1] + shapes[0][ax + 1:]


@_register(_SHAPE, "Split")
def _s_split(n, shapes, vals, k):
    if shapes[0] is None:
        return None
    ax = _attr(n, "axis", 0) % len(shapes[0])
    split = vals[1].tolist() if len(vals) > 1 and vals[1] is not None else _attr(n, "split")
    n_out = len(n.output)
    if split is None:
        dim = shapes[0][ax]
        size = -(-dim // n_out)
        split = [min(size, dim - size * i) for i in range(n_out)]
    out = list(shapes[0])
    out[ax] = int(split[k])
    return tuple(out)
