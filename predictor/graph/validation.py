"""Declarations of a graph that ``onnx.checker`` rejects and that would otherwise give a silent wrong
prediction: an initializer or graph output declared twice, a graph input that shadows an initializer with a
different shape, a cycle inside a subgraph (If/Loop/Scan bodies). Each is a one-line PredictorError.
Only names, dims and node lists are read (no tensor values)."""
from __future__ import annotations

from ..types import PredictorError

MAX_SUBGRAPH_DEPTH = 64


def check_declarations(model) -> None:
    g = model.graph
    inits: dict = {}  # name -> the initializer (its dims are read only for an input that shadows it)
    for t in g.initializer:
        name = t.name
        if name in inits:
            raise PredictorError(f"initializer '{name}' is declared twice (onnx.checker: duplicate initializer "
                                 "name)")
        inits[name] = t
    outs: set[str] = set()
    for o in g.output:
        if o.name in outs:
            raise PredictorError(f"graph output '{o.name}' is listed twice (onnx.checker: duplicate output name)")
        outs.add(o.name)
    ins: set[str] = set()
    for i in g.input:
        if i.name in ins:
            raise PredictorError(f"graph input '{i.name}' is listed twice (onnx.checker: duplicate input name)")
        ins.add(i.name)
        t = inits.get(i.name)
        if t is None or not i.type.HasField("tensor_type") or not i.type.tensor_type.HasField("shape"):
            continue
        dims = tuple(t.dims)
        declared = i.type.tensor_type.shape.dim
        if len(declared) != len(dims) or any(d.HasField("dim_value") and d.dim_value != v
                                             for d, v in zip(declared, dims)):
            shown = ",".join(str(d.dim_value) if d.HasField("dim_value") else (d.dim_param or "?") for d in declared)
            raise PredictorError(f"graph input '{i.name}' [{shown}] shadows an initializer of shape "
                                 f"[{','.join(map(str, dims))}]: the two declarations conflict")


def check_subgraphs(raw_nodes) -> None:
    """No cycle inside the body of any node (If/Loop/Scan), from the loader's RawNodes: their attribute
    values are already Python objects, so a graph of 100k plain nodes costs one dict walk per node."""
    graph_type = None
    for n in raw_nodes:
        if not n.attrs:
            continue
        for v in n.attrs.values():
            if isinstance(v, (int, float, bytes, str)):
                continue
            if graph_type is None:
                from .onnx_proto import onnx_pb

                graph_type = onnx_pb().GraphProto
            for sub in (v if isinstance(v, list) else (v,)):
                if isinstance(sub, graph_type):
                    _check_subgraph(sub, n, 1)


def _check_subgraph(sub, owner, depth: int) -> None:
    """No cycle among the body's nodes (names from outer scopes are fine)."""
    if depth > MAX_SUBGRAPH_DEPTH:
        raise PredictorError(f"subgraphs nested deeper than {MAX_SUBGRAPH_DEPTH} levels")
    nodes = list(sub.node)
    produced_by: dict[str, int] = {}
    for k, n in enumerate(nodes):
        for o in n.output:
            if o:
                produced_by[o] = k
    indeg = [0] * len(nodes)
    users: list[list[int]] = [[] for _ in nodes]
    for k, n in enumerate(nodes):
        deps = {produced_by[i] for i in n.input if i in produced_by}
        indeg[k] = len(deps)
        for d in deps:
            users[d].append(k)
    ready = [k for k in range(len(nodes)) if indeg[k] == 0]
    done = 0
    while ready:
        k = ready.pop()
        done += 1
        for u in users[k]:
            indeg[u] -= 1
            if indeg[u] == 0:
                ready.append(u)
    if done != len(nodes):
        raise PredictorError(f"the body '{sub.name or '?'}' of node '{owner.name or owner.op_type}' contains a cycle "
                             "(onnx.checker: nodes not in topological order)")
    for n in nodes:
        for a in n.attribute:
            if a.HasField("g"):
                _check_subgraph(a.g, n, depth + 1)
            for sub2 in a.graphs:
                _check_subgraph(sub2, n, depth + 1)
