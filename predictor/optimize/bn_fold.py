"""``bn_fold``: an inference BatchNormalization directly after a Conv folds into the Conv.

y = gamma * (conv(x, W) + b - mean) / sqrt(var + eps) + beta is conv(x, W') + b' with
W' = W * gamma / sqrt(var + eps) per output channel and b' = (b - mean) * gamma / sqrt(var + eps) + beta,
computed once from the weights (what TorchInductor's freezing, TensorRT and ONNX Runtime do). The Conv
becomes a ``FusedConv`` with the bias in its epilogue (one kernel; PyTorch eager would add a bias with a
kernel of its own) and the BatchNormalization node disappears, with its per-channel parameter reads and its
pass over the output. FLOPs: the convolution's, plus 1 per output element for the bias (the normalisation's
2 per element are gone: folded into the weights).

Applies when the Conv's output has no reader but the BatchNormalization (and is no graph output), the
BatchNormalization is in inference mode with only its first output used, and its scale, bias, mean and
variance are load-time constants. The fused node keeps the Conv's name and attributes; ``FOLDED`` names the
batch norm. Ignores: the weight rewrite itself (load time, no kernel).
"""
from __future__ import annotations

from ..graph.fused import BASE_OP, EPILOGUE, FOLDED, FUSED_CONV
from ..graph.loader import Graph
from ..types import TensorInfo
from ._graph import GraphIndex, fused_node, rewrite
from .registry import optimization

CONV_OPS = ("Conv",)


@optimization("bn_fold", order=10)
def bn_fold(graph: Graph) -> Graph:
    ix = GraphIndex(graph)
    groups = []
    for bn in graph.nodes:
        if bn.op_type != "BatchNormalization" or bn.domain not in ("", "ai.onnx"):
            continue
        if int(bn.attrs.get("training_mode", 0) or 0) or not ix.only_output_used(bn):
            continue
        conv = ix.prod(bn.inputs[0]) if bn.inputs else None
        if conv is None or conv.op_type not in CONV_OPS or conv.domain not in ("", "ai.onnx"):
            continue
        if ix.sole_consumer(conv) is not bn or len(bn.inputs) < 5 or not ix.launches(conv):
            continue
        if not all(ix.is_static(t) for t in bn.inputs[1:5]) or len(conv.inputs) < 2:
            continue
        w = conv.inputs[1]
        if w is None or w.shape is None or not ix.is_static(w) or bn.outputs[0].shape is None:
            continue
        bias = conv.inputs[2] if len(conv.inputs) > 2 and conv.inputs[2] is not None else \
            TensorInfo(f"{bn.name}::folded_bias", w.dtype, (w.shape[0],), is_initializer=True)
        attrs = {**{k: v for k, v in conv.attrs.items()}, BASE_OP: conv.op_type, EPILOGUE: (),
                 FOLDED: (bn.name,)}
        node = fused_node(ix, [conv, bn], FUSED_CONV, attrs, name=conv.name,
                          inputs=(conv.inputs[0], w, bias), outputs=(bn.outputs[0],))
        groups.append(([conv, bn], [node]))
    return rewrite(ix, groups)
