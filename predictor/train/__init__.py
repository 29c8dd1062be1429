"""Training-step prediction (``predict MODEL --mode train``): forward + backward + optimizer from the
forward ONNX graph, with per-phase time and the step's peak memory.

Modules, one job each: ``autograd`` (which tensors need and receive gradients, fused groups), ``registry``
and ``rules/`` (the backward kernels of each op type), ``context`` (what a rule sees), ``kernel`` (the
kernel item), ``forward`` (training-mode forward differences), ``loss``, ``optimizer`` and ``multitensor``
(the optimizer step and PyTorch's multi-tensor launches), ``precision`` (parameter/gradient/master storage),
``memory`` (peak memory replay), ``step`` (the pipeline), ``result``, ``report`` and ``plots`` (output).
"""
from .result import MemoryEstimate, PhaseSummary, TrainingPrediction  # noqa: F401
from .step import predict_training_file, predict_training_graph  # noqa: F401
