"""``elementwise``: pointwise nodes fused into one kernel, as TorchInductor's scheduler fuses them.

A group is a set of pointwise nodes (unary, binary with broadcasting, Where, Cast, inference batch norm,
variadic Sum/Max/Min/Mean; data movement a compiler lowers to index arithmetic inside the same loop:
Transpose, Pad, Concat, Expand, Tile, Slice; and views, which cost nothing) around at most one *anchor*,
a one-kernel normalisation, softmax or reduction
(LayerNormalization, RMSNormalization, Softmax, LogSoftmax, Reduce{Sum,Mean,Max,Min,Prod,L1,L2,SumSquare},
GlobalAveragePool, GlobalMaxPool): its pointwise *prologue* (producers of its input, e.g. the residual Add
before a LayerNorm, the batch norm + activation before a squeeze-excite mean) and *epilogue* (consumers of
its output of the same size, e.g. the NaN guard after a softmax). The group runs as one kernel
(``FusedElementwise``, or ``FusedNorm``/``FusedSoftmax``/``FusedReduction`` with an anchor; their op classes
are in graph/ops/fused.py) that reads every external input once and writes only the tensors read outside the group (an
intermediate with a reader outside, such as a residual sum, is written too); FLOPs are the members'.
A producer joins its consumer's group when:

* both are fusible and launch a kernel (nodes computed only from load-time constants stay as they are), and
  neither belongs to the attention call that graph/runtime.py folds (``sdpa``: eager runs it fused already);
* the merged group has at most one anchor; an epilogue node has the anchor's output size; a producer
  feeding the epilogue is no larger than that; a prologue node never takes an epilogue (a node reading a
  prologue tensor after the anchor would need a second loop);
* every reader outside the merged group of any member comes after the node being added (so the fused
  kernel can run where its last member ran, and no cycle forms: a tensor leaving the group and coming back
  through another kernel would), and the group has at most ``MAX_FUSION_SIZE`` = 64 nodes
  (TorchInductor's ``max_fusion_size``; it also keeps the pass linear).

GEMM/convolution epilogues, as TorchInductor's default mode runs them: a MatMul/Gemm's bias Add is already
in cuBLAS's epilogue in the reference runtime (graph/runtime.py ``linear_bias``), or, when pointwise ops
follow, joins their kernel (TorchInductor's ``unfuse_bias_add_to_pointwise``); a Conv's own bias (a
separate kernel in PyTorch eager) is peeled off into the pointwise kernel that follows the convolution
(TorchInductor lowers a biased convolution as cuDNN without bias + a pointwise add: "cudnn is slower with
it"). Activations are not moved into cuDNN/cuBLAS kernels: measured TorchInductor kernel lists on the H200
(torch 2.11) show ``nvjet..._bias`` GEMMs followed by ``triton_poi_fused_gelu`` and cuDNN convolutions
followed by ``triton_poi_fused__native_batch_norm_legit_no_training_relu``; ``conv_bias_act`` is the pass
that fuses activations into convolutions.
Ignores: horizontal fusion of independent kernels reading the same input, recomputation of cheap
producers into several consumers (a tensor read by two groups is written once and read by both).
NB: a Slice of a tensor from outside the group counts that tensor read whole (a roll's two slices do cover
it; no committed graph slices less of an outside tensor inside a fused group).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..graph.fused import FUSED_ELEMENTWISE, FUSED_NORM, FUSED_REDUCTION, FUSED_SOFTMAX
from ..graph.loader import Graph
from ..graph.registry import op_traits
from ..graph.ops.elementwise import ELEMENTWISE_FLOPS
from ..graph.runtime import sdpa_groups
from ..types import Node, TensorInfo
from ._graph import GraphIndex, fused_node, numel, rewrite
from .registry import optimization

MAX_FUSION_SIZE = 64
POINTWISE = frozenset(ELEMENTWISE_FLOPS) | {"Gelu", "Cast", "CastLike", "Sum", "Max", "Min", "Mean",
                                              "BatchNormalization"}
# data movement a compiler lowers to index arithmetic inside a pointwise loop (TorchInductor: permute, pad,
# cat, expand, slice, roll = slices + cat) and views (no kernel of their own): fusible like pointwise ops
MOVEMENT = frozenset({"Transpose", "Pad", "Concat", "Expand", "Tile", "Slice"})
VIEWS = ("reshape", "alias", "dropout")  # views fused like pointwise ops (registry.OpTraits.view; not transposes)
ANCHORS = {
    "LayerNormalization": FUSED_NORM, "RMSNormalization": FUSED_NORM,
    "Softmax": FUSED_SOFTMAX, "LogSoftmax": FUSED_SOFTMAX,
    "ReduceSum": FUSED_REDUCTION, "ReduceMean": FUSED_REDUCTION, "ReduceMax": FUSED_REDUCTION,
    "ReduceMin": FUSED_REDUCTION, "ReduceProd": FUSED_REDUCTION, "ReduceL1": FUSED_REDUCTION,
    "ReduceL2": FUSED_REDUCTION, "ReduceSumSquare": FUSED_REDUCTION,
    "GlobalAveragePool": FUSED_REDUCTION, "GlobalMaxPool": FUSED_REDUCTION,
}
_DEFAULT = ("", "ai.onnx")


@dataclass
class _Group:
    members: list = field(default_factory=list)
    anchor: Node | None = None
    max_numel: int = 0


def _fusible(ix: GraphIndex, n: Node, excluded: frozenset) -> str | None:
    """'pw', 'anchor' or None."""
    if n.domain not in _DEFAULT or n.name in excluded or not n.outputs:
        return None
    kind = "pw" if n.op_type in POINTWISE or n.op_type in MOVEMENT else "anchor" if n.op_type in ANCHORS else None
    if op_traits(n.op_type).view in VIEWS:
        kind = "view"
    if kind is None:
        return None
    if n.op_type == "BatchNormalization" and (int(n.attrs.get("training_mode", 0) or 0)
                                              or not ix.only_output_used(n)):
        return None
    if len([t for t in n.outputs if t.name]) != 1 or n.outputs[0].shape is None:
        return None
    if any(t is not None and t.shape is None for t in n.inputs):
        return None
    if all(t is None or ix.is_static(t) for t in n.inputs):
        return None  # computed from constants: folded or a host value, no kernel to fuse
    w = ix.work(n)
    if kind == "view":
        return "pw" if w is not None and w.kernels == 0 else None
    if w is None or w.kernels == 0 or (kind == "anchor" and w.kernels != 1):
        return None
    return kind


def _peel_conv_bias(graph: Graph, excluded: frozenset) -> Graph:
    """A non-depthwise Conv with a bias whose only reader is a fusible pointwise node: Conv without the bias
    + an ``Add`` of the bias (named ``<conv>::bias``) that the following pointwise kernel then takes in."""
    ix = GraphIndex(graph)
    out: list[Node] = []
    changed = False
    for n in graph.nodes:
        b = n.inputs[2] if n.op_type == "Conv" and n.domain in _DEFAULT and len(n.inputs) > 2 else None
        nxt = ix.sole_consumer(n) if b is not None else None
        w = ix.work(n) if nxt is not None else None
        if nxt is None or w is None or w.kernels != 2 or _fusible(ix, nxt, excluded) != "pw":
            out.append(n)
            continue
        y = n.outputs[0]
        raw = TensorInfo(f"{y.name}::nobias", y.dtype, y.shape, y.is_initializer)
        conv = Node(name=n.name, op_type=n.op_type, domain=n.domain, inputs=n.inputs[:2], outputs=(raw,),
                    attrs=n.attrs, const_inputs=n.const_inputs, scope=n.scope)
        add = Node(name=f"{n.name}::bias", op_type="Add", domain="", inputs=(raw, b), outputs=(y,),
                   scope=n.scope)
        out += [conv, add]
        changed = True
    if not changed:
        return graph
    from dataclasses import replace

    return replace(graph, nodes=tuple(out))


@optimization("elementwise", order=40)
def elementwise(graph: Graph) -> Graph:
    excluded = sdpa_groups(graph.nodes, graph.input_names)
    graph = _peel_conv_bias(graph, excluded)
    ix = GraphIndex(graph)
    kind: dict[str, str] = {}
    phase: dict[str, str] = {}  # 'pro' / 'epi' / 'anchor' for members of anchored groups
    group_of: dict[str, _Group] = {}
    for n in graph.nodes:
        k = _fusible(ix, n, excluded)
        if k is None:
            continue
        kind[n.name] = k
        g = _Group([n], n if k == "anchor" else None, numel(n.outputs[0]) or 0)
        if k == "anchor":
            phase[n.name] = "anchor"
        group_of[n.name] = g
        i = ix.pos[n.name]
        seen: set[str] = set()
        for t in n.inputs:
            p = ix.prod(t)
            if p is None or p.name not in kind or t.name in seen:
                continue
            seen.add(t.name)
            g1, g2 = group_of[p.name], group_of[n.name]
            if g1 is g2 or not _compatible(ix, g1, g2, p, n, k, phase):
                continue
            if len(g1.members) + len(g2.members) > MAX_FUSION_SIZE or not _escapes_ok(ix, g1, g2, i):
                continue
            _merge(g1, g2, n, k, phase, group_of)
    groups = []
    done: set[int] = set()
    for g in group_of.values():
        if id(g) in done:
            continue
        done.add(id(g))
        if sum(1 for m in g.members if ix.launches(m)) < 2:
            continue
        op = ANCHORS[g.anchor.op_type] if g.anchor is not None else FUSED_ELEMENTWISE
        groups.append((g.members, [fused_node(ix, g.members, op)]))
    return rewrite(ix, groups)


def _compatible(ix: GraphIndex, g1: _Group, g2: _Group, p: Node, n: Node, k: str, phase: dict) -> bool:
    """Whether producer p's group g1 may join consumer n's group g2 (see the module docstring)."""
    if g1.anchor is not None and g2.anchor is not None:
        return False
    if k == "anchor":  # n is g2's anchor: g1 becomes its prologue
        return g1.max_numel <= (numel(n.inputs[0]) or 0)
    if g1.anchor is not None:  # n extends g1's epilogue
        out = numel(g1.anchor.outputs[0]) or 0
        return phase.get(p.name) in ("anchor", "epi") and numel(n.outputs[0]) == out and g2.max_numel <= out
    if g2.anchor is not None:  # g1 feeds an epilogue node of g2
        return phase.get(n.name) == "epi" and g1.max_numel <= (numel(g2.anchor.outputs[0]) or 0)
    return True


def _escapes_ok(ix: GraphIndex, g1: _Group, g2: _Group, i: int) -> bool:
    """Every reader of g1's members outside g1 and g2 comes after position i (the node being added)."""
    inside = {m.name for m in g1.members} | {m.name for m in g2.members}
    for m in g1.members:
        for t in m.outputs:
            if not t.name:
                continue
            for c in ix.cons(t):
                if c.name not in inside and ix.pos[c.name] <= i:
                    return False
    return True


def _merge(g1: _Group, g2: _Group, n: Node, k: str, phase: dict, group_of: dict) -> None:
    if k == "anchor":
        for m in g1.members:
            phase[m.name] = "pro"
    elif g1.anchor is not None:
        phase[n.name] = "epi"
        for m in g2.members:
            phase.setdefault(m.name, "epi")
    elif g2.anchor is not None:
        for m in g1.members:
            phase[m.name] = "epi"
    g2.members.extend(g1.members)
    g2.anchor = g2.anchor or g1.anchor
    g2.max_numel = max(g2.max_numel, g1.max_numel)
    for m in g1.members:
        group_of[m.name] = g2
