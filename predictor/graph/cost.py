"""Cost stage: run each node's registered formula and turn its OpWork into an OpCost.

FLOPs are split by (precision, unit) with the precision policy; bytes per memory level come from the
traffic model (compulsory bytes at every level when none is given). Nodes with no formula, or whose
shapes are unknown, are collected by op type and count: reported, never counted as zero silently.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Protocol, Sequence

from ..precision import PrecisionPolicy
from ..types import FlopCount, MemLevel, Node, OpCost, OpWork, Unit, frozen_map
from .context import OpContext, ShapeUnknown
from . import runtime
from .registry import lookup


class TrafficModel(Protocol):
    def assign(self, seq: Sequence[tuple[Node, OpWork]], matmul_unit: Unit,
               elem_bytes: int) -> list[Mapping[MemLevel, float]]: ...


class CompulsoryTraffic:
    """Every level sees the compulsory bytes: inputs read once, outputs written once."""

    def assign(self, seq, matmul_unit, elem_bytes):
        return [frozen_map({lv: w.bytes_read + w.bytes_written for lv in MemLevel}) for _, w in seq]


@dataclass(frozen=True)
class GraphCost:
    costs: tuple[OpCost, ...]
    unsupported: Mapping[str, int]  # op type -> count (no formula)
    unshaped: Mapping[str, int]  # op type -> count (formula needed a shape inference could not give)

    @property
    def not_costed(self) -> dict[str, int]:
        out = dict(self.unsupported)
        for k, v in self.unshaped.items():
            out[f"{k} (unknown shape)"] = v
        return out


def node_work(node: Node, policy: PrecisionPolicy, opset: int = 21) -> OpWork | None:
    """The node's OpWork, or None when no formula is registered. Raises ShapeUnknown."""
    formula = lookup(node.op_type, node.domain)
    if formula is None:
        return None
    return formula(OpContext(node, policy, opset))


def to_cost(node: Node, work: OpWork, policy: PrecisionPolicy,
            level_bytes: Mapping[MemLevel, float] | None = None) -> OpCost:
    flops: dict[tuple, float] = {}
    for kind, f in work.flops.items():
        if f:
            key = policy.unit_for(kind)
            flops[key] = flops.get(key, 0.0) + float(f)
    if level_bytes is None:
        level_bytes = {lv: work.bytes_read + work.bytes_written for lv in MemLevel}
    return OpCost(
        name=node.name,
        op_type=node.op_type,
        flops=tuple(FlopCount(p, u, f) for (p, u), f in flops.items()),
        bytes=frozen_map(level_bytes),
        kernels=work.kernels,
        work=work,
    )


def cost_graph(nodes: Sequence[Node], policy: PrecisionPolicy, opset: int = 21,
               traffic: TrafficModel | None = None, graph_inputs: frozenset = frozenset(),
               runtime_patterns: bool = True) -> GraphCost:
    """Cost every node; with ``runtime_patterns``, fold exporter decompositions back into the kernels the
    reference runtime launches (graph/runtime.py); ``graph_inputs`` tells inputs from initializers."""
    seq: list[tuple[Node, OpWork]] = []
    unsupported: dict[str, int] = {}
    unshaped: dict[str, int] = {}
    for node in nodes:
        try:
            work = node_work(node, policy, opset)
        except ShapeUnknown:
            unshaped[node.op_type] = unshaped.get(node.op_type, 0) + 1
            continue
        if work is None:
            key = node.op_type if node.domain in ("", "ai.onnx") else f"{node.domain}.{node.op_type}"
            unsupported[key] = unsupported.get(key, 0) + 1
            continue
        seq.append((node, work))
    if runtime_patterns:
        seq = runtime.apply(seq, nodes, graph_inputs)
    levels = (traffic or CompulsoryTraffic()).assign(seq, policy.matmul[1], policy.storage_bytes)
    costs = tuple(to_cost(n, w, policy, lb) for (n, w), lb in zip(seq, levels))
    return GraphCost(costs, frozen_map(unsupported), frozen_map(unshaped))
