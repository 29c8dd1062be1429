"""One kernel item of a training step (a backward, loss or optimizer kernel, or a training-only forward one).

A :class:`Kernel` carries an :class:`~predictor.types.OpWork` (FLOPs by kind, compulsory bytes, kernel count,
implicit-GEMM shape) and the tensors it reads and writes, so that it goes through the same traffic model and
calibration as a forward node (:meth:`Kernel.node` is the synthetic node they see). ``op_type`` is the op type
whose calibration class and hidden kernels apply (a Conv's dgrad and wgrad are "Conv"); ``kind`` is what the
kernel does (dgrad, wgrad, dA, dB, reduce, apply, accumulate, ...). Gradient tensors are named
``grad::<tensor>``; memory (train/memory.py) follows buffers by these names.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from math import prod
from typing import Iterable, Mapping

from ..precision import PrecisionPolicy
from ..timing.features import WGRAD_ATTR
from ..types import Node, OpWork, TensorInfo, WorkKind, frozen_map

GRAD_PREFIX = "grad::"
PHASES = ("forward", "backward", "optimizer")


def grad_name(name: str) -> str:
    return GRAD_PREFIX + name


def grad_of(t: TensorInfo, dtype: str | None = None) -> TensorInfo:
    """The gradient tensor of ``t``: same shape, same dtype (PyTorch keeps a gradient in its tensor's type)."""
    return TensorInfo(grad_name(t.name), dtype or t.dtype, t.shape)


def numel(t: TensorInfo) -> int:
    """Elements of ``t`` (1 for an unknown shape: no data counted)."""
    return prod(t.shape or ())


def nbytes(t: TensorInfo, policy: PrecisionPolicy) -> float:
    """Bytes of ``t`` under ``policy`` (floats at the policy's storage size, others at their own)."""
    return float(numel(t) * policy.dtype_bytes(t.dtype))


@dataclass(frozen=True)
class Kernel:
    name: str
    kind: str
    op_type: str
    phase: str
    work: OpWork
    reads: tuple[TensorInfo, ...] = ()
    writes: tuple[TensorInfo, ...] = ()
    keeps: tuple[TensorInfo, ...] = ()   # held alive up to this kernel without being read (memory only)
    workspace_bytes: float = 0.0          # transient memory while it runs (memory only)
    policy: PrecisionPolicy | None = None
    source: str = ""                      # the forward node it belongs to ('' for loss/optimizer kernels)
    scope: str = ""
    domain: str = ""
    attrs: Mapping = field(default_factory=frozen_map)

    def node(self) -> Node:
        """The synthetic node the traffic model and the calibration see (a weight-gradient kernel says so in
        WGRAD_ATTR: cuDNN splits its long N x spatial K over blocks, predictor/timing/features.splits_k)."""
        attrs = frozen_map({**self.attrs, WGRAD_ATTR: 1}) if self.kind == "wgrad" else self.attrs
        return Node(name=self.name, op_type=self.op_type, domain=self.domain, inputs=self.reads,
                    outputs=self.writes or (TensorInfo("", "float32", ()),), attrs=attrs, scope=self.scope)


def make_work(reads: Iterable[TensorInfo], writes: Iterable[TensorInfo], policy: PrecisionPolicy, *,
              matmul: float = 0.0, vector: float = 0.0, kernels: int = 1,
              gemm: tuple[int, int, int, int] | None = None, operands: Iterable[TensorInfo] = (),
              times: Mapping[str, float] | None = None, weights: frozenset = frozenset(),
              notes: tuple[str, ...] = ()) -> OpWork:
    """OpWork with compulsory bytes: each read tensor read ``times[name]`` times (default once), each written
    tensor written once. ``operands``: the GEMM's A and B among the reads; ``weights``: names of parameters."""
    times = times or {}
    input_bytes: dict[str, float] = {}
    for t in reads:
        input_bytes[t.name] = input_bytes.get(t.name, 0.0) + nbytes(t, policy) * times.get(t.name, 1.0)
    written = sum(nbytes(t, policy) * times.get(t.name, 1.0) for t in writes)
    flops = {}
    if matmul:
        flops[WorkKind.MATMUL] = float(matmul)
    if vector:
        flops[WorkKind.VECTOR] = float(vector)
    return OpWork(flops=frozen_map(flops), bytes_read=float(sum(input_bytes.values())), bytes_written=float(written),
                  kernels=kernels, weight_bytes=float(sum(b for n, b in input_bytes.items() if n in weights)),
                  notes=notes, input_bytes=frozen_map(input_bytes), gemm=gemm,
                  gemm_operand_bytes=float(sum(nbytes(t, policy) for t in operands)))


def tiny(name: str, kind: str, phase: str, policy: PrecisionPolicy, op_type: str = "Add", kernels: int = 1,
         nbytes_each: float = 4.0, source: str = "") -> Kernel:
    """A kernel on a handful of scalars (counters, loss seeds, scaler bookkeeping): launch-bound."""
    t = TensorInfo(f"{name}::scalar", "float32", ())
    work = OpWork(flops=frozen_map({WorkKind.VECTOR: float(kernels)}), bytes_read=nbytes_each * kernels,
                  bytes_written=nbytes_each * kernels, kernels=kernels)
    return Kernel(name, kind, op_type, phase, work, (), (t,), policy=policy, source=source)
