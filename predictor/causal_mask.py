"""Causal masks that fused attention applies itself: the nodes that build them launch nothing.

``F.scaled_dot_product_attention(q, k, v, is_causal=True)`` builds no mask: the flash kernel skips the key tiles
above the diagonal. Exported, the call carries the mask it stands for, built from the shapes at run time
(ConstantOfShape -> Trilu per call, or the transformers library's position-range comparison once per forward) and
added to the scores; costed as written, a prefill of 8,192 tokens would fill and triangle a [8192, 8192] fp16 tensor
per layer (2 x 128 MB). This pass marks CAUSAL_MASK (no kernel: graph/cost.py) each node that only builds such a
mask: its inputs are computed from initializers, Constant nodes and shapes alone (never from an activation's or a
graph input's values), its outputs are not returned and feed only other such nodes, shape reads, and the mask input
of fused attention calls whose mask is causal (graph/runtime.causal_mask_reads); those calls then read no mask
(graph/runtime.py ``sdpa``).

Ignores: a causal mask combined with a padding mask from a graph input (it depends on the input's values: kept,
and read by the kernel as an explicit mask), and masks of attention that runs on PyTorch's math path (kept).
"""
from __future__ import annotations

from dataclasses import replace

from .graph.context import CAUSAL_MASK
from .graph.links import SHAPE_READERS, ancestors, links
from .graph.loader import Graph
from .graph.runtime import CAUSAL_MAKERS, causal_mask_reads
from .types import Node, with_attrs

def _host_made(ancestors: list[Node], graph_inputs: frozenset) -> set[str]:
    """Tensors whose values follow from initializers, Constant nodes and shapes alone (``ancestors`` in graph order)."""
    known: set[str] = set()
    for n in ancestors:
        if n.op_type in SHAPE_READERS or all(
                (t.is_initializer and t.name not in graph_inputs) or t.name in known
                for t in n.inputs if t is not None):
            known.update(t.name for t in n.outputs if t is not None)
    return known


def mark_causal_masks(graph: Graph) -> Graph:
    """``graph`` with the nodes that only build fused causal attention's masks marked CAUSAL_MASK (the graph itself
    where there is none). Work is proportional to the masks' producers, plus one pass over the graph."""
    ops = {n.op_type for n in graph.nodes}
    if "Softmax" not in ops or ops.isdisjoint(CAUSAL_MAKERS):  # no causal mask without a Trilu or a comparison
        return graph
    reads = causal_mask_reads(graph.nodes, graph.input_names)
    if not reads:
        return graph
    producer, consumers = links(graph.nodes)
    anc = ancestors(graph.nodes, producer, [name for _, name in reads])
    host = _host_made(anc, graph.input_names)
    mask_of = {(id(node), name) for node, name in reads}
    returned = {t.name for t in graph.outputs}
    mask: set[int] = set()

    def feeds_mask(name: str, c: Node) -> bool:  # c is a mask builder, reads metadata, or applies the causal mask
        return id(c) in mask or c.op_type in SHAPE_READERS or (id(c), name) in mask_of

    # producers come before their consumers: walking back settles each node after all its consumers
    for n in reversed(anc):
        if n.op_type in SHAPE_READERS:
            continue
        outs = [t.name for t in n.outputs if t is not None and t.name]
        if outs and all(o in host and o not in returned for o in outs):
            used = [(o, c) for o in outs for c in consumers.get(o, [])]
            if used and all(feeds_mask(o, c) for o, c in used):
                mask.add(id(n))
    if not mask:
        return graph
    nodes = tuple(with_attrs(n, {CAUSAL_MASK: 1}) if id(n) in mask else n for n in graph.nodes)
    return replace(graph, nodes=nodes)
