"""Graph optimisation passes: what a fusing compiler does to the graph before it runs.

``predict MODEL --optimize PASS[,PASS]|all`` (default none) applies them after loading and before costing;
each pass is a small pure function ``Graph -> Graph`` registered with ``@optimization`` (registry.py) that
replaces the nodes one compiled kernel runs by one node of domain ``ai.predictor`` (graph/fused.py names
its attributes; graph/ops/fused.py costs it: FLOPs of its members exactly, compulsory bytes of the fused
kernel; graph/opclass.py gives it the op class the fitted calibration uses). Passes, in pipeline order:

* ``bn_fold`` (bn_fold.py): BatchNormalization after a Conv folds into the Conv's weights and bias.
* ``conv_bias_act`` (conv_bias_act.py): Conv [+ bias Add] + activation -> one convolution kernel with the
  activation in its epilogue (TensorRT/cuDNN-fusion style; not in ``all``).
* ``attention`` (attention.py): matmul-softmax-matmul attention -> one flash-attention kernel, or SDPA's
  math path where PyTorch's dispatch falls back to it (a mask broadcast along the key axis).
* ``elementwise`` (elementwise.py): pointwise trees, with a normalisation/softmax/reduction and its
  prologue/epilogue, -> one kernel; convolution biases move into the pointwise kernel that follows.
* ``channels_last`` (layout.py): convolutions and batch norms in NHWC: no layout-transform kernels.

``all`` = bn_fold, attention, elementwise, channels_last: TorchInductor's default mode (``torch.compile``,
no max-autotune) as its kernel lists on the H200 show it: cuDNN/cuBLAS kernels keep only their bias,
everything pointwise around them is fused in Triton, activations are channels-last, SDPA is kept or
matched. ``conv_bias_act`` models compilers that fuse activations into convolutions; add it by name
(``--optimize all,conv_bias_act``). Passes run in pipeline order whatever order they are named in.
"""
from __future__ import annotations

from .registry import ALL, all_passes, apply_passes, known_passes, optimization, resolve

__all__ = ["ALL", "all_passes", "apply_passes", "known_passes", "optimization", "resolve"]
