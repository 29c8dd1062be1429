"""Permutes that stay views: a channels-last block (ConvNeXt's) runs its NHWC <-> NCHW permutes without a copy.

ConvNeXt-style blocks compute in NHWC (``x.permute(0, 2, 3, 1)``, LayerNorm and Linear over channels) and permute
back (``x.permute(0, 3, 1, 2)``) before the residual add and the next depthwise convolution. In PyTorch a permute is
a view: the permuted-back tensor is NCHW with channels-last strides, elementwise ops keep those strides, and a
convolution given such an input runs cuDNN's NHWC kernels (``conv2d_c1_k1_nhwc`` for the depthwise one) and returns a
channels-last output, whose permute to NHWC is again a view of contiguous memory. Measured on the H200: ConvNeXt-T's
36 permutes launch no kernel, and its 7x7 depthwise convolutions run the NHWC kernel (100 us at fp16 batch 32, where
PyTorch's own NCHW depthwise kernel would take ~3x that).

The graph keeps these as Transpose nodes, each costed a copy (the usual case: a permute whose consumer needs
contiguous memory copies once). This pass marks as LAYOUT_VIEW (no kernel: graph/cost.py):

* a Transpose to NCHW (perm 0, 3, 1, 2) whose result flows, through elementwise ops of the same shape only, into
  convolutions that run channels-last (graph/fused.nhwc_capable), Transposes back to NHWC (perm 0, 2, 3, 1) and
  global average pools, and nothing else; those convolutions get ``LAYOUT = NHWC`` (no layout-transform kernels,
  graph/fused.py) and those Transposes back are views too;
* a Transpose back to NHWC whose input a channels-last convolution wrote.

Tokens reshaped to (B, H, W, C) and permuted to NCHW are not marked: the measured models (PVT-v2, SegFormer,
MViTv2, CoaT, MobileNetV4's hybrid blocks, Depth Anything) call ``.contiguous()`` there, one copy kernel each in the
H200 kernel tables, and their convolutions then read NCHW memory (strided_norms.py makes the same call). NesT's
de-blockify permute is the exception seen (a view into a channels-last convolution).

Ignores: other consumers that accept strided input (the rule stops at the first op it does not know), and the
channels-last outputs of elementwise ops fed by two layouts (PyTorch follows the first input's strides).
"""
from __future__ import annotations

from dataclasses import replace

from .graph.context import LAYOUT_VIEW
from .graph.fused import LAYOUT, NHWC, channels_last, nhwc_capable
from .graph.links import links
from .graph.loader import Graph
from .graph.opclass import op_class
from .types import Node, with_attrs

TO_NCHW = (0, 3, 1, 2)
TO_NHWC = (0, 2, 3, 1)
_POOLS = frozenset({"GlobalAveragePool"})


def _perm(node: Node) -> tuple[int, ...] | None:
    if node.op_type != "Transpose" or not node.inputs or node.inputs[0] is None or node.inputs[0].shape is None:
        return None
    if len(node.inputs[0].shape) != 4:
        return None
    p = node.attrs.get("perm")
    return tuple(int(i) for i in p) if p is not None else None


def _elementwise_same_shape(node: Node, shape: tuple) -> bool:
    return op_class(node.op_type) == "elementwise" and node.op_type not in ("Reshape", "Flatten", "Squeeze",
                                                                           "Unsqueeze") \
        and bool(node.outputs) and node.outputs[0] is not None and node.outputs[0].shape == shape


def _reshaped(node: Node, producers: dict) -> bool:
    """Whether ``node``'s input is a Reshape's output (tokens reshaped to (B, H, W, C))."""
    p = producers.get(node.inputs[0].name)
    return p is not None and p.op_type == "Reshape"


def _nhwc_conv(node: Node, tensor: str) -> bool:
    return node.op_type == "Conv" and node.inputs[0] is not None and node.inputs[0].name == tensor and \
        nhwc_capable(node)


def mark_layout_views(graph: Graph) -> Graph:
    """``graph`` with its channels-last permutes marked LAYOUT_VIEW and the convolutions they feed ``LAYOUT =
    NHWC`` (the graph itself where there is none)."""
    starts = [n for n in graph.nodes if n.op_type == "Transpose" and _perm(n) == TO_NCHW]
    if not starts:
        return graph
    producers, consumers = links(graph.nodes)
    starts = [n for n in starts if not _reshaped(n, producers)]
    views: set[int] = set()
    nhwc: set[int] = set()
    for t in starts:
        shape = t.outputs[0].shape
        frontier_ok, convs, backs = True, [], []
        seen: set[str] = set()
        todo = [t.outputs[0].name]
        while todo and frontier_ok:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            users = consumers.get(name, [])
            if not users:  # a graph output: its layout is the caller's
                frontier_ok = False
            for c in users:
                if _nhwc_conv(c, name):
                    convs.append(c)
                elif _perm(c) == TO_NHWC or c.op_type in _POOLS:
                    backs.append(c)
                elif _elementwise_same_shape(c, shape):
                    todo.extend(o.name for o in c.outputs if o is not None)
                else:
                    frontier_ok = False
                    break
        if frontier_ok and (convs or backs):
            views.add(id(t))
            views.update(id(b) for b in backs if b.op_type == "Transpose")
            nhwc.update(id(c) for c in convs)
    # a permute back to NHWC of what a channels-last convolution wrote is a view of contiguous memory
    for n in graph.nodes:
        if id(n) in nhwc or channels_last(n):
            for o in n.outputs:
                for c in consumers.get(o.name, []) if o is not None else ():
                    if _perm(c) == TO_NHWC:
                        views.add(id(c))
    if not views and not nhwc:
        return graph
    nodes = tuple(with_attrs(n, {LAYOUT_VIEW: 1}) if id(n) in views else with_attrs(n, {LAYOUT: NHWC}) if id(n) in nhwc
                  else n for n in graph.nodes)
    return replace(graph, nodes=nodes)
