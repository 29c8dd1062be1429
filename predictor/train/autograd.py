"""The autograd graph of one training step, built from the forward ops as the reference runtime runs them.

Input: the costed forward sequence (after graph/runtime.py's patterns), in execution order. Output:
:class:`TrainOp` per forward op with its *effective* inputs and outputs, the parameters, which tensors
require a gradient and which receive one from the loss, and how many gradient contributions each tensor
gets (more than one: an accumulation kernel, train/step.py).

* Fused groups (graph/runtime.py): the node that carries a fused kernel reads the tensors its OpWork names
  (``input_bytes``: q, k, v and the mask of an attention; x of a GELU chain), looked through absorbed views
  (the head transposes), and writes the output of its absorbed tail (the bias Add of a linear layer, the
  output transpose of an attention). Absorbed nodes are not ops of their own.
* Ops whose every input is fixed before the run and that launch nothing (folded weights, shape arithmetic)
  take no part (autocast's per-forward weight casts do launch: they are ops).
* Parameters: floating-point tensors fixed before the run (graph initializers, and the Identity copies the
  TorchScript exporter makes of equal initializers, which keep the parameter's own name) that an op reads
  at a differentiable slot; neither scalars nor tensors computed only from Constant nodes. Graph inputs
  (images, token ids) need no gradient.
* requires_grad flows forward from the parameters through differentiable slots into floating-point
  outputs; gradients flow backward from the loss (the first graph output) through the same slots.
Linear in the number of nodes.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from math import prod
from typing import Mapping, Sequence

from ..graph.registry import STORAGE_VIEWS, op_traits
from ..graph.runtime import ABSORBED, GROUP_NORM, RMS_NORM, WELFORD
from ..precision import FLOAT_DTYPES, PrecisionPolicy
from ..types import Node, OpWork, TensorInfo, frozen_map
from .registry import lookup

ABSORBED_NOTE = ABSORBED  # graph/runtime.py's note on a node absorbed into a fused kernel
# notes graph/runtime.py leaves on the node that carries a fused kernel -> the backward rule's key
FUSED_KEYS: Mapping[str, str] = frozen_map({
    "fused scaled-dot-product attention": "FusedAttention",
    "one elementwise kernel in PyTorch": "FusedElementwise",
    WELFORD: "FusedVar",
    GROUP_NORM: "FusedGroupNorm",
    RMS_NORM: "RMSNormalization",
})
BIAS_EPILOGUE_NOTE = "bias add in the GEMM epilogue"
_TAIL_OPS = frozenset({"Add", "Transpose", "Reshape", "Mul", "Div", "Sqrt"})  # absorbed ops a fused kernel's output
# may pass through (bias add, output transpose; torch.std's correction and square root)
_SHAPE_READERS = frozenset({"Shape", "Size"})  # read a tensor's shape only: no gradient, not part of a tail


@dataclass(frozen=True)
class TrainOp:
    index: int
    node: Node                   # the forward node with its effective inputs and outputs
    work: OpWork                 # forward work (after the runtime patterns)
    policy: PrecisionPolicy
    key: tuple[str, str]         # (domain, op type) of its backward rule
    diff: tuple[int, ...]        # differentiable input slots

    @property
    def name(self) -> str:
        return self.node.name


@dataclass(frozen=True)
class AutogradGraph:
    ops: tuple[TrainOp, ...]
    params: Mapping[str, TensorInfo]       # parameter name -> tensor, in order of first use
    requires_grad: frozenset
    has_grad: frozenset                    # tensors that receive a gradient from the loss
    contributions: Mapping[str, int]       # tensor -> gradient contributions it receives
    alias: Mapping[str, str]               # tensor -> the tensor whose buffer it views (forward)
    loss_input: TensorInfo | None          # the graph output the loss reads
    policy_of: Mapping[str, PrecisionPolicy]  # forward op name -> its precision policy

    def needs_backward(self, op: TrainOp) -> bool:
        return any(t.name in self.has_grad for t in op.node.outputs if t is not None and t.name) and \
            any(self._slot_needs(op, i) for i in op.diff)

    def _slot_needs(self, op: TrainOp, i: int) -> bool:
        t = op.node.inputs[i] if i < len(op.node.inputs) else None
        return t is not None and t.name in self.requires_grad

    def needs(self, op: TrainOp) -> tuple[bool, ...]:
        return tuple(i in op.diff and self._slot_needs(op, i) for i in range(len(op.node.inputs)))

    def base(self, name: str) -> str:
        seen = 0
        while name in self.alias and seen < 64:
            name = self.alias[name]
            seen += 1
        return name


def _is_float(t: TensorInfo | None) -> bool:
    return t is not None and t.dtype in FLOAT_DTYPES


def build(seq: Sequence[tuple[Node, OpWork, PrecisionPolicy]], graph_inputs: Sequence[TensorInfo],
          graph_outputs: Sequence[TensorInfo], seeds: frozenset = frozenset()) -> AutogradGraph:
    """``seeds``: tensors that require a gradient besides the parameters' descendants (a Loop's carried state,
    train/loops.py)."""
    producer: dict[str, Node] = {}
    consumers: dict[str, list[Node]] = {}
    tensors: dict[str, TensorInfo] = {}
    absorbed: set[str] = set()
    for node, work, _ in seq:
        for t in node.outputs:
            if t.name:
                producer[t.name] = node
                tensors[t.name] = t
        for t in node.inputs:
            if t is not None:
                consumers.setdefault(t.name, []).append(node)
                tensors.setdefault(t.name, t)
        if work.kernels == 0 and ABSORBED_NOTE in work.notes:
            absorbed.add(node.name)
    input_names = frozenset(t.name for t in graph_inputs)
    alias: dict[str, str] = {}

    def resolve(name: str) -> str:
        for _ in range(64):  # look through absorbed views (head transposes) to the tensor that exists
            p = producer.get(name)
            if p is None or p.name not in absorbed or op_traits(p.op_type).view not in STORAGE_VIEWS or not p.inputs \
                    or p.inputs[0] is None:
                return name
            alias[name] = p.inputs[0].name
            name = p.inputs[0].name
        return name

    const_memo: dict[str, bool] = {}

    def constant_derived(name: str, depth: int = 0) -> bool:
        if name in const_memo:
            return const_memo[name]
        p = producer.get(name)
        if p is None:
            val = False
        elif p.op_type == "Constant":
            val = True
        elif depth > 48:
            val = False
        else:
            ins = [t for t in p.inputs if t is not None]
            val = bool(ins) and all(constant_derived(t.name, depth + 1) for t in ins)
        const_memo[name] = val
        return val

    ops: list[TrainOp] = []
    policy_of: dict[str, PrecisionPolicy] = {}
    for node, work, pol in seq:
        policy_of[node.name] = pol
        if node.name in absorbed:
            continue
        ins = [t for t in node.inputs if t is not None]
        if ins and all(t.is_initializer for t in ins) and work.kernels == 0:  # folded before the run
            continue
        key_op = node.op_type
        domain = node.domain
        eff_in, eff_out = node.inputs, node.outputs
        fused = next((FUSED_KEYS[n] for n in work.notes if n in FUSED_KEYS), None)
        if fused is not None:
            key_op, domain = fused, ""
            eff_in = tuple(tensors[resolve(n)] if resolve(n) in tensors else TensorInfo(n, "float32", None)
                           for n in work.input_bytes)
            eff_out = _tail(node, consumers, absorbed)
        elif BIAS_EPILOGUE_NOTE in work.notes:
            names = {t.name for t in node.inputs if t is not None}
            extra = tuple(tensors[n] for n in work.input_bytes if n not in names and n in tensors)
            eff_in = tuple(node.inputs) + extra
            eff_out = _tail(node, consumers, absorbed)
        elif work.kernels == 0:  # (a q/k/v Split around fused attention too: its backward's cat is not counted)
            key_op, domain = "View", ""
            if node.inputs and node.inputs[0] is not None:
                for t in node.outputs:
                    if t.name:
                        alias[t.name] = node.inputs[0].name
        spec = lookup(key_op, domain)
        eff_node = replace(node, inputs=tuple(eff_in), outputs=tuple(eff_out)) \
            if (eff_in is not node.inputs or eff_out is not node.outputs) else node
        diff = spec.diff if spec is not None and spec.diff is not None else \
            tuple(i for i, t in enumerate(eff_node.inputs) if _is_float(t))
        diff = tuple(i for i in diff if i < len(eff_node.inputs) and _is_float(eff_node.inputs[i]))
        if key_op == "View":
            diff = tuple(i for i in diff if i == 0)
        ops.append(TrainOp(len(ops), eff_node, work, pol, ("" if domain in ("", "ai.onnx") else domain, key_op), diff))

    # parameters, in order of first use (a weight's per-forward cast, an op of its own, is not one)
    made = {t.name for op in ops for t in op.node.outputs if t.name}
    params: dict[str, TensorInfo] = {}
    for op in ops:
        for i in op.diff:
            t = op.node.inputs[i]
            if t is None or t.name in params or t.name in input_names or not t.is_initializer or t.name in made:
                continue
            if prod(t.shape or ()) <= 1 or t.shape is None or constant_derived(t.name):
                continue
            params[t.name] = t
    # requires_grad, forward
    rg: set[str] = set(params) | set(seeds)
    for op in ops:
        if any(op.node.inputs[i] is not None and op.node.inputs[i].name in rg for i in op.diff):
            for t in op.node.outputs:
                if t.name and _is_float(t):
                    rg.add(t.name)
    # gradients, backward from the loss
    loss_input = graph_outputs[0] if graph_outputs else None
    if loss_input is not None and loss_input.name in tensors and tensors[loss_input.name].shape is not None:
        loss_input = tensors[loss_input.name]
    has: set[str] = set()
    contrib: dict[str, int] = {}
    if loss_input is not None and loss_input.name in rg:
        has.add(loss_input.name)
    for op in reversed(ops):
        if not any(t.name in has for t in op.node.outputs if t.name):
            continue
        for i in op.diff:
            t = op.node.inputs[i]
            if t is not None and t.name in rg:
                has.add(t.name)
                contrib[t.name] = contrib.get(t.name, 0) + 1
    return AutogradGraph(tuple(ops), frozen_map(params), frozenset(rg), frozenset(has), frozen_map(contrib),
                         frozen_map(alias), loss_input, frozen_map(policy_of))


def _tail(node: Node, consumers: Mapping[str, list[Node]], absorbed: set[str]) -> tuple[TensorInfo, ...]:
    """The outputs of a fused kernel: through its absorbed tail (bias add, output transpose) when it has one (shape
    reads of the output aside)."""
    out = node.outputs
    for _ in range(4):
        if not out or not out[0].name:
            break
        cs = [c for c in consumers.get(out[0].name, []) if c.op_type not in _SHAPE_READERS]
        if len(cs) != 1 or cs[0].name not in absorbed or cs[0].op_type not in _TAIL_OPS:
            break
        out = cs[0].outputs
    return tuple(out)
