"""``AmpCast`` (domain ai.predictor): a cast kernel that torch.autocast launches (predictor/amp.py).

Unlike an exported Cast, a weight's autocast cast runs every forward, so the load-time folding of nodes
computed only from initializers does not apply: registered on the plain registry. Compulsory bytes at
each side's own dtype (the node policy keeps natural float sizes), no FLOPs, one kernel.

Class ``elementwise``, not ``copy``: the kernel is PyTorch's contiguous vectorised elementwise kernel (8 elements a
thread), which streams at the elementwise class's bandwidth, while the copy class's strided, gather and transpose
kernels run at 0.35 of it at 16 bit. Measured (amp kernel tables, calibration/data/h100/amp_kernels_decoders and
h200/whatif/amp_kernels): the weight casts of a Nemotron-shaped decoder at batch 1 stream 1.8 GB in 0.74 ms on an
H100 (0.85 of its ERT bandwidth); BERT-base's 192 casts take 352 us (batch 1) and 526 us (32) on the H200.
"""
from __future__ import annotations

from ..context import OpContext
from ..registry import register
from ...types import OpWork


@register("AmpCast", cls="elementwise", domain="ai.predictor")
def amp_cast(ctx: OpContext) -> OpWork:
    return ctx.work(kernels=1, notes=(f"autocast cast to {ctx.output(0).dtype}",))
