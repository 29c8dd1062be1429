"""Shared arithmetic of the op formulas: plain-int helpers and the FLOP constants every family uses.

FLOP conventions (one place, so every family counts the same way):

* An FMA is 2 FLOPs; add, sub, mul, div, min, max, compare, select, abs, neg, floor/ceil/round, sqrt
  and reciprocal are 1 each (the convention of fvcore and ``torch.utils.flop_counter``; a correctly
  rounded fp32 divide or sqrt is several instructions, but these kernels are memory-bound anyway).
* A transcendental function (exp, log, sin, cos, tan, tanh, erf, the inverse and hyperbolic trig
  functions) is ``TRANSCENDENTAL = 4`` FLOPs: one special-function-unit op (ex2/lg2/sin/cos.approx)
  plus ~3 FLOPs of range reduction and scaling around it.
* ``SIGMOID = 6``: 1 / (1 + exp(-x)) = exp (4) + add (1) + reciprocal (1); the negation folds into
  the exp's scale.

Integer, boolean and bitwise ops are counted as FLOPs too (1 per element): they occupy the same
CUDA-core lanes and the roofline has no integer ceiling of its own.

Two rules hold for every formula (the families register through :func:`register` below, which adds
them, so no formula repeats them):

* Folded: a node whose every input ``is_initializer`` (weights, Constants and what the loader
  found computed only from them, e.g. the dynamo LSTM export slicing and re-concatenating the gate
  weights) is computed once, before inference: 0 kernels, 0 bytes.
* ``OpWork.weight_bytes`` is the bytes the node reads from its ``is_initializer`` inputs, taken from
  ``OpWork.input_bytes`` (so an embedding lookup's weight bytes are the gathered rows, and an RNN's
  recurrent weight counts once per step kernel).

A formula that fails on a malformed node (anything but ShapeUnknown) becomes a one-line PredictorError
naming the node. Formulas read attributes with :func:`attr` (schema defaults without importing onnx).
"""
from __future__ import annotations

from dataclasses import replace
from math import prod  # noqa: F401  (the one product of dims; formulas import it from here)
from functools import wraps
from typing import Callable, Mapping, Sequence

from ..context import OpContext, ShapeUnknown
from ..registry import Formula
from ..registry import register as _register
from ._schema_defaults import schema_defaults
from ...types import Node, OpWork, PredictorError, TensorInfo, frozen_map

TRANSCENDENTAL = 4
SIGMOID = TRANSCENDENTAL + 2  # 6
TANH = TRANSCENDENTAL  # 4
INT64_BYTES = 8  # PyTorch index tensors (argmax, max-pool indices, topk indices) are int64


def norm_axis(axis: int, rank: int) -> int:
    return axis + rank if axis < 0 else axis


def elem_bytes(ctx: OpContext, t: TensorInfo) -> int:
    """Bytes per element of ``t`` under the precision policy (floats take the policy's storage size)."""
    return ctx.policy.dtype_bytes(t.dtype)


def in_elem_bytes(ctx: OpContext, i: int = 0) -> int:
    return ctx.policy.dtype_bytes(ctx.input(i).dtype)


def out_elem_bytes(ctx: OpContext, i: int = 0) -> int:
    return ctx.policy.dtype_bytes(ctx.output(i).dtype)


def opt_in_bytes(ctx: OpContext, i: int) -> int:
    """Bytes of optional input ``i``, 0 when it is absent."""
    return ctx.in_bytes(i) if ctx.has_input(i) else 0


def inputs_bytes(ctx: OpContext, indices: Sequence[int]) -> int:
    return sum(ctx.in_bytes(i) for i in indices if ctx.has_input(i))


def out_requested(ctx: OpContext, i: int) -> bool:
    """Whether output ``i`` exists and is named (ONNX leaves unused optional outputs nameless)."""
    return i < len(ctx.node.outputs) and bool(ctx.node.outputs[i].name)


def input_reads(ctx: OpContext, overrides: Mapping[int, float]) -> dict[str, float]:
    """Bytes read from each input tensor (by name): its size once, or ``overrides[i]`` for input i.

    This is ``OpWork.input_bytes`` (the L2-residency model's view of which tensors a node reads);
    set it whenever a formula reads an input other than exactly once.
    """
    out: dict[str, float] = {}
    for i, t in enumerate(ctx.node.inputs):
        if t is None or t.shape is None:
            continue
        b = overrides[i] if i in overrides else ctx.tensor_bytes(t)
        out[t.name] = out.get(t.name, 0.0) + float(b)
    return out


def with_input_reads(work: OpWork, reads: Mapping[str, float]) -> OpWork:
    return replace(work, input_bytes=frozen_map(reads))


def work_plan(ctx: OpContext, passes: Sequence[tuple[float, float]], *, matmul_flops: float = 0.0,
              vector_flops: float = 0.0, weight_bytes: float = 0.0, notes: tuple[str, ...] = (),
              reads: Mapping[int, float] | None = None) -> OpWork:
    """OpWork of a node that the reference runtime runs as several kernels.

    ``passes`` holds one (bytes_read, bytes_written) pair per kernel launched; bytes and the kernel
    count are summed over them, so intermediate tensors are written by one kernel and read again by
    the next, as eager execution does. ``reads``: bytes read from input i where it is not exactly
    once (see :func:`input_reads`).
    """
    work = ctx.work(matmul_flops=matmul_flops, vector_flops=vector_flops, kernels=len(passes),
                    bytes_read=sum(p[0] for p in passes), bytes_written=sum(p[1] for p in passes),
                    weight_bytes=weight_bytes, notes=notes)
    return with_input_reads(work, input_reads(ctx, reads)) if reads else work


def attr(ctx: OpContext, name: str, default=None):
    """``ctx.attr``: the node's attribute, else its schema default, else ``default``; the schema defaults
    come from the bundled table (``_schema_defaults``), so reading one never imports the onnx package."""
    attrs = ctx.node.attrs
    if name in attrs:
        return attrs[name]
    known = schema_defaults(ctx.node.op_type, ctx.node.domain, ctx.opset)
    if known is not None:
        return known.get(name, default)
    return ctx.attr(name, default)


def str_attr(ctx: OpContext, name: str, default: str) -> str:
    v = attr(ctx, name, default)
    if isinstance(v, bytes):
        v = v.decode()
    return v if v is not None else default


def host_constant(ctx: OpContext) -> bool:
    """Whether every input's value is known at load time (folded shape arithmetic).

    Such a node computes on small integer tensors that PyTorch eager holds as Python ints
    (``x.size(1) * 2``, ``torch.cat`` of shapes): no kernel runs on the device.
    """
    node = ctx.node
    known = node.const_inputs
    seen = False
    for t in node.inputs:
        if t is not None:
            if t.name not in known:
                return False
            seen = True
    return seen


FREE = OpWork(flops=frozen_map(), bytes_read=0.0, bytes_written=0.0, kernels=0)  # shared: OpWork is frozen


def folded(node: Node) -> bool:
    """Whether every input of ``node`` is fixed before inference (so the node is computed once)."""
    seen = False
    for t in node.inputs:
        if t is not None:
            if not t.is_initializer:
                return False
            seen = True
    return seen


def weight_bytes_of(node: Node, work: OpWork) -> float:
    """Bytes ``work`` reads from the node's initializer inputs (per ``input_bytes``)."""
    names = {t.name for t in node.inputs if t is not None and t.is_initializer}
    return float(sum(work.input_bytes.get(n, 0.0) for n in names))


def with_load_time_rules(formula: Formula) -> Formula:
    """``formula`` with the two rules of the module docstring: folded nodes are free; weight_bytes.
    A formula that has them already (a second registration of it) is returned as it is."""
    if getattr(formula, "_load_time_rules", False):
        return formula

    @wraps(formula)
    def wrapped(ctx: OpContext) -> OpWork:
        node = ctx.node
        n_init = n_other = 0
        for t in node.inputs:
            if t is not None:
                if t.is_initializer:
                    n_init += 1
                else:
                    n_other += 1
        if n_init and not n_other:
            return FREE
        try:
            work = formula(ctx)
        except (ShapeUnknown, PredictorError):
            raise
        except Exception as e:  # a malformed node (perm out of range, group 0, scalar MatMul...)
            detail = " ".join(str(e).split())[:200]
            raise PredictorError(f"{node.op_type} node '{node.name}' is malformed ({type(e).__name__}: {detail})") from None
        if work.kernels == 0 and not work.bytes_read:
            return work
        w = weight_bytes_of(node, work) if n_init else 0.0
        return work if w == work.weight_bytes else replace(work, weight_bytes=w)

    wrapped._load_time_rules = True  # type: ignore[attr-defined]
    return wrapped


def register(*op_types: str, cls: str, domain: str = "", autocast: str = "follow", view: str | None = None,
             recurrent: bool = False) -> Callable[[Formula], Formula]:
    """:func:`registry.register` of ``fn`` with the load-time rules applied (see the module docstring), and the
    traits of ``op_types`` (registry.OpTraits). Registrations of one formula stack (ops that differ in a trait)."""

    def deco(fn: Formula) -> Formula:
        return _register(*op_types, cls=cls, domain=domain, autocast=autocast, view=view,
                         recurrent=recurrent)(with_load_time_rules(fn))

    return deco
