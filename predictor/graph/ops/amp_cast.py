"""``AmpCast`` (domain ai.predictor): a cast kernel that torch.autocast launches (predictor/amp.py).

Unlike an exported Cast, a weight's autocast cast runs every forward, so the load-time folding of nodes
computed only from initializers does not apply: registered on the plain registry. Compulsory bytes at
each side's own dtype (the node policy keeps natural float sizes), no FLOPs, one kernel.
"""
from __future__ import annotations

from ..context import OpContext
from ..registry import register
from ...types import OpWork


@register("AmpCast", cls="copy", domain="ai.predictor")
def amp_cast(ctx: OpContext) -> OpWork:
    return ctx.work(kernels=1, notes=(f"autocast cast to {ctx.output(0).dtype}",))
