"""Slice assignment: the exporter's ScatterND for PyTorch's ``x[:, i] = y`` / ``x[..., :n] = y``, run as one copy.

The TorchScript exporter writes an in-place slice assignment as a ScatterND whose indices are an index grid built at
run time from the shapes (Range, Unsqueeze, Expand, Concat of int64 tensors: DeepSeek's MLA query assembly, the scan
loops of RWKV and RecurrentGemma, Swin's shifted-window mask, MViTv2's pooled residual). PyTorch builds no grid: it
launches one copy kernel (``copy_``/``fill_``) into the view, e.g. 30 us for DeepSeek's [32, 16, 128, 128] query
block at tf32 on the H200, where the exported grid alone (a [32, 16, 128, 128, 4] int64 Concat) was costed 229 us.

Such a ScatterND is marked SLICE_ASSIGN (costed as one kernel reading and writing the updates: graph/ops/
data_movement.py), and the integer nodes that only build its indices are marked INDEX_GRID (no kernel: graph/cost.py).
A grid node is one whose inputs are all integer (or bool) tensors computed from constants and shapes, never from an
activation's values, and whose outputs feed only grids, the indices of marked ScatterNDs and shape reads (the
exporter's broadcast of the index tensors, e.g. Longformer's [384, 3, 256, 257] int64 Add read only by a Shape: 0.7
ms at batch 32 where PyTorch computes nothing). Ignores: a ScatterND
whose indices depend on data (a true scatter: unchanged), and the clone ONNX's ScatterND makes of ``data``, which an
in-place assignment does not (the data tensor's last use is taken to be the assignment).
"""
from __future__ import annotations

from dataclasses import replace
from math import prod

from .graph.context import INDEX_GRID, SLICE_ASSIGN, SOURCE_VIEW, STRIDED_GATHER
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


def _grid_indexed(n: Node, graph_inputs: frozenset) -> bool:
    """A ScatterND (an assignment) or a Gather whose indices are a tensor of more than one element computed in the
    graph (not an initializer, not a graph input such as an embedding lookup's token ids)."""
    if n.op_type == "ScatterND":
        return len(n.inputs) > 2 and n.inputs[1] is not None
    if n.op_type != "Gather" or len(n.inputs) < 2 or n.inputs[1] is None or n.inputs[1].is_initializer \
            or n.inputs[1].name in graph_inputs:
        return False
    shape = n.inputs[1].shape
    return shape is not None and len(shape) > 0 and all(isinstance(d, int) for d in shape) and prod(shape) > 1


_VIEWS = frozenset({"Slice", "Expand", "Reshape", "Squeeze", "Unsqueeze"})


def _source_views(assigns: list[Node], producer: dict, consumers: dict) -> set[int]:
    """The Slice/Expand/Reshape chains that only hand a view to an assignment's updates: ``dst[...] = src[a:b]``
    is one copy_ reading ``src`` strided (the ScatterND's cost), the slices launch nothing. Walks back from each
    updates input while the producer is such a view used by that chain alone."""
    out: set[int] = set()
    for s in assigns:
        t = s.inputs[2]
        while True:
            p = producer.get(t.name)
            if p is None or p.op_type not in _VIEWS or len(consumers.get(t.name, ())) != 1 or not p.inputs:
                break
            out.add(id(p))
            t = p.inputs[0]
    return out


def mark_slice_assignments(graph: Graph) -> Graph:
    """``graph`` with its slice-assignment ScatterNDs marked SLICE_ASSIGN, its strided-view Gathers STRIDED_GATHER
    and their index-grid nodes INDEX_GRID (the graph itself where it has none). Work is proportional to the index
    grids, plus one pass over the graph."""
    graph_inputs = graph.input_names
    indexed = [n for n in graph.nodes if _grid_indexed(n, graph_inputs)]
    if not indexed:
        return graph
    producer, consumers = links(graph.nodes)
    # (an integer tensor read only for its shape, the exporter's broadcast of the index columns, is walked through)
    ancestors = links_ancestors(graph.nodes, producer, [s.inputs[1].name for s in indexed], shape_reads_of=_INT)
    host = _host_int(ancestors)
    assign = {id(n) for n in indexed if n.op_type == "ScatterND" and
              (n.inputs[1].name in host or n.inputs[1].is_initializer)}
    assign |= {id(n) for n in indexed if n.op_type == "Gather" and n.inputs[1].name in host and
               n.inputs[0].name not in host}  # (a Gather of integers from shapes is shape arithmetic: left alone)
    if not assign:
        return graph
    grid: set[int] = set()

    def feeds_grid(name: str, c: Node) -> bool:  # c reads ``name`` only as a marked ScatterND's indices, or its
        if id(c) in grid or c.op_type in SHAPE_READERS:  # shape, or is grid
            return True
        return id(c) in assign and c.inputs[1].name == name and \
            all(t is None or t.name != name for k, t in enumerate(c.inputs) if k != 1)

    # producers come before their consumers: walking back settles each node after all its consumers
    for n in reversed(ancestors):
        outs = [t.name for t in n.outputs if t is not None and t.name]
        if outs and all(o in host for o in outs):
            used = [(o, c) for o in outs for c in consumers.get(o, [])]
            if used and all(feeds_grid(o, c) for o, c in used):
                grid.add(id(n))
    views = _source_views([n for n in indexed if id(n) in assign and n.op_type == "ScatterND"], producer, consumers)
    nodes = tuple(with_attrs(n, {STRIDED_GATHER if n.op_type == "Gather" else SLICE_ASSIGN: 1}) if id(n) in assign else
                  with_attrs(n, {SOURCE_VIEW: 1}) if id(n) in views else
                  with_attrs(n, {INDEX_GRID: 1}) if id(n) in grid else n for n in graph.nodes)
    return replace(graph, nodes=nodes)
