"""``channels_last``: convolutions and batch norms run in NHWC, so the layout transforms go away.

The fitted calibration adds hidden kernels of kind ``layout`` around 16-bit NCHW convolutions and batch
norms (cuDNN's ``nchwToNhwc``/``nhwcToNchw``, learned from the kernel-to-op mapping of PyTorch eager; see
``FittedCalibration.predict_op``). A compiler that keeps activations channels-last end to end
(TorchInductor's ``layout_optimization``, on by default for graphs with convolutions; TensorRT) launches
none: this pass marks those nodes with ``LAYOUT = "NHWC"`` (graph/fused.py) and the calibration drops
their ``layout`` hidden kernels (other hidden kinds stay). The node's own cost does not change.

Marked: 4-D and 5-D ``Conv`` and ``FusedConv`` nodes that are dense (group 1) or depthwise (group = input
channels), and ``BatchNormalization``. Grouped convolutions (1 < group < channels) keep theirs: cuDNN's NHWC
kernels for them still slice and transform channel groups (measured under TorchInductor on the H200 for
regnet_y_1_6gf: ``nhwcSliceCKernel`` and ``tensorTransformGeneric`` around every grouped convolution).
Ignores: the one conversion of the network input to channels-last (a copy of the input tensor).
"""
from __future__ import annotations

from ..graph.fused import LAYOUT, NHWC, nhwc_capable
from ..graph.loader import Graph
from ._graph import GraphIndex, rewrite, with_attrs
from .registry import optimization


@optimization("channels_last", order=50)
def channels_last(graph: Graph) -> Graph:
    ix = GraphIndex(graph)
    changed = {n.name: with_attrs(n, {LAYOUT: NHWC}) for n in graph.nodes if nhwc_capable(n)}
    return rewrite(ix, [], changed)
