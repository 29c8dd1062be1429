"""What a backward rule sees of one forward op: its tensors, which need gradients, and kernel builders."""
from __future__ import annotations

from typing import Any, Iterable

from ..graph.context import OpContext
from ..graph.ops._common import attr as _attr
from ..precision import PrecisionPolicy
from ..types import DEFAULT_OPSET, Node, OpWork, TensorInfo
from .kernel import Kernel, grad_of, make_work, nbytes, numel


class BackwardContext:
    """One forward op (``node`` with its effective inputs and outputs, ``work`` its forward OpWork).

    ``needs[i]``: input i needs a gradient; ``grad_outs[j]``: the gradient arriving at output j (None when none
    does). Rules build kernels with :meth:`kernel` and record what they keep (:meth:`save`), what passes
    through (:meth:`passthrough`) and what the forward kernel writes for them (:meth:`internal`).
    """

    def __init__(self, node: Node, work: OpWork, policy: PrecisionPolicy, needs: tuple[bool, ...],
                 grad_outs: tuple[TensorInfo | None, ...], params: frozenset = frozenset(), opset: int = DEFAULT_OPSET):
        self.node = node
        self.work = work
        self.policy = policy
        self.needs = needs
        self.grad_outs = grad_outs
        self.params = params
        self.opset = opset
        self.saved: list[TensorInfo] = []
        self.internals: list[TensorInfo] = []
        self.passthroughs: dict[int, TensorInfo] = {}  # input slot -> the gradient tensor it aliases
        self._n = 0

    # --- tensors ------------------------------------------------------------------------------
    @property
    def op_type(self) -> str:
        return self.node.op_type

    def has_input(self, i: int) -> bool:
        return i < len(self.node.inputs) and self.node.inputs[i] is not None

    def input(self, i: int) -> TensorInfo:
        return self.node.inputs[i]

    def output(self, j: int = 0) -> TensorInfo:
        return self.node.outputs[j]

    def shape(self, t: TensorInfo) -> tuple[int, ...]:
        return tuple(t.shape or ())

    def numel(self, t: TensorInfo) -> int:
        return numel(t)

    def nbytes(self, t: TensorInfo) -> float:
        return nbytes(t, self.policy)

    def needs_grad(self, i: int) -> bool:
        return i < len(self.needs) and self.needs[i]

    def grad_out(self, j: int = 0) -> TensorInfo | None:
        return self.grad_outs[j] if j < len(self.grad_outs) else None

    def grad_in(self, i: int) -> TensorInfo:
        """The gradient input i receives; a tensor read at several slots (x * x) gets one per slot after the
        first, which train/step.py accumulates."""
        t = self.input(i)
        if any(self.needs_grad(j) and self.node.inputs[j] is not None and self.node.inputs[j].name == t.name
               for j in range(i)):
            return TensorInfo(f"{grad_of(t).name}#slot{i}", t.dtype, t.shape)
        return grad_of(t)

    def attr(self, name: str, default: Any = None) -> Any:
        return _attr(OpContext(self.node, self.policy, self.opset), name, default)

    # --- what the rule declares ---------------------------------------------------------------
    def save(self, *tensors: TensorInfo | None) -> None:
        """Forward tensors the backward keeps (PyTorch's saved variables), read or not."""
        self.saved.extend(t for t in tensors if t is not None)

    def internal(self, suffix: str, dtype: str, shape: tuple[int, ...]) -> TensorInfo:
        """A small tensor the forward kernel writes for the backward (statistics, indices, log-sum-exp)."""
        t = TensorInfo(f"{self.node.name}::{suffix}", dtype, tuple(shape))
        self.internals.append(t)
        return t

    def temp(self, suffix: str, like: TensorInfo | None = None, dtype: str | None = None,
             shape: tuple[int, ...] | None = None) -> TensorInfo:
        """A backward temporary: ``like``'s shape and type by default (a full-size product before a
        broadcast reduction), or ``shape``/``dtype`` given."""
        return TensorInfo(f"{self.node.name}::{suffix}", dtype or (like.dtype if like else "float32"),
                          tuple(shape) if shape is not None else like.shape)

    def passthrough(self, i: int, j: int = 0) -> None:
        """The gradient of input i is the gradient of output j itself: no kernel, no new buffer."""
        g = self.grad_out(j)
        if g is not None:
            self.passthroughs[i] = g

    # --- kernels ------------------------------------------------------------------------------
    def kernel(self, kind: str, reads: Iterable[TensorInfo | None], writes: Iterable[TensorInfo], *,
               op_type: str | None = None, matmul: float = 0.0, vector: float = 0.0, kernels: int = 1,
               gemm: tuple[int, int, int, int] | None = None, operands: Iterable[TensorInfo] = (),
               times: dict[str, float] | None = None, workspace: float = 0.0) -> Kernel:
        reads = tuple(t for t in reads if t is not None)
        writes = tuple(writes)
        work = make_work(reads, writes, self.policy, matmul=matmul, vector=vector, kernels=kernels, gemm=gemm,
                         operands=operands, times=times, weights=self.params)
        self._n += 1
        return Kernel(name=f"{self.node.name}::{kind}", kind=kind, op_type=op_type or self.node.op_type,
                      phase="backward", work=work, reads=reads, writes=writes, workspace_bytes=workspace,
                      policy=self.policy, source=self.node.name, scope=self.node.scope,
                      domain=self.node.domain if op_type is None else "")

    def broadcast(self, i: int) -> bool:
        """Whether input i was broadcast to the output's shape (its gradient needs a reduction)."""
        return tuple(self.input(i).shape or ()) != tuple(self.output(0).shape or ())

    def pass_or_reduce(self, i: int, kind: str) -> list[Kernel]:
        """Gradient of input i = the output gradient: passthrough, or PyTorch's ``sum_to_size`` reduction
        kernel when input i was broadcast."""
        g = self.grad_out(0)
        if not self.broadcast(i):
            self.passthrough(i)
            return []
        return [self.kernel(kind, (g,), (self.grad_in(i),), op_type="ReduceSum", vector=self.numel(g))]

    def elementwise_grad(self, i: int, kind: str, reads: Iterable[TensorInfo | None], vector_per_elem: float,
                         op_type: str | None = None) -> list[Kernel]:
        """One output-sized elementwise kernel computing input i's gradient from ``reads``; a broadcast input
        gets the full-size product first and a ``sum_to_size`` reduction after (2 kernels)."""
        g = self.grad_out(0)
        n = self.numel(g)
        if not self.broadcast(i):
            return [self.kernel(kind, reads, (self.grad_in(i),), op_type=op_type, vector=vector_per_elem * n)]
        full = self.temp(f"{kind}_full", g)
        return [self.kernel(kind, reads, (full,), op_type=op_type, vector=vector_per_elem * n),
                self.kernel(f"{kind}_sum", (full,), (self.grad_in(i),), op_type="ReduceSum", vector=n)]
