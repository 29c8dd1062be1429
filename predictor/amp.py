"""Mixed precision as ``torch.autocast`` runs it: which node computes at which precision, and the casts.

``--precision amp`` (float16) and ``amp-bf16`` (bfloat16) start from the exported fp32 graph and follow
autocast's op lists on CUDA:

* low-precision ops (autocast "low" at registration, graph/ops: convolutions, matmuls, RNNs, fused attention):
  every floating-point
  input that is not yet in the low type is cast to it by its own kernel. Weights are cast once per forward
  (autocast caches the cast of a parameter within its region; one cast kernel per weight tensor), other
  activations once per consuming op. Their outputs are low precision.
* fp32 ops (autocast "fp32": softmax, layer/group norm, sums, pow, exp, log, ...): low-precision inputs are
  cast up by their own kernel; outputs are fp32.
* everything else runs in the widest floating type of its activation inputs (PyTorch type promotion,
  casting on the fly inside the kernel: no cast kernel); weights and constants do not promote (batch norm
  takes fp32 parameters with fp16 input; a bias after a matmul rides in the low-precision epilogue and
  is cast with the other weights).
* scaled-dot-product attention (the group graph/runtime.py fuses) is one low-precision op; a call the fused
  kernels do not take runs on PyTorch's math path, which computes in fp32 as it does for a 16-bit model
  (predictor/math_attention.py): its nodes are fp32 ops here, so q, k and v are cast up by a kernel each. Ignores
  that PyTorch casts the call's output back to 16 bits at once (here the views after it stay fp32 up to the next
  low-precision op, which casts).
Graph inputs and weights stay fp32 in memory. The result is a new graph whose tensors carry their runtime
dtype, with ``AmpCast`` nodes (domain ``ai.predictor``, one kernel each) where the precision changes, and
the precision policy of every node. Ignores: autocast's promote list (cat, stack, index_put cast their
inputs to the widest type with a kernel each; here they promote in place), ops PyTorch runs in fp32
regardless of autocast.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Mapping

from .graph.loader import Graph
from .graph.registry import op_traits
from .graph.runtime import math_attention_calls, sdpa_groups
from .precision import FLOAT_DTYPES, PrecisionPolicy, mixed_node_policies
from .types import Node, PredictorError, TensorInfo, frozen_map

CAST_OP = "AmpCast"
CAST_DOMAIN = "ai.predictor"

_BIAS_OPS = frozenset({"Add", "Sub"})
_LOW_DTYPES = {"amp": "float16", "amp-bf16": "bfloat16"}


@dataclass(frozen=True)
class MixedGraph:
    """The graph as autocast runs it: runtime dtypes, cast nodes, and each node's precision policy."""

    graph: Graph
    node_policy: Mapping[str, PrecisionPolicy]
    casts: int  # cast kernels inserted


def is_mixed(precision: str) -> bool:
    return precision.lower() in _LOW_DTYPES


def autocast(graph: Graph, precision: str) -> MixedGraph:
    """``graph`` as ``torch.autocast(dtype=float16|bfloat16)`` runs it (see the module docstring)."""
    name = precision.lower()
    if name not in _LOW_DTYPES:
        raise PredictorError(f"'{precision}' is not a mixed precision ({', '.join(_LOW_DTYPES)})")
    low = _LOW_DTYPES[name]
    low_pol, high_pol = mixed_node_policies(name)
    grouped = sdpa_groups(graph.nodes, graph.input_names)
    math_path = frozenset(n for call in math_attention_calls(graph.nodes, graph.input_names) for n in call.nodes)
    dtype: dict[str, str] = {}  # runtime dtype of each float tensor (by name)
    producer: dict[str, Node] = {}
    for t in graph.inputs:
        dtype[t.name] = t.dtype
    weight_casts: dict[str, TensorInfo] = {}
    out_nodes: list[Node] = []
    policies: dict[str, PrecisionPolicy] = {}
    casts = 0

    def cast(t: TensorInfo, to: str, consumer: Node, shared: bool) -> TensorInfo:
        nonlocal casts
        if shared and t.name in weight_casts:
            return weight_casts[t.name]
        src = dtype.get(t.name, t.dtype)
        new = TensorInfo(f"{t.name}::{to}" + ("" if shared else f"::{consumer.name}"), to, t.shape,
                         is_initializer=t.is_initializer)
        src_t = replace(t, dtype=src)
        node = Node(name=f"{CAST_OP}:{new.name}", op_type=CAST_OP, domain=CAST_DOMAIN, inputs=(src_t,),
                    outputs=(new,), attrs=frozen_map({"to": to}), scope=consumer.scope)
        out_nodes.append(node)
        policies[node.name] = low_pol
        dtype[new.name] = to
        casts += 1
        if shared:
            weight_casts[t.name] = new
        return new

    for node in graph.nodes:
        floats = [t for t in node.inputs if t is not None and t.dtype in FLOAT_DTYPES]
        acts = [t for t in floats if not t.is_initializer]
        kind = "fp32" if node.name in math_path else _kind(node, producer, grouped)
        if kind == "low":
            target = low
        elif kind == "fp32":
            target = "float32"
        else:
            target = "float32" if any(dtype.get(t.name, t.dtype) == "float32" for t in acts) else \
                (low if acts else None)
        inputs = []
        for t in node.inputs:
            if t is None or t.dtype not in FLOAT_DTYPES:
                inputs.append(t)
                continue
            cur = dtype.get(t.name, t.dtype)
            if cur != target and _casts(node, kind, t):
                inputs.append(cast(t, target, node, shared=t.is_initializer))
            else:
                inputs.append(replace(t, dtype=cur) if cur != t.dtype else t)
        out_dtype = _attr_cast_to(node) or target
        outputs = []
        for t in node.outputs:
            if t.dtype in FLOAT_DTYPES and out_dtype is not None and not t.is_initializer:
                t = replace(t, dtype=out_dtype)
            dtype[t.name] = t.dtype
            outputs.append(t)
        new = replace(node, inputs=tuple(inputs), outputs=tuple(outputs))
        for t in outputs:
            producer[t.name] = new
        out_nodes.append(new)
        policies[node.name] = low_pol if (kind == "low" or out_dtype == low) else high_pol
    return MixedGraph(replace(graph, nodes=tuple(out_nodes)), frozen_map(policies), casts)


def _casts(node: Node, kind: str, t: TensorInfo) -> bool:
    """Whether autocast casts input ``t`` of ``node`` (of ``kind``) with a kernel of its own."""
    if kind == "follow":
        return False
    if not t.is_initializer:
        return True
    # weights: cast for the low-precision ops and their bias; scalars and fp32 ops' parameters never
    numel = t.numel
    return kind == "low" and (_autocast(node.op_type) == "low" or node.op_type in _BIAS_OPS) \
        and (numel is None or numel > 1)


def _kind(node: Node, producer: Mapping[str, Node], grouped: frozenset) -> str:
    """'low', 'fp32' or 'follow' for one node under autocast."""
    declared = _autocast(node.op_type)
    if declared == "low" or node.name in grouped:
        return "low"
    if declared == "fp32":
        return "fp32"
    if node.op_type in _BIAS_OPS and len(node.inputs) == 2 and all(t is not None for t in node.inputs):
        a, b = node.inputs
        for x, w in ((a, b), (b, a)):
            p = producer.get(x.name)
            if p is not None and _autocast(p.op_type) == "low" and w.is_initializer and w.shape is not None \
                    and sum(1 for d in w.shape if d != 1) <= 1:
                return "low"  # the bias of a linear layer or convolution: part of the low-precision op
    return "follow"


def _autocast(op_type: str) -> str:
    """How autocast treats an op type: declared where its formula is registered (graph/ops; registry.OpTraits)."""
    return op_traits(op_type).autocast


def _attr_cast_to(node: Node) -> str | None:
    """Output dtype of an exported Cast (it stays a real cast at its own target type)."""
    if node.op_type != "Cast" or "to" not in node.attrs:
        return None
    from .graph.shapes import ONNX_TYPE_NAMES

    to = node.attrs["to"]
    if type(to) is not int:  # a malformed node ('to' a graph, a tensor, a string): no known target type
        return None
    to = ONNX_TYPE_NAMES.get(to)
    return to if to in FLOAT_DTYPES else None
