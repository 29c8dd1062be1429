"""Strided views that reach layer norms: PyTorch copies them inside each layer norm that reads them.

A permute is a view (``x.permute(0, 2, 1)`` after a speech encoder's convolutions, ``(0, 2, 3, 1)`` after SAM's
patch embedding), and elementwise kernels (TensorIterator) write their output in the memory order of their first
operand of the output's shape: a residual stream that starts permuted stays permuted through every residual add,
and each layer norm that reads it runs ``.contiguous()`` first, one transposing copy per norm. Likewise a slice of a
non-leading axis (gMLP's ``chunk(2, -1)``) that a layer norm reads is copied by the norm. Measured in the H200 kernel
tables (direct_copy kernels inside aten::layer_norm): Whisper-tiny's encoder 9 per forward, 15% of its fp16 batch-32
time, where the graph has one Transpose; SAM's ViT-B 24; gMLP-S/16 30 (its gates' slices).

The pass follows PyTorch's strides from each layer norm's input back up the graph (propagate_strides, over the nodes
upstream of a norm only): permutes (not a sequence-first swap, perm[0] != 0, which nn.MultiheadAttention's fast path
never runs, nor tokens reshaped to (B, H, W, C) and permuted to NCHW, where the measured models call
``.contiguous()`` before a convolution), slices and splits of a non-leading axis, ``select`` (a Gather of one scalar
index), aliases, reshapes PyTorch takes as views of those strides (ATen's ``computeStride``), elementwise kernels (their
output in their first full-shape operand's memory order), and convolutions, batch norms, pools and pads that keep an
NHWC input's layout. A layer norm whose input is strided is marked STRIDED_INPUT: its hidden kernels are those of
``LayerNormalization:strided`` (graph/opclass.hidden_key), which the calibration learns from those norms' module
scopes as it learns every hidden kernel (calibration/fit/fit.py). The graph's Transpose (or Slice), costed one copy
kernel, is marked STRIDED_VIEW (no kernel, graph/cost.py) where its view reaches such a norm and is read by nothing
else that needs it copied (only norms, elementwise kernels, further views, shape reads, graph outputs); a GEMM, a
convolution, a softmax or a reshape that must copy among its readers leaves its one copy standing for theirs.
Agreement with the kernel tables: ``python -m calibration.evaluate.strided_norm_copies``.

Ignores: ``.contiguous()`` calls (not in the graph: Speech2Text's subsampler makes its permute contiguous, and its
norms copy nothing); the slower strided reads of the elementwise kernels on the way; other kernels that copy a
strided input (softmax, matmul's reshapes), for which the graph's Transposes stand.
"""
from __future__ import annotations

import math
from dataclasses import replace

from .graph.context import STRIDED_INPUT, STRIDED_VIEW
from .graph.links import SHAPE_READERS, links
from .graph.loader import Graph
from .graph.registry import op_traits
from .graph.runtime import tensor_iterator
from .graph.shapes import row_major_strides as contiguous_strides
from .layout_views import TO_NCHW
from .precision import FLOAT_DTYPES
from .types import Node, with_attrs

NORMS = frozenset({"LayerNormalization"})
_SOURCES = frozenset({"Transpose", "Slice", "Split", "Gather"})  # the views that start a strided layout
_ALIASES = frozenset({"alias", "dropout"})

Shape = tuple[int, ...]


def is_contiguous(shape: Shape, strides: Shape) -> bool:
    """Row-major dense memory (size-1 dims' strides do not matter)."""
    acc = 1
    for d, s in zip(reversed(shape), reversed(strides)):
        if d != 1 and s != acc:
            return False
        acc *= d
    return True


def view_strides(shape: Shape, strides: Shape, new_shape: Shape) -> Shape | None:
    """The strides of ``new_shape`` as a view of memory with ``shape``/``strides``, or None where PyTorch's reshape
    must copy (ATen's ``computeStride``)."""
    if math.prod(shape) != math.prod(new_shape):
        return None
    if not shape or not new_shape or math.prod(shape) == 0:
        return contiguous_strides(new_shape)
    new = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    chunk_base = strides[-1]
    tensor_numel = view_numel = 1
    for tensor_d in range(len(shape) - 1, -1, -1):
        tensor_numel *= shape[tensor_d]
        if tensor_d == 0 or (shape[tensor_d - 1] != 1 and strides[tensor_d - 1] != tensor_numel * chunk_base):
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                new[view_d] = view_numel * chunk_base
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base = strides[tensor_d - 1]
                tensor_numel = view_numel = 1
    return tuple(new) if view_d == -1 else None


def _perm(node: Node, rank: int) -> tuple[int, ...]:
    p = node.attrs.get("perm")
    return tuple(int(i) for i in p) if p is not None else tuple(range(rank - 1, -1, -1))


def _shape(t) -> Shape | None:
    return tuple(t.shape) if t is not None and t.shape is not None and all(isinstance(d, int) for d in t.shape) \
        else None


def dense_like(shape: Shape, strides: Shape) -> Shape:
    """Dense strides for ``shape`` in the memory order of ``strides`` (outermost = largest stride; ties keep their
    logical order; a size-1 dim's place changes no other stride): what TensorIterator gives a new output."""
    order = sorted(range(len(shape)), key=lambda d: (-strides[d], d))
    out = [0] * len(shape)
    acc = 1
    for d in reversed(order):
        out[d] = acc
        acc *= shape[d]
    return tuple(out)


# keep an NHWC input's layout (cuDNN's NHWC convolutions; memory-format-preserving batch norm, pools, constant pad)
_CHANNELS_LAST = frozenset({"Conv", "BatchNormalization", "MaxPool", "AveragePool", "Pad"})


def _channels_last(shape: Shape, strides: Shape) -> bool:
    return len(shape) == 4 and shape[1] > 1 and strides[1] == 1 and not is_contiguous(shape, strides)


def _upstream_of_norms(nodes) -> list:
    """The nodes, in order, through which a layout can reach a layer norm's input: walking back from each norm through
    the producers that pass a layout on (elementwise kernels by all their operands, views, NHWC-keeping ops)."""
    producer: dict[str, Node] = {}
    for n in nodes:
        for o in n.outputs:
            producer[o.name] = n
    keep: set[int] = set()
    todo = [n.inputs[0].name for n in nodes if n.op_type in NORMS and n.inputs and n.inputs[0] is not None]
    while todo:
        p = producer.get(todo.pop())
        if p is None or id(p) in keep:
            continue
        op = p.op_type
        if not (op in _SOURCES or op in _CHANNELS_LAST or tensor_iterator(p) or op_traits(op).view is not None):
            continue
        keep.add(id(p))
        if tensor_iterator(p):
            todo.extend(t.name for t in p.inputs if t is not None)
        elif p.inputs and p.inputs[0] is not None:
            todo.append(p.inputs[0].name)
    return [n for n in nodes if id(n) in keep]


def _step(n: Node, strides: dict, reshaped: set) -> dict[str, Shape] | None:
    """The strided outputs of ``n`` given the strides of its inputs (``strides``; others contiguous): {} where its
    outputs are contiguous, None for a reshape that copies."""
    op = n.op_type
    if not n.outputs or n.outputs[0] is None or not n.inputs or n.inputs[0] is None:
        return {}
    if n.outputs[0].dtype not in FLOAT_DTYPES:  # shape arithmetic, indices
        return {}
    kind = op_traits(op).view
    elementwise = tensor_iterator(n)
    if not (elementwise or kind is not None or op in _SOURCES or op in _CHANNELS_LAST):
        return {}  # a GEMM, a norm, a softmax...: a contiguous output
    out_shp = _shape(n.outputs[0])
    if out_shp is None:
        return {}
    if elementwise:
        first = next((t for t in n.inputs if t is not None and _shape(t) == out_shp), None)
        if first is not None and first.name in strides:
            new = dense_like(out_shp, strides[first.name])
            if not is_contiguous(out_shp, new):
                return {n.outputs[0].name: new}
        return {}
    x = n.inputs[0]
    shp = _shape(x)
    if shp is None or x.is_initializer:
        return {}
    st = strides.get(x.name) or contiguous_strides(shp)
    new: Shape | None = None
    if op == "Transpose":
        p = _perm(n, len(shp))
        # a permute behind the batch dim (a sequence-first swap is left as the copy it is costed), but not tokens
        # turned into an NCHW image (a reshape to (B, H, W, C), then this): the models measured copy there
        # (``.contiguous()`` before a convolution: PVT-v2's, SegFormer's, MViTv2's patch merging and pooling)
        if p and p[0] == 0 and not (p == TO_NCHW and x.name in reshaped):
            new = tuple(st[i] for i in p)
    elif kind in _ALIASES:
        new = st
    elif kind == "reshape":
        new = view_strides(shp, st, out_shp)
        if new is None:
            return None
    elif op in ("Slice", "Split"):
        return {o.name: st for o in n.outputs if o is not None and _shape(o) is not None and len(o.shape) == len(shp)
                and not is_contiguous(_shape(o), st)}
    elif op == "Gather" and len(n.inputs) > 1 and n.inputs[1] is not None and \
            n.inputs[1].is_initializer and n.inputs[1].shape == ():  # x.select(axis, i): a view
        axis = int(n.attrs.get("axis", 0)) % len(shp)
        new = st[:axis] + st[axis + 1:]
    elif op in _CHANNELS_LAST and _channels_last(shp, st):
        new = dense_like(out_shp, st)
    if new is not None and len(new) == len(out_shp) and not is_contiguous(out_shp, new):
        return {n.outputs[0].name: new}
    return {}


def _reshaped(nodes) -> set[str]:
    return {o.name for n in nodes if n.op_type == "Reshape" for o in n.outputs if o is not None}


def propagate_strides(graph: Graph, reshaped: set[str] | None = None) -> dict[str, Shape]:
    """The strides PyTorch eager gives each activation upstream of a layer norm, where they are not row-major (views:
    permutes, slices, ``select``, reshapes of those; elementwise outputs in their first full-shape operand's order; an
    NHWC convolution's, batch norm's, pool's or pad's output). Every tensor not named is contiguous (or reaches no
    layer norm). Ignores: ``.contiguous()`` calls (not in the graph), other kernels that keep a strided layout."""
    strides: dict[str, Shape] = {}
    reshaped = _reshaped(graph.nodes) if reshaped is None else reshaped
    for n in _upstream_of_norms(graph.nodes):
        if n.op_type not in _SOURCES:  # (most nodes: nothing strided reaches them)
            if not strides:
                continue
            for t in n.inputs:
                if t is not None and t.name in strides:
                    break
            else:
                continue
        strides.update(_step(n, strides, reshaped) or {})
    return strides


def mark_strided_norms(graph: Graph) -> Graph:
    """``graph`` with its layer norms that read a strided view marked STRIDED_INPUT, and the permutes and slices whose
    views reach only such norms, elementwise kernels, views and shape reads marked STRIDED_VIEW (the graph itself
    where there is none)."""
    if not any(n.op_type in NORMS for n in graph.nodes):
        return graph
    reshaped = _reshaped(graph.nodes)
    strides = propagate_strides(graph, reshaped)
    if not strides:
        return graph
    norms = {id(n) for n in graph.nodes if n.op_type in NORMS and n.inputs and n.inputs[0] is not None and
             n.inputs[0].name in strides}
    if not norms:
        return graph
    consumers = links(graph.nodes)[1]
    views: set[int] = set()
    for n in graph.nodes:
        if n.op_type not in ("Transpose", "Slice", "Split") or not any(o is not None and o.name in strides
                                                                      for o in n.outputs):
            continue
        reached = _closure(n, strides, consumers, norms, reshaped)
        if reached:
            views.add(id(n))
    nodes = tuple(with_attrs(n, {STRIDED_VIEW: 1}) if id(n) in views else
                  with_attrs(n, {STRIDED_INPUT: 1}) if id(n) in norms else n for n in graph.nodes)
    return replace(graph, nodes=nodes)


def _closure(start: Node, strides: dict, consumers: dict, norms: set[int], reshaped: set[str]) -> bool:
    """Whether the strided views ``start`` writes reach a marked layer norm and are read by nothing that needs them
    copied but such norms: only elementwise kernels, further views of them, shape reads and graph outputs."""
    strides = dict(strides)  # (and the layouts of tensors that reach no norm, found on the way)
    todo = [o.name for o in start.outputs if o is not None and o.name in strides]
    seen: set[str] = set()
    reached = False
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for c in consumers.get(name, ()):
            if c.op_type in SHAPE_READERS:
                continue
            if id(c) in norms and c.inputs[0].name == name:
                reached = True
                continue
            kind = op_traits(c.op_type).view
            if not (tensor_iterator(c) or kind in _ALIASES or kind == "reshape" or c.op_type == "Transpose"):
                return False  # a GEMM, a convolution, a softmax...: the start's copy stands for theirs
            if not tensor_iterator(c) and (c.inputs[0] is None or c.inputs[0].name != name):
                return False
            out = _step(c, strides, reshaped)
            if out is None:
                return False  # a reshape that copies: the start's copy stands for it
            strides.update(out)
            todo.extend(out)  # (none: a view back to contiguous memory, or an output in another operand's order)
    return reached
