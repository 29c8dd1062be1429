"""Names shared by the graph optimisation passes (``predictor/optimize/``), the cost formulas of the fused
kernels they create (``graph/ops/fused.py``) and the fitted calibration (``predictor/fitted.py``).

A pass replaces the nodes one kernel of a fusing compiler runs with one :class:`~predictor.types.Node` of
domain ``ai.predictor``; its attributes (in-memory only, never written to a file) carry:

* ``MEMBERS``: the names of the original nodes the kernel computes (traceability; reports list them);
* ``MEMBER_NODES``: those nodes themselves, so the fused formula counts their FLOPs exactly with their own
  formulas under the precision in use;
* ``BASE_OP``: the op type whose runtime behaviour the fused node keeps (``Conv`` for ``FusedConv``: the
  calibration's hidden layout kernels of a convolution still apply to it);
* ``LAYOUT``: ``"NHWC"`` when the ``channels_last`` pass has put the node in channels-last layout: the
  calibration then adds none of the hidden ``layout`` kernels it fitted around NCHW 16-bit kernels;
* ``FP32_TENSORS``: tensors of the node kept in fp32 whatever the storage precision (SDPA's math path
  upcasts 16-bit inputs, see ``optimize/attention.py``); ``UPCAST``: the node is one of those fp32 stages.

A standard node (a ``Conv`` or ``BatchNormalization`` put in channels-last layout) carries only ``LAYOUT``.
"""
from __future__ import annotations

from typing import Any

from ..types import Node

DOMAIN = "ai.predictor"

MEMBERS = "ai.predictor.members"
MEMBER_NODES = "ai.predictor.member_nodes"
EPILOGUE = "ai.predictor.epilogue"
FOLDED = "ai.predictor.folded"
BASE_OP = "ai.predictor.base_op"
LAYOUT = "ai.predictor.layout"
FP32_TENSORS = "ai.predictor.fp32_tensors"
UPCAST = "ai.predictor.upcast"
BACKEND = "ai.predictor.backend"
STAGE = "ai.predictor.stage"

NHWC = "NHWC"

# op types of the fused kernels (their op classes are in graph/opclass.py)
FUSED_ELEMENTWISE = "FusedElementwise"
FUSED_NORM = "FusedNorm"
FUSED_SOFTMAX = "FusedSoftmax"
FUSED_REDUCTION = "FusedReduction"
FUSED_CONV = "FusedConv"
FUSED_MATMUL = "FusedMatMul"
FUSED_ATTENTION = "FusedAttention"
FUSED_OPS = frozenset({FUSED_ELEMENTWISE, FUSED_NORM, FUSED_SOFTMAX, FUSED_REDUCTION, FUSED_CONV, FUSED_MATMUL,
                       FUSED_ATTENTION})


def is_fused(node: Node) -> bool:
    return node.domain == DOMAIN and node.op_type in FUSED_OPS


def base_op(node: Node) -> str:
    """The op type whose runtime behaviour (hidden kernels) the node has: its own, or a fused node's base."""
    if node.domain == DOMAIN:
        return str(node.attrs.get(BASE_OP, node.op_type))
    return node.op_type


def runtime_op(node: Node, work) -> str:
    """The op type the runtime's kernel for ``node`` behaves as (class, hidden kernels): the kernel the runtime fused
    it into (OpWork.runtime_kernel: ``Attention``, ``RMSNormalization``), else :func:`base_op`."""
    return work.runtime_kernel or base_op(node)


def member_names(node: Node) -> tuple[str, ...]:
    """Names of the original nodes a fused node computes (the node's own name for any other node)."""
    names: Any = node.attrs.get(MEMBERS) if node.domain == DOMAIN else None
    return tuple(names) if names else (node.name,)


def channels_last(node: Node) -> bool:
    return node.attrs.get(LAYOUT) == NHWC


_DEFAULT_DOMAINS = ("", "ai.onnx")


def nhwc_capable(node: Node) -> bool:
    """Whether the node runs without layout transforms when activations are channels-last: 4-D/5-D dense or
    depthwise convolutions (grouped ones keep cuDNN's transforms) and batch norms (optimize/layout.py,
    layout_views.py)."""
    if node.op_type == "BatchNormalization" and node.domain in _DEFAULT_DOMAINS:
        return True
    is_conv = (node.op_type == "Conv" and node.domain in _DEFAULT_DOMAINS) or \
        (node.op_type == FUSED_CONV and node.attrs.get(BASE_OP) == "Conv")
    if not is_conv or not node.inputs or node.inputs[0] is None or node.inputs[0].shape is None:
        return False
    x = node.inputs[0].shape
    if len(x) not in (4, 5):
        return False
    groups = int(node.attrs.get("group", 1) or 1)
    return groups == 1 or groups == x[1]
