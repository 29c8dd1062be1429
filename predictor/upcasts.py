"""Explicit fp32 regions of a 16-bit model: code that casts activations up (``x.float()``) runs in fp32 until it casts back.

At ``--precision fp16``/``bf16`` the network runs as ``model.half()`` (or bfloat16) does: every floating-point tensor
is 16-bit, except where the model's code casts an activation to float32 (GPT-J's and GPT-Neo's attention scores, the
RMSNorm statistics of LLaMA-style decoders). An export taken at fp32 keeps those casts as ``Cast(to=FLOAT)`` nodes,
and keeps the casts back (``x.to(value.dtype)``, ``x.to(input_dtype)``) the same way, since at fp32 both read alike.
They are told apart by what the runtime dtype would be: a float->FLOAT Cast of a 16-bit activation casts up, and one
of an fp32 activation casts back to the model's type. An fp32 activation promotes every op it feeds (PyTorch's type
promotion), so the region spreads until such casts back. A region that reaches an op with weights (MatMul/Gemm with a
weight operand, a convolution, a normalisation, a recurrent layer) is not one: PyTorch refuses an fp32 input against
16-bit weights, so the cast that opened it was a no-op (``pixel_values.to(self.dtype)``) and is left free. Only casts
of activations (computed from the weights) open a region: a table built from integers (BLOOM's ALiBi slopes) is cast
to the model's type.

Region nodes get the fp32 policy and their tensors their runtime dtype (natural sizes); the opening and closing casts
become real conversion kernels. Ignores: casts from integer or boolean tensors (taken to produce the model's type, as
``mask.to(self.dtype)`` does), and regions an op with weights would close without a cast.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Mapping

from .graph.links import links
from .graph.loader import Graph
from .precision import FLOAT_DTYPES, POLICIES, UNIFORM_LOW_DTYPES, PrecisionPolicy
from .types import Node, TensorInfo, frozen_map

_SOFTMAX = ("Softmax", "LogSoftmax")
# ops PyTorch runs against the model's 16-bit parameters: an fp32 input there is a dtype error, not a promotion
_WEIGHTED = frozenset({"MatMul", "Gemm", "Conv", "ConvTranspose", "LayerNormalization", "BatchNormalization",
                       "InstanceNormalization", "GroupNormalization", "LSTM", "GRU", "RNN", "SimplifiedLayerNormalization",
                       "RMSNormalization"})


def _is_float_cast(node: Node) -> bool:
    if node.op_type != "Cast" or not node.inputs or node.inputs[0] is None or not node.outputs:
        return False
    return node.inputs[0].dtype in FLOAT_DTYPES and node.outputs[0].dtype == "float32"


def _weighted(node: Node) -> bool:
    return node.op_type in _WEIGHTED and any(t is not None and t.is_initializer and t.numel is not None and t.numel > 1
                                             for t in node.inputs)


def fp32_regions(graph: Graph, consumers: dict[str, list[Node]] | None = None) -> tuple[frozenset, frozenset, frozenset]:
    """(region nodes, opening casts, closing casts) of ``graph`` run as a 16-bit model (``consumers``: the graph's,
    graph/links.py, when the caller has them)."""
    if consumers is None:
        consumers = links(graph.nodes)[1]
    # activations: tensors computed from the weights (an op with weights, an embedding Gather) through float ops; an
    # up-cast of anything else (a mask or position table built from integers) is taken to give the model's type
    acts: set[str] = set()
    for n in graph.nodes:
        if _weighted(n) or (n.op_type == "Gather" and n.inputs and n.inputs[0] is not None and n.inputs[0].is_initializer
                            and n.inputs[0].dtype in FLOAT_DTYPES) \
                or any(t is not None and t.name in acts for t in n.inputs):
            acts.update(t.name for t in n.outputs if t.dtype in FLOAT_DTYPES)
    region: set[str] = set()
    opening: set[str] = set()
    closing: set[str] = set()
    fp32_tensors: set[str] = set()  # tensors of accepted regions
    for cast in graph.nodes:
        if not _is_float_cast(cast) or cast.name in region or cast.name in closing \
                or cast.inputs[0].name not in acts or cast.inputs[0].name in fp32_tensors:
            continue
        nodes: set[str] = set()
        ends: set[str] = set()
        tensors = {cast.outputs[0].name}
        stack = [cast.outputs[0].name]
        ok = True
        while stack and ok:
            for c in consumers.get(stack.pop(), ()):
                if c.name in nodes or c.name in ends:
                    continue
                if _is_float_cast(c):
                    ends.add(c.name)  # casts back to the model's type
                    continue
                if c.op_type == "Cast" or _weighted(c):
                    ok = c.op_type == "Cast"  # a cast to another type ends it; an op with weights refutes it
                    continue
                nodes.add(c.name)
                for t in c.outputs:
                    if t.dtype in FLOAT_DTYPES and t.name not in tensors:
                        tensors.add(t.name)
                        stack.append(t.name)
        if ok:
            opening.add(cast.name)
            region |= nodes
            closing |= ends
            fp32_tensors |= tensors
    return frozenset(region), frozenset(opening), frozenset(closing)


def upcast_regions(graph: Graph, pol: PrecisionPolicy) -> tuple[Graph, Mapping[str, PrecisionPolicy]]:
    """``graph`` with its explicit fp32 regions under the uniform 16-bit policy ``pol``: the regions' nodes at fp32, the
    casts that open and close them as conversion kernels, every tensor they touch at its runtime dtype; and the policy
    of every such node. Unchanged at other precisions or without regions."""
    low = UNIFORM_LOW_DTYPES.get(pol.name)
    if low is None:
        return graph, frozen_map()
    producer, readers = links(graph.nodes)
    region, opening, closing = fp32_regions(graph, readers)
    if not opening:
        return graph, frozen_map()
    fp32 = replace(POLICIES["fp32"], natural_floats=True)
    low_pol = replace(pol, natural_floats=True)

    def only_reader_is_softmax(name: str) -> bool:
        rs = readers.get(name, [])
        return len(rs) == 1 and rs[0].op_type in _SOFTMAX

    # softmax(x, dtype=torch.float32): the conversion happens inside the softmax kernel, which reads the 16-bit input
    # (a cast feeding only the softmax) or writes fp32 (a cast of the softmax's output, its only reader)
    fused_in = {n.name for n in graph.nodes if n.name in opening and only_reader_is_softmax(n.outputs[0].name)}
    fused_out = {n.name for n in graph.nodes if n.name in opening and n.inputs[0].name in producer
                 and producer[n.inputs[0].name].op_type in _SOFTMAX and len(readers[n.inputs[0].name]) == 1}
    wide: set[str] = set()  # fp32 tensors: outputs of the opening casts and of region nodes
    for n in graph.nodes:
        if (n.name in opening and n.name not in fused_in) or n.name in region:
            wide.update(t.name for t in n.outputs if t.dtype in FLOAT_DTYPES)
    opening = opening - fused_in - fused_out  # left free: no kernel of their own

    def typed(t: TensorInfo | None) -> TensorInfo | None:
        if t is None or t.dtype not in FLOAT_DTYPES:
            return t
        dtype = "float32" if t.name in wide else low
        return t if t.dtype == dtype else replace(t, dtype=dtype)

    policies: dict[str, PrecisionPolicy] = {}
    nodes: list[Node] = []
    for n in graph.nodes:
        if n.name in region or n.name in opening or n.name in closing:
            outs = tuple(typed(t) for t in n.outputs)
            if n.name in closing:
                outs = tuple(replace(t, dtype=low) if t.dtype in FLOAT_DTYPES else t for t in n.outputs)
            n = replace(n, inputs=tuple(typed(t) for t in n.inputs), outputs=outs)
            policies[n.name] = fp32 if n.name in region else low_pol
        nodes.append(n)
    return replace(graph, nodes=tuple(nodes)), frozen_map(policies)
