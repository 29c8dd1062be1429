"""Cost stage: run each node's registered formula and turn its OpWork into an OpCost.

FLOPs are split by (precision, unit) with the precision policy; bytes per memory level come from the
traffic model (compulsory bytes at every level when none is given). Nodes with no formula, or whose
shapes are unknown, are collected by op type and count: reported, never counted as zero silently.
"""
from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import field
from typing import Mapping, Protocol, Sequence

from ..precision import PrecisionPolicy
from ..frozen import frozen_dataclass
from ..types import DEFAULT_OPSET, FlopCount, MemLevel, Node, OpCost, OpWork, Unit, frozen_map, set_total_flops
from .context import CAUSAL_MASK, INDEX_GRID, LAYOUT_VIEW, SOURCE_VIEW, STRIDED_VIEW, OpContext, ShapeUnknown
from .memo import node_key, with_names, work_template
from . import runtime
from .registry import lookup


class TrafficModel(Protocol):
    def assign(self, seq: Sequence[tuple[Node, OpWork]], matmul_unit: Unit,
               elem_bytes: int) -> list[Mapping[MemLevel, float]]: ...


class CompulsoryTraffic:
    """Every level sees the compulsory bytes: inputs read once, outputs written once."""

    def assign(self, seq, matmul_unit, elem_bytes):
        return [frozen_map({lv: w.bytes_read + w.bytes_written for lv in MemLevel}) for _, w in seq]


@frozen_dataclass
class GraphCost:
    """The costed nodes of a graph and those that could not be costed."""

    costs: tuple[OpCost, ...]
    unsupported: Mapping[str, int]  # op type -> count (no formula)
    unshaped: Mapping[str, int]  # op type -> count (formula needed a shape inference could not give)
    # one per cost, in order: graph/memo.node_key of its node (valid while the nodes are alive)
    keys: Sequence[tuple] = field(default=(), compare=False, repr=False)
    # one per cost, in order: (node key, id of its policy, opset) when the work is its formula's (no runtime
    # pattern changed it), else None: equal work keys are equal works but for tensor names
    work_keys: Sequence[tuple | None] = field(default=(), compare=False, repr=False)

    @property
    def not_costed(self) -> dict[str, int]:
        out = dict(self.unsupported)
        for k, v in self.unshaped.items():
            out[f"{k} (unknown shape)"] = v
        return out


def node_work(node: Node, policy: PrecisionPolicy, opset: int = DEFAULT_OPSET) -> OpWork | None:
    """The node's OpWork, or None when no formula is registered. Raises ShapeUnknown."""
    formula = lookup(node.op_type, node.domain)
    if formula is None:
        return None
    if node.attrs.get(INDEX_GRID):  # builds an exported slice assignment's index grid (predictor/slice_assign.py)
        return INDEX_GRID_WORK
    if node.attrs.get(LAYOUT_VIEW):  # a permute of channels-last memory (predictor/layout_views.py)
        return LAYOUT_VIEW_WORK
    if node.attrs.get(STRIDED_VIEW):  # a permute or slice the layer norms reading it copy (predictor/strided_norms.py)
        return STRIDED_VIEW_WORK
    if node.attrs.get(SOURCE_VIEW):  # a view a slice assignment copies from (predictor/slice_assign.py)
        return SOURCE_VIEW_WORK
    if node.attrs.get(CAUSAL_MASK):  # builds a mask fused attention applies itself (predictor/causal_mask.py)
        return CAUSAL_MASK_WORK
    work = formula(OpContext(node, policy, opset))
    if work.kernels and _all_outputs_empty(node):
        return EMPTY_WORK
    return work


INDEX_GRID_WORK = OpWork(flops=frozen_map(), bytes_read=0.0, bytes_written=0.0, kernels=0,
                        notes=("index grid of a slice assignment: PyTorch builds none",))
LAYOUT_VIEW_WORK = OpWork(flops=frozen_map(), bytes_read=0.0, bytes_written=0.0, kernels=0,
                          notes=("permute of channels-last memory: a view",))
STRIDED_VIEW_WORK = OpWork(flops=frozen_map(), bytes_read=0.0, bytes_written=0.0, kernels=0,
                           notes=("a strided view: the layer norms reading it copy it (their hidden kernels)",))
SOURCE_VIEW_WORK = OpWork(flops=frozen_map(), bytes_read=0.0, bytes_written=0.0, kernels=0,
                          notes=("a view a slice assignment's copy reads in place",))
CAUSAL_MASK_WORK = OpWork(flops=frozen_map(), bytes_read=0.0, bytes_written=0.0, kernels=0,
                          notes=("causal mask of fused attention: the kernel's is_causal, no tensor",))


# a node whose every output has a zero dimension: runtimes return before launching anything
EMPTY_WORK = OpWork(flops=frozen_map(), bytes_read=0.0, bytes_written=0.0, kernels=0,
                    notes=("empty output (a zero dimension): no kernel",))


def _all_outputs_empty(node: Node) -> bool:
    outs = [t for t in node.outputs if t is not None and t.name]
    return bool(outs) and all(t.shape is not None and 0 in t.shape for t in outs)


CONTAINER_SUFFIX = {"sequence": " (sequence value)", "optional": " (optional value)"}


def _container_key(node: Node) -> str | None:
    """``<op> (sequence value)`` for a node reading or writing a sequence (or optional) value: it has no tensor
    shape to cost, and is named as such rather than as an unknown shape."""
    for t in (*node.inputs, *node.outputs):
        if t is not None and t.dtype in CONTAINER_SUFFIX:
            return node.op_type + CONTAINER_SUFFIX[t.dtype]
    return None


def to_cost(node: Node, work: OpWork, policy: PrecisionPolicy,
            level_bytes: Mapping[MemLevel, float] | None = None, _flops_memo: dict | None = None) -> OpCost:
    """``_flops_memo``: {(id of work.flops, id of policy): (FlopCounts, their total)}, for a caller whose works
    share their ``flops`` mappings (cost_graph: nodes costed once per kind) and keep them alive."""
    fk = (id(work.flops), id(policy))
    hit = _flops_memo.get(fk) if _flops_memo is not None else None
    if hit is None:
        flops: dict[tuple, float] = {}
        for kind, f in work.flops.items():
            if f:
                key = policy.unit_for(kind)
                flops[key] = flops.get(key, 0.0) + float(f)
        counts = tuple(FlopCount(p, u, f) for (p, u), f in flops.items())
        hit = (counts, float(sum([f.flops for f in counts])))
        if _flops_memo is not None:
            _flops_memo[fk] = hit
    if level_bytes is None:
        level_bytes = {lv: work.bytes_read + work.bytes_written for lv in MemLevel}
    cost = _new_cost(node.name, node.op_type, hit[0],
                     level_bytes if type(level_bytes) is _PROXY else frozen_map(level_bytes), work.kernels, work)
    set_total_flops(cost, hit[1])  # OpCost.total_flops, computed once per kind
    return cost


_PROXY = type(frozen_map())
_new_cost = OpCost._fast_new  # (OpCost(...) without the type call: one per node)


def cost_graph(nodes: Sequence[Node], policy: PrecisionPolicy, opset: int = DEFAULT_OPSET,
               traffic: TrafficModel | None = None, graph_inputs: frozenset = frozenset(),
               runtime_patterns: bool = True,
               node_policies: Mapping[str, PrecisionPolicy] | None = None) -> GraphCost:
    """Cost every node; with ``runtime_patterns``, fold exporter decompositions back into the kernels the
    reference runtime launches (graph/runtime.py); ``graph_inputs`` tells inputs from initializers;
    ``node_policies`` gives some nodes a policy of their own (mixed precision, predictor/amp.py)."""
    seq: list[tuple[Node, OpWork]] = []
    unsupported: dict[str, int] = {}
    unshaped: dict[str, int] = {}
    memo_key = _work_key(nodes, policy, opset, graph_inputs, runtime_patterns, node_policies)
    reused = _WORK_MEMO.get().get(memo_key) if memo_key is not None else None
    # per entry of seq: (node key (graph/memo.py), policy id, opset): the work of a node the runtime patterns leave
    # as costed is fixed by it (but for tensor names)
    work_keys: list = []
    if reused is not None:  # within reuse_work(): these nodes were costed before, under another GPU
        _, seq, unsupported, unshaped, keys, work_keys = reused
    memo: dict[tuple, tuple] = {}  # (node key, policy, opset) -> (work or a failure, input_bytes by position)
    for node in nodes if reused is None else ():
        pol = node_policies.get(node.name, policy) if node_policies else policy
        mk = (node_key(node), id(pol), opset)
        hit = memo.get(mk)
        if hit is not None:
            work, template, mk = hit  # the entry's own key: nodes alike share one key object
            if template:
                work = with_names(work, template, node)
        else:
            try:
                work = node_work(node, pol, opset)
            except ShapeUnknown:
                work = _UNSHAPED
            template = work_template(node, work) if work.__class__ is OpWork else ()
            if template is not None:  # None: names a tensor that is not an input, computed for every such node
                memo[mk] = (work, template, mk)
        if work is _UNSHAPED:
            key = _container_key(node)
            if key is not None:
                unsupported[key] = unsupported.get(key, 0) + 1
            else:
                unshaped[node.op_type] = unshaped.get(node.op_type, 0) + 1
            continue
        if work is None:
            key = node.op_type if node.domain in ("", "ai.onnx") else f"{node.domain}.{node.op_type}"
            unsupported[key] = unsupported.get(key, 0) + 1
            continue
        seq.append((node, work))
        work_keys.append(mk)
    if reused is None:
        keys = tuple([k[0] for k in work_keys])
        if runtime_patterns:  # the runtime's fused kernels; a rewritten work is no longer its kind's
            for k, w in runtime.rewrites(seq, nodes, graph_inputs).items():
                node, w0 = seq[k]
                if w is not w0:
                    seq[k] = (node, w)
                    work_keys[k] = None
        work_keys = tuple(work_keys)
    if memo_key is not None and reused is None:
        _WORK_MEMO.get()[memo_key] = (nodes, seq, unsupported, unshaped, keys, work_keys)  # keeps `nodes` alive: its id stays its own
    levels = (traffic or CompulsoryTraffic()).assign(seq, policy.matmul[1], policy.storage_bytes)
    return GraphCost(_costs(seq, levels, policy, node_policies), frozen_map(unsupported), frozen_map(unshaped), keys,
                     work_keys)


def _costs(seq: Sequence[tuple[Node, OpWork]], levels: Sequence[Mapping], policy: PrecisionPolicy,
           node_policies: Mapping[str, PrecisionPolicy] | None) -> tuple[OpCost, ...]:
    """``to_cost`` of each (node, work) with its bytes per level; a work whose ``flops`` map was split under the
    node's policy before (nodes costed once per kind share the map) is costed here without a call."""
    fm: dict = {}  # to_cost's _flops_memo
    out = []
    for (n, w), lb in zip(seq, levels):
        pol = node_policies.get(n.name, policy) if node_policies else policy
        hit = fm.get((id(w.flops), id(pol)))
        if hit is None or type(lb) is not _PROXY:
            out.append(to_cost(n, w, pol, lb, fm))
            continue
        cost = _new_cost(n.name, n.op_type, hit[0], lb, w.kernels, w)
        set_total_flops(cost, hit[1])
        out.append(cost)
    return tuple(out)


_UNSHAPED = object()  # a node whose formula needed a shape that is not known

# the GPU-independent part of cost_graph (each node's formula, the runtime patterns), inside reuse_work()
_WORK_MEMO: ContextVar[dict | None] = ContextVar("predictor_cost_work_memo", default=None)


@contextmanager
def reuse_work():
    """Within the block, ``cost_graph`` runs the node formulas and the runtime patterns once per (nodes object,
    policy, opset, graph inputs) and reuses them; only the traffic model, which depends on each GPU's L2 size
    and architecture, runs again. A sweep over GPUs (predictor/sweep.py) uses it. Results are identical;
    calls with per-node policies (mixed precision) are not reused."""
    token = _WORK_MEMO.set({})
    try:
        yield
    finally:
        _WORK_MEMO.reset(token)


def _work_key(nodes, policy, opset, graph_inputs, runtime_patterns, node_policies) -> tuple | None:
    if _WORK_MEMO.get() is None or node_policies:
        return None
    try:
        key = (id(nodes), policy, opset, frozenset(graph_inputs), runtime_patterns)
        hash(key)
    except TypeError:  # an unhashable policy or input set: no reuse
        return None
    memo = _WORK_MEMO.get()
    hit = memo.get(key)
    return key if hit is None or hit[0] is nodes else None
