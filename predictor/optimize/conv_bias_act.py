"""``conv_bias_act``: Conv [+ Add of a per-channel constant bias] + activation -> one ``FusedConv`` kernel.

The activation runs in the convolution's epilogue (cuDNN runtime fusion, TensorRT, TorchInductor's
max-autotune Triton templates): the Conv's output is written once, already activated, and never read
back; the activation's own pass over the tensor (read + write) and its kernel disappear; a separate bias
kernel (PyTorch eager's ``output.add_(bias)``) too. Activations: Relu, Clip (constant bounds), Sigmoid,
HardSigmoid, HardSwish, LeakyRelu, Tanh, and SiLU written as x * sigmoid(x). A Conv already fused by
``bn_fold`` takes its activation the same way. FLOPs kept: the convolution's, the bias's (1 per output
element) and the activation nodes' own counts.

Applies when every intermediate (the Conv's output, the biased output, sigmoid(x) of a SiLU) is read only
inside the pattern. The fused node keeps the Conv's name; ``EPILOGUE`` holds the activation nodes.
NB: not part of ``all``: TorchInductor's default mode leaves activations out of cuDNN/cuBLAS kernels
(measured: ``nvjet..._bias`` GEMMs followed by ``triton_poi_fused_gelu``; cuDNN convolutions followed by
``triton_poi_fused__native_batch_norm_legit_no_training_relu``); the ``elementwise`` pass models that.
"""
from __future__ import annotations

from ..graph.fused import BASE_OP, EPILOGUE, FOLDED, FUSED_CONV, MEMBER_NODES, MEMBERS
from ..graph.loader import Graph
from ..types import Node, TensorInfo
from ._graph import GraphIndex, fused_node, numel, rewrite, with_attrs
from .registry import optimization

ACTIVATIONS = frozenset({"Relu", "Clip", "Sigmoid", "HardSigmoid", "HardSwish", "LeakyRelu", "Tanh"})
_DEFAULT = ("", "ai.onnx")


def per_channel(t: TensorInfo | None, out: TensorInfo) -> bool:
    """``t`` broadcasts along the channel axis (axis 1) of ``out`` only: shape (C,1,..,1) or (1,C,1,..)."""
    if t is None or t.shape is None or out.shape is None or len(out.shape) < 2:
        return False
    c = out.shape[1]
    shape = t.shape
    if len(shape) > len(out.shape):
        return False
    full = (1,) * (len(out.shape) - len(shape)) + tuple(shape)
    return full[1] in (1, c) and all(d == 1 for i, d in enumerate(full) if i != 1)


def _conv_anchor(n: Node) -> bool:
    if n.op_type == "Conv" and n.domain in _DEFAULT:
        return True
    return n.op_type == FUSED_CONV and n.attrs.get(BASE_OP) == "Conv"


def _activation(ix: GraphIndex, x: Node) -> list[Node] | None:
    """The activation applied to x's output (its only use): [act] or the SiLU pair [Sigmoid, Mul]."""
    t = x.outputs[0]
    if t.name in ix.outputs:
        return None
    cs = ix.cons(t)
    if len(cs) == 1 and cs[0].op_type in ACTIVATIONS and cs[0].domain in _DEFAULT:
        act = cs[0]
        if act.op_type == "Clip" and not all(ix.is_static(i) for i in act.inputs[1:] if i is not None):
            return None
        if act.op_type == "Sigmoid":
            return None if _silu_mul(ix, act, t) else [act]
        return [act]
    if len(cs) == 2:
        sig = next((c for c in cs if c.op_type == "Sigmoid"), None)
        mul = next((c for c in cs if c.op_type == "Mul"), None)
        if sig is not None and mul is not None and _silu_mul(ix, sig, t) is mul:
            return [sig, mul]
    return None


def _silu_mul(ix: GraphIndex, sig: Node, x: TensorInfo) -> Node | None:
    m = ix.sole_consumer(sig)
    if m is not None and m.op_type == "Mul" and {i.name for i in m.inputs if i is not None} == \
            {x.name, sig.outputs[0].name}:
        return m
    return None


@optimization("conv_bias_act", order=20, in_all=False)
def conv_bias_act(graph: Graph) -> Graph:
    ix = GraphIndex(graph)
    groups = []
    taken: set[str] = set()
    for conv in graph.nodes:
        if not _conv_anchor(conv) or conv.name in taken or len(conv.inputs) < 2 or not ix.launches(conv):
            continue
        out = conv.outputs[0]
        bias = conv.inputs[2] if len(conv.inputs) > 2 else None
        chain: list[Node] = []
        last = conv
        nxt = ix.sole_consumer(conv)
        if nxt is not None and nxt.op_type == "Add" and nxt.domain in _DEFAULT and len(nxt.inputs) == 2:
            other = nxt.inputs[1] if nxt.inputs[0].name == out.name else nxt.inputs[0]
            if ix.is_static(other) and per_channel(other, out) and numel(nxt.outputs[0]) == numel(out):
                chain.append(nxt)
                last = nxt
        act = _activation(ix, last)
        if act is None and not chain:
            continue
        epilogue = list(act or [])
        members = [conv] + chain + epilogue
        inputs = [conv.inputs[0], conv.inputs[1], bias]
        if chain:
            add = chain[0]
            extra = add.inputs[1] if add.inputs[0].name == out.name else add.inputs[0]
            if bias is None:
                inputs[2] = extra  # the Add's constant is the convolution's bias
            else:
                epilogue.insert(0, add)
                inputs.append(extra)
        for a in epilogue:
            for t in a.inputs:
                if t is not None and ix.is_static(t) and all(t.name != i.name for i in inputs if i is not None):
                    inputs.append(t)
        base = {k: v for k, v in conv.attrs.items() if k not in (MEMBERS, MEMBER_NODES)}
        prior_epi = tuple(conv.attrs.get(EPILOGUE, ())) if conv.op_type == FUSED_CONV else ()
        attrs = {**base, BASE_OP: "Conv", EPILOGUE: prior_epi + tuple(epilogue),
                 FOLDED: tuple(conv.attrs.get(FOLDED, ()))}
        node = fused_node(ix, members, FUSED_CONV, attrs, name=conv.name, inputs=tuple(inputs),
                          outputs=(members[-1].outputs[0],))
        if conv.op_type == FUSED_CONV:  # keep the whole history traceable
            names = tuple(conv.attrs.get(MEMBERS, (conv.name,))) + tuple(m.name for m in members[1:])
            node = with_attrs(node, {MEMBERS: names})
        taken.update(m.name for m in members)
        groups.append((members, [node]))
    return rewrite(ix, groups)
