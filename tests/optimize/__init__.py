"""Tests of the graph optimisation passes (predictor/optimize), one module per pass; shared helpers here."""
from __future__ import annotations

from predictor.graph.cost import cost_graph
from predictor.graph.loader import load_model_proto
from predictor.precision import policy
from predictor.types import WorkKind
from tests.helpers import make_model


def load(nodes, inputs, outputs, inits=None, opset: int = 17):
    """A tiny graph through the real loader."""
    return load_model_proto(make_model(nodes, inputs, outputs, inits, opset))


def costs(graph, precision: str = "fp16") -> dict:
    """Cost of every node (runtime patterns on, compulsory traffic), by node name."""
    gc = cost_graph(graph.nodes, policy(precision), graph.opset or 17,
                    graph_inputs=frozenset(t.name for t in graph.inputs))
    assert not gc.not_costed, gc.not_costed
    return {c.name: c for c in gc.costs}


def kernels(cs: dict) -> int:
    return sum(c.kernels for c in cs.values())


def flops(cs: dict, kind: WorkKind | None = None) -> float:
    if kind is None:
        return sum(c.total_flops for c in cs.values())
    return sum(c.work.flops.get(kind, 0.0) for c in cs.values())


def fused(graph) -> list:
    return [n for n in graph.nodes if n.domain == "ai.predictor"]
