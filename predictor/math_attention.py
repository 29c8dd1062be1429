"""Scaled-dot-product attention on PyTorch's math path at 16-bit precision: it computes in fp32.

When the fused SDPA kernels do not take a call's shapes (graph/runtime.py ``_fusable_shapes``: 5-D blocks, a
multi-query K of one head broadcast over the query heads), PyTorch runs it kernel by kernel, and on CUDA it casts
16-bit q, k and v up to fp32 first (``allow_fp16_bf16_reduction_math_sdp`` is off by default): the scaling, both
GEMMs (fp32, no tensor cores unless TF32 is on) and the softmax run in fp32, and the output is cast back. At
``--precision fp16``/``bf16`` the call's nodes get the fp32 policy and a cast kernel (``AmpCast``) is inserted on
each of q, k, v and on the output. Ignores: the cast of a floating-point mask (the add promotes it in place), and
autocast graphs (their own dtypes come from predictor/amp.py; there the call stays as autocast runs it).
"""
from __future__ import annotations

from dataclasses import replace
from typing import Mapping

from .amp import CAST_DOMAIN, CAST_OP
from .graph.links import links
from .graph.loader import Graph
from .graph.runtime import math_attention_calls
from .precision import POLICIES, UNIFORM_LOW_DTYPES, PrecisionPolicy
from .types import Node, TensorInfo, frozen_map


def upcast_math_attention(graph: Graph, pol: PrecisionPolicy,
                          skip: Mapping | frozenset = frozenset()) -> tuple[Graph, Mapping[str, PrecisionPolicy]]:
    """``graph`` with its math-path attention calls in fp32 under the uniform 16-bit policy ``pol``, and the policy
    of every node that does not run at ``pol`` (the calls' nodes and their casts); unchanged otherwise. Calls with a
    node in ``skip`` (an explicit fp32 region's, predictor/upcasts.py) are left as they are."""
    low = UNIFORM_LOW_DTYPES.get(pol.name)
    if low is None:
        return graph, frozen_map()
    calls = [c for c in math_attention_calls(graph.nodes, graph.input_names) if not any(n in skip for n in c.nodes)]
    if not calls:
        return graph, frozen_map()
    fp32 = POLICIES["fp32"]
    cast_pol = replace(pol, natural_floats=True)  # each side of a cast at its own dtype
    policies: dict[str, PrecisionPolicy] = {}
    before: dict[str, list[Node]] = {}  # node name -> casts inserted before it
    renamed: dict[tuple[str, str], TensorInfo] = {}  # (node, input name) -> its fp32 copy
    outputs: dict[str, TensorInfo] = {}  # output name of a call -> the fp32 tensor its last node writes instead
    after: dict[str, Node] = {}  # last node of a call -> the cast of its output back to 16 bits
    producer, consumers = links(graph.nodes)

    def cast(src: TensorInfo, dst: TensorInfo, scope: str) -> Node:
        node = Node(name=f"{CAST_OP}:{dst.name}", op_type=CAST_OP, domain=CAST_DOMAIN, inputs=(src,), outputs=(dst,),
                    attrs=frozen_map({"to": dst.dtype}), scope=scope)
        policies[node.name] = cast_pol
        return node

    for call in calls:
        for name in call.nodes:
            policies[name] = fp32
        for t in (call.q, call.k, call.v):
            up = TensorInfo(f"{t.name}::float32", "float32", t.shape)
            readers = [c for c in consumers.get(t.name, []) if c.name in call.nodes]
            if not readers:
                continue
            first = readers[0]
            before.setdefault(first.name, []).append(cast(replace(t, dtype=low), up, first.scope))
            for c in readers:
                renamed[(c.name, t.name)] = up
        wide = TensorInfo(f"{call.out.name}::float32", "float32", call.out.shape)
        outputs[call.out.name] = wide
        last = producer[call.out.name]
        after[last.name] = cast(wide, replace(call.out, dtype=low), last.scope)
    nodes: list[Node] = []
    for n in graph.nodes:
        nodes.extend(before.get(n.name, ()))
        if n.name in policies:
            ins = tuple(renamed.get((n.name, t.name), t) if t is not None else None for t in n.inputs)
            outs = tuple(outputs.get(t.name, t) for t in n.outputs)
            n = replace(n, inputs=ins, outputs=outs)
        nodes.append(n)
        if n.name in after:
            nodes.append(after[n.name])
    return replace(graph, nodes=tuple(nodes)), frozen_map(policies)
