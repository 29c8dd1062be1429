"""Shared machinery of the passes: one producer/consumer index per pass (built once, linear time) and the
rewrite that replaces groups of nodes by the fused node that computes them.

A fused node is placed where the last of its members was. That keeps the node list topologically sorted
when every consumer outside the group of every member comes after the group's last member (checked by
:meth:`GraphIndex.escapes_after`): the group's inputs are produced before its members, hence before the
last one, and its outputs are read only later.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Iterable, Mapping, Sequence

from ..graph.cost import node_work
from ..graph.context import ShapeUnknown
from ..graph.fused import DOMAIN, MEMBER_NODES, MEMBERS
from ..graph.loader import Graph
from ..precision import policy as get_policy
from ..types import DEFAULT_OPSET, Node, OpWork, PredictorError, TensorInfo, frozen_map, with_attrs  # noqa: F401

_COUNT_POLICY = get_policy("fp32")  # kernel counts and shapes do not depend on precision


class GraphIndex:
    """Producers, consumers, topological positions and load-time-known tensors of a graph."""

    def __init__(self, graph: Graph):
        self.graph = graph
        self.nodes = graph.nodes
        self.pos: dict[str, int] = {}
        self.producer: dict[str, Node] = {}
        self.consumers: dict[str, list[Node]] = {}
        self.outputs = frozenset(t.name for t in graph.outputs)
        inputs = graph.input_names
        self.graph_inputs = inputs
        self.static: set[str] = set()  # tensors known before the run (weights, constants, shape arithmetic)
        for i, n in enumerate(graph.nodes):
            self.pos[n.name] = i
            for t in n.inputs:
                if t is not None:
                    self.consumers.setdefault(t.name, []).append(n)
                    if t.name not in self.producer and (t.is_initializer and t.name not in inputs):
                        self.static.add(t.name)
            known = n.op_type in ("Constant", "Shape", "Size") or (
                bool(n.inputs) and all(t is None or t.name in self.static for t in n.inputs))
            for t in n.outputs:
                if t.name:
                    self.producer[t.name] = n
                    if known:
                        self.static.add(t.name)
        self._work: dict[str, OpWork | None] = {}

    # ------------------------------------------------------------------------------------------
    def prod(self, t: TensorInfo | None) -> Node | None:
        return self.producer.get(t.name) if t is not None else None

    def cons(self, t: TensorInfo) -> list[Node]:
        return self.consumers.get(t.name, [])

    def sole_consumer(self, node: Node, i: int = 0) -> Node | None:
        """The one node reading output ``i`` of ``node`` (None when several, none, or a graph output)."""
        t = node.outputs[i] if i < len(node.outputs) else None
        if t is None or not t.name or t.name in self.outputs:
            return None
        cs = self.consumers.get(t.name, [])
        return cs[0] if len(cs) == 1 else None

    def only_output_used(self, node: Node) -> bool:
        """Only the first output of ``node`` is used (optional outputs unnamed or unread)."""
        return all(not t.name or (not self.consumers.get(t.name) and t.name not in self.outputs)
                   for t in node.outputs[1:])

    def is_static(self, t: TensorInfo | None) -> bool:
        return t is not None and t.name in self.static

    def work(self, node: Node) -> OpWork | None:
        """The node's OpWork under an fp32 policy (kernel counts, FLOP kinds), None if it cannot be costed."""
        if node.name not in self._work:
            try:
                self._work[node.name] = node_work(node, _COUNT_POLICY, self.graph.opset or DEFAULT_OPSET)
            except (ShapeUnknown, PredictorError):
                self._work[node.name] = None
        return self._work[node.name]

    def launches(self, node: Node) -> bool:
        """Whether the node runs a kernel of its own in the reference runtime (known, shaped, not free)."""
        w = self.work(node)
        return w is not None and w.kernels > 0

    def escapes_after(self, members: Iterable[Node]) -> bool:
        """Every reader outside ``members`` of every member's output comes after the last member."""
        ms = list(members)
        names = {m.name for m in ms}
        last = max(self.pos[m.name] for m in ms)
        for m in ms:
            for t in m.outputs:
                for c in self.consumers.get(t.name, []) if t.name else ():
                    if c.name not in names and self.pos[c.name] <= last:
                        return False
        return True


def fused_node(ix: GraphIndex, members: Sequence[Node], op_type: str, attrs: Mapping | None = None,
               name: str | None = None, inputs: Sequence[TensorInfo | None] | None = None,
               outputs: Sequence[TensorInfo] | None = None) -> Node:
    """One node of domain ai.predictor computing ``members``: by default its inputs are the tensors the
    members read that none of them produces (each once, first use first), its outputs the members' outputs
    read outside the group or returned by the graph. Named after the last member (so reports and
    ``predict compare`` match it to that node); ``MEMBERS`` lists every member, ``MEMBER_NODES`` keeps them."""
    ordered = sorted(members, key=lambda m: ix.pos[m.name])
    names = {m.name for m in ordered}
    produced = {t.name for m in ordered for t in m.outputs if t.name}
    if inputs is None:
        seen: dict[str, TensorInfo] = {}
        for m in ordered:
            for t in m.inputs:
                if t is not None and t.name not in produced and t.name not in seen:
                    seen[t.name] = t
        inputs = tuple(seen.values())
    if outputs is None:
        outs = []
        for m in ordered:
            for t in m.outputs:
                if t.name and (t.name in ix.outputs or any(c.name not in names for c in ix.cons(t))):
                    outs.append(t)
        outputs = tuple(outs)
    root = ordered[-1]
    known = {}
    for m in ordered:
        for k, v in m.const_inputs.items():
            known[k] = v
    in_names = {t.name for t in inputs if t is not None}
    full = {MEMBERS: tuple(m.name for m in ordered), MEMBER_NODES: tuple(ordered), **(attrs or {})}
    return Node(name=name or root.name, op_type=op_type, domain=DOMAIN, inputs=tuple(inputs),
                outputs=tuple(outputs), attrs=frozen_map(full),
                const_inputs=frozen_map({k: v for k, v in known.items() if k in in_names}), scope=root.scope)


def rewrite(ix: GraphIndex, groups: Sequence[tuple[Sequence[Node], Sequence[Node]]],
            changed: Mapping[str, Node] | None = None) -> Graph:
    """The graph with each (members, new nodes) group replaced: members removed, the new nodes emitted in
    order where the last member was. ``changed``: nodes replaced one for one (same position)."""
    drop: set[str] = set()
    at: dict[str, list[Node]] = {}
    for members, new in groups:
        if not members:
            continue
        last = max(members, key=lambda m: ix.pos[m.name])
        drop.update(m.name for m in members)
        at.setdefault(last.name, []).extend(new)
    changed = changed or {}
    if not drop and not changed:
        return ix.graph
    out: list[Node] = []
    for n in ix.nodes:
        if n.name in at:
            out.extend(at[n.name])
        elif n.name not in drop:
            out.append(changed.get(n.name, n))
    return replace(ix.graph, nodes=tuple(out))


def numel(t: TensorInfo | None) -> int | None:
    return None if t is None else t.numel


def scalar_const(ix: GraphIndex, node: Node) -> int | None:
    """Index (0 or 1) of a binary node's load-time-known input of one element, else None."""
    for i in (0, 1):
        t = node.inputs[i] if i < len(node.inputs) else None
        if t is not None and ix.is_static(t) and t.shape is not None and numel(t) == 1:
            return i
    return None
