"""Shape-only and host-side ops: views, metadata queries, constants, inference-time identities.

0 kernels, 0 bytes (``ctx.free_view()``) where PyTorch eager does no device work:

* Reshape, Flatten, Squeeze, Unsqueeze: views of a contiguous tensor.
  NB: a reshape of a non-contiguous tensor (e.g. after a permute) copies in PyTorch; that copy is
  charged to the Transpose that made it non-contiguous (see data_movement.transpose).
* Shape, Size: metadata read on the host.
* Constant: the value is materialised once, before inference runs.
* Identity: the same tensor.
* Dropout: an identity in inference (``training_mode`` false, the mask output unused).

ConstantOfShape is a fill kernel (``torch.full``): 1 kernel writing the output; its input is a shape
read on the host (0 bytes read). Exception: a 1-D integer ConstantOfShape of a known shape is part of
the exporter's shape arithmetic (torchscript's ``expand`` pattern: ConstantOfShape -> Mul -> Equal ->
Where on a shape vector), which PyTorch does on Python ints: free.

RandomNormal, RandomUniform and their -Like forms are generator kernels (``torch.randn``/``torch.rand``): 1 kernel
writing the output, nothing read on the device; the Philox rounds and the Box-Muller transform are integer and
special-function work that is not counted as FLOPs.
"""
from __future__ import annotations

from dataclasses import replace

from ...precision import FLOAT_DTYPES
from ...types import OpWork, frozen_map
from ..context import OpContext
from ._common import FREE, host_constant, register


@register("Reshape", "Flatten", "Squeeze", "Unsqueeze", cls="elementwise", view="reshape")
@register("Identity", cls="elementwise", view="alias")
@register("Dropout", cls="elementwise", view="dropout")
@register("Shape", "Size", "Constant", cls="elementwise")
def free(ctx: OpContext) -> OpWork:
    """A view or host-side op: 0 kernels, 0 FLOPs, 0 bytes."""
    return FREE


@register("ConstantOfShape", cls="copy")
def constant_of_shape(ctx: OpContext) -> OpWork:
    """A fill kernel: 0 FLOPs, writes the output once, reads nothing on the device."""
    out = ctx.output(0)
    if out.dtype not in FLOAT_DTYPES and out.shape is not None and len(out.shape) <= 1 and host_constant(ctx):
        return ctx.free_view()
    return _fill(ctx)


@register("RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", cls="copy")
def random_fill(ctx: OpContext) -> OpWork:
    """A generator kernel: 0 FLOPs, writes the output once, reads nothing on the device (a -Like op's input gives
    only the shape and dtype)."""
    return _fill(ctx)


def _fill(ctx: OpContext) -> OpWork:
    """One kernel writing the output, reading nothing on the device (a fill or a generator)."""
    return replace(ctx.work(bytes_read=0), input_bytes=frozen_map())
