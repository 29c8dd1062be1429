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
"""
from __future__ import annotations

from dataclasses import replace
from typing import Iterable, Mapping, Sequence

from ..context import OpContext
from ...types import OpWork, TensorInfo, frozen_map

TRANSCENDENTAL = 4
SIGMOID = TRANSCENDENTAL + 2  # 6
TANH = TRANSCENDENTAL  # 4
INT64_BYTES = 8  # PyTorch index tensors (argmax, max-pool indices, topk indices) are int64


def prod(xs: Iterable[int]) -> int:
    n = 1
    for x in xs:
        n *= x
    return n


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


def str_attr(ctx: OpContext, name: str, default: str) -> str:
    v = ctx.attr(name, default)
    if isinstance(v, bytes):
        v = v.decode()
    return v if v is not None else default


def host_constant(ctx: OpContext) -> bool:
    """Whether every input's value is known at load time (folded shape arithmetic).

    Such a node computes on small integer tensors that PyTorch eager holds as Python ints
    (``x.size(1) * 2``, ``torch.cat`` of shapes): no kernel runs on the device.
    """
    node = ctx.node
    present = [t for t in node.inputs if t is not None]
    return bool(present) and all(t.name in node.const_inputs for t in present)
