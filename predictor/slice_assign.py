"""Slice assignment: the exporter's ScatterND for PyTorch's ``x[:, i] = y`` / ``x[..., :n] = y``, run as one copy.

The TorchScript exporter writes an in-place slice assignment as a ScatterND whose indices are an index grid built at
run time from the shapes (Range, Unsqueeze, Expand, Concat of int64 tensors: DeepSeek's MLA query assembly, the scan
loops of RWKV and RecurrentGemma, Swin's shifted-window mask, MViTv2's pooled residual). PyTorch builds no grid: it
launches one copy kernel (``copy_``/``fill_``) into the view, e.g. 30 us for DeepSeek's [32, 16, 128, 128] query
block at tf32 on the H200, where the exported grid alone (a [32, 16, 128, 128, 4] int64 Concat) was costed 229 us.

Such a ScatterND is marked SLICE_ASSIGN (costed as one kernel reading and writing the updates: graph/ops/
data_movement.py), and the integer nodes that only build its indices are marked INDEX_GRID (no kernel: graph/cost.py).
A grid node is one whose inputs are all integer (or bool) tensors computed from constants and shapes, never from an
activation's values, and whose outputs feed only grids and the indices of marked ScatterNDs. Ignores: a ScatterND
whose indices depend on data (a true scatter: unchanged), and the clone ONNX's ScatterND makes of ``data``, which an
in-place assignment does not (the data tensor's last use is taken to be the assignment).
"""
from __future__ import annotations

from dataclasses import replace

from .graph.context import INDEX_GRID, SLICE_ASSIGN
from .graph.links import SHAPE_READERS, links
from .graph.links import ancestors as links_ancestors
from .graph.loader import Graph
from .types import Node, with_attrs

_INT = frozenset({"int64", "int32", "int16", "int8", "uint8", "uint16", "uint32", "uint64", "bool"})


def _host_int(ancestors) -> set[str]:
    """Tensors whose values follow from constants and shapes alone (integer or bool tensors: no activation data)."""
    known: set[str] = set()
    for n in ancestors:
        if n.op_type in SHAPE_READERS:
            known.update(t.name for t in n.outputs)
            continue
        ins = [t for t in n.inputs if t is not None]
        if all(t.is_initializer or t.name in known for t in ins) and \
                all(t.dtype in _INT for t in (*ins, *n.outputs) if t is not None):
            known.update(t.name for t in n.outputs)
    return known


def mark_slice_assignments(graph: Graph) -> Graph:
    """``graph`` with its slice-assignment ScatterNDs marked SLICE_ASSIGN and their index-grid nodes INDEX_GRID
    (the graph itself where it has none). Work is proportional to the index grids, plus one pass over the graph."""
    scatters = [n for n in graph.nodes if n.op_type == "ScatterND" and len(n.inputs) > 2 and n.inputs[1] is not None]
    if not scatters:
        return graph
    ancestors = links_ancestors(graph.nodes, links(graph.nodes)[0], [s.inputs[1].name for s in scatters])
    host = _host_int(ancestors)
    assign = {id(n) for n in scatters if n.inputs[1].name in host or n.inputs[1].is_initializer}
    if not assign:
        return graph
    made = {t.name for n in ancestors for t in n.outputs if t is not None}
    consumers: dict[str, list[Node]] = {}
    for n in graph.nodes:
        for t in n.inputs:
            if t is not None and t.name in made:
                consumers.setdefault(t.name, []).append(n)
    grid: set[int] = set()

    def feeds_grid(name: str, c: Node) -> bool:  # c reads ``name`` only as a marked ScatterND's indices, or is grid
        if id(c) in grid:
            return True
        return id(c) in assign and c.inputs[1].name == name and c.inputs[0].name != name and c.inputs[2].name != name

    # producers come before their consumers: walking back settles each node after all its consumers
    for n in reversed(ancestors):
        outs = [t.name for t in n.outputs if t is not None and t.name]
        if outs and all(o in host for o in outs):
            used = [(o, c) for o in outs for c in consumers.get(o, [])]
            if used and all(feeds_grid(o, c) for o, c in used):
                grid.add(id(n))
    nodes = tuple(with_attrs(n, {SLICE_ASSIGN: 1}) if id(n) in assign else
                  with_attrs(n, {INDEX_GRID: 1}) if id(n) in grid else n for n in graph.nodes)
    return replace(graph, nodes=nodes)
