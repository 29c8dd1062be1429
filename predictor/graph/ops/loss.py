"""ONNX's loss ops (SoftmaxCrossEntropyLoss, NegativeLogLikelihoodLoss): no cost formula (they are reported as
not costed; a training step's loss is predictor/train/loss.py's), but their traits are declared, since autocast
runs them in float32 and so types what they feed."""
from __future__ import annotations

from ..registry import declare

declare("SoftmaxCrossEntropyLoss", "NegativeLogLikelihoodLoss", cls="elementwise", autocast="fp32")
