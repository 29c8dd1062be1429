"""Kernels a fusing compiler runs in place of several nodes (domain ``ai.predictor``, made by the graph
optimisation passes of ``predictor/optimize/``; attribute names in ``graph/fused.py``).

FLOPs are never re-derived: each fused node keeps the nodes it computes (``MEMBER_NODES``) and counts their
FLOPs with their own registered formulas under the precision in use, so a fusion keeps FLOPs exactly.
Bytes are the fused kernel's compulsory traffic: every external input read once (at its own size, so a
broadcast operand costs its size once), every output that leaves the kernel written once; intermediates
stay in registers or shared memory and cost nothing.

* ``FusedElementwise``, ``FusedNorm``, ``FusedSoftmax`` (op class elementwise), ``FusedReduction``
  (class reduce): one kernel computing a tree of pointwise nodes around at most one normalisation/softmax/
  reduction (prologue and epilogue), as TorchInductor's pointwise, persistent and reduction kernels do.
  A row-wise norm or softmax group is a persistent reduction (one pass over each row held on chip) that
  streams at pointwise speed, so it takes the elementwise class, not PyTorch's own LayerNorm/softmax
  kernels' (measured on the H200: TorchInductor's add + LayerNorm kernel over 32x128x768 fp16 takes
  6.2-8.5 us, PyTorch's LayerNorm alone 10.4 us).
* ``FusedConv`` (class conv): a convolution with its epilogue: the bias (a folded batch norm's bias, the
  Conv's own, or a following per-channel constant ``Add``) and pointwise ops (``EPILOGUE`` nodes) applied
  before the output is stored; one kernel. Inputs X, W, bias (optional), then the epilogue's other
  inputs. FLOPs: the Conv formula's (MATMUL, or VECTOR for depthwise), + 1 per output element for the
  bias, + the epilogue nodes'. ``OpWork.gemm`` as for Conv (the tiling model applies).
* ``FusedAttention`` (class attention): flash-style attention (``BACKEND`` ``flash``): one kernel reading
  q, k, v (and the mask or bias), writing the output; the score matrix never reaches memory. FLOPs: the
  members' (QK^T and PV: 4*B*H*Sq*Skv*D MATMUL, plus scale, mask and softmax VECTOR work).
* ``FusedMatMul`` (class gemm): a batched matmul stage of SDPA's math path. With ``UPCAST`` and 16-bit
  storage its operands and result are fp32 (``FP32_TENSORS``) and its FLOPs run on CUDA cores (VECTOR:
  cuBLAS' fp32 FFMA kernel, TF32 off); otherwise MATMUL as the member MatMul.

``UPCAST`` stages with no member nodes are pure casts of SDPA's math path: free (0 kernels) when storage is
already 4 bytes. NB: FLOPs counted as VECTOR run at the policy's vector precision (fp16 CUDA cores on a
16-bit policy; the H200's measured half2 and fp32 FMA rates are the same, 64.0 and 61.9 TFLOP/s).
"""
from __future__ import annotations

from dataclasses import replace

from ...precision import FLOAT_DTYPES
from ...types import OpWork, PredictorError, TensorInfo, WorkKind
from ..context import OpContext, ShapeUnknown
from ..fused import (
    DOMAIN, EPILOGUE, FP32_TENSORS, FUSED_ATTENTION, FUSED_CONV, FUSED_ELEMENTWISE, FUSED_MATMUL, FUSED_NORM,
    FUSED_REDUCTION, FUSED_SOFTMAX, MEMBER_NODES, MEMBERS, UPCAST,
)
from ._common import prod, register, with_input_reads
from .conv import _is_depthwise, conv_flops, conv_gemm


def member_flops(ctx: OpContext, nodes) -> dict[WorkKind, float]:
    """FLOPs by kind of ``nodes``, each counted by its own formula under ``ctx``'s policy."""
    from ..registry import lookup

    out: dict[WorkKind, float] = {}
    for m in nodes or ():
        formula = lookup(m.op_type, m.domain)
        if formula is None:
            raise PredictorError(f"fused node '{ctx.node.name}': member '{m.name}' ({m.op_type}) has no formula")
        for kind, f in formula(OpContext(m, ctx.policy, ctx.opset)).flops.items():
            out[kind] = out.get(kind, 0.0) + float(f)
    return out


def _tensor_bytes(ctx: OpContext, t: TensorInfo, fp32: frozenset) -> float:
    """Bytes of ``t`` under the policy; 4 per element for a float tensor the node keeps in fp32."""
    if t.name in fp32 and t.dtype in FLOAT_DTYPES:
        if t.shape is None:
            raise ShapeUnknown(f"{ctx.node.op_type} '{ctx.node.name}': shape of '{t.name}' unknown")
        return 4.0 * prod(t.shape)
    return float(ctx.tensor_bytes(t))


def _compulsory(ctx: OpContext, matmul: float = 0.0, vector: float = 0.0, notes: tuple[str, ...] = (),
                gemm=None, gemm_operand_bytes: float = 0.0) -> OpWork:
    """One kernel: every (distinct) input read once, every output written once."""
    fp32 = frozenset(ctx.node.attrs.get(FP32_TENSORS, ()))
    reads: dict[str, float] = {}
    for t in ctx.node.inputs:
        if t is not None and t.name not in reads:
            reads[t.name] = _tensor_bytes(ctx, t, fp32)
    written = sum(_tensor_bytes(ctx, t, fp32) for t in ctx.node.outputs if t.name)
    work = ctx.work(matmul_flops=matmul, vector_flops=vector, bytes_read=sum(reads.values()),
                    bytes_written=written, notes=notes, gemm=gemm, gemm_operand_bytes=gemm_operand_bytes)
    return with_input_reads(work, reads)


def _members(ctx: OpContext):
    return ctx.node.attrs.get(MEMBER_NODES, ())


def _note(ctx: OpContext, what: str) -> tuple[str, ...]:
    """``what`` and the names of the nodes the kernel computes (traceability in OpWork.notes)."""
    names = tuple(ctx.node.attrs.get(MEMBERS, ()))
    if not names:
        return (what,)
    shown = ", ".join(names[:12]) + (f", ... ({len(names)} in all)" if len(names) > 12 else "")
    return (f"{what}: {shown}",)


@register(FUSED_ELEMENTWISE, FUSED_NORM, FUSED_SOFTMAX, domain=DOMAIN, cls="elementwise")
@register(FUSED_REDUCTION, domain=DOMAIN, cls="reduce")
def fused_pointwise(ctx: OpContext) -> OpWork:
    """One kernel for a tree of pointwise nodes (+ at most one norm/softmax/reduction): members' FLOPs."""
    members = _members(ctx)
    if ctx.node.attrs.get(UPCAST) and not members and ctx.policy.storage_bytes >= 4:
        return ctx.free_view()  # a cast stage of SDPA's math path: nothing to cast at fp32 storage
    f = member_flops(ctx, members)
    return _compulsory(ctx, f.get(WorkKind.MATMUL, 0.0), f.get(WorkKind.VECTOR, 0.0),
                       notes=_note(ctx, "one fused kernel"))


@register(FUSED_MATMUL, cls="gemm", domain=DOMAIN)
def fused_matmul(ctx: OpContext) -> OpWork:
    """A matmul stage of SDPA's math path; fp32 on CUDA cores when it upcasts 16-bit storage."""
    f = member_flops(ctx, _members(ctx))
    mm, vec = f.get(WorkKind.MATMUL, 0.0), f.get(WorkKind.VECTOR, 0.0)
    notes = _note(ctx, "matmul stage")
    if ctx.node.attrs.get(UPCAST) and ctx.policy.storage_bytes < 4:
        mm, vec = 0.0, vec + mm
        notes = _note(ctx, "SDPA math path: fp32 matmul on CUDA cores (16-bit inputs upcast)")
    return _compulsory(ctx, mm, vec, notes=notes)


@register(FUSED_CONV, cls="conv", domain=DOMAIN)
def fused_conv(ctx: OpContext) -> OpWork:
    """Conv + bias + epilogue in one kernel: Conv FLOPs, +1 per output element for the bias, + epilogue."""
    x_shape, w_shape = ctx.in_shape(0), ctx.in_shape(1)
    out_numel = ctx.out_numel()
    flops = conv_flops(out_numel, w_shape)
    epi = member_flops(ctx, ctx.node.attrs.get(EPILOGUE, ()))
    vector = epi.get(WorkKind.VECTOR, 0.0) + (out_numel if ctx.has_input(2) else 0)
    groups = int(ctx.node.attrs.get("group", 1) or 1)
    notes = _note(ctx, "convolution with its epilogue in one kernel")
    if _is_depthwise(x_shape, w_shape, groups):
        return _compulsory(ctx, epi.get(WorkKind.MATMUL, 0.0), vector + flops, notes=notes)
    gemm = conv_gemm(x_shape, w_shape, ctx.out_shape(), groups)
    return _compulsory(ctx, flops + epi.get(WorkKind.MATMUL, 0.0), vector, notes=notes, gemm=gemm,
                       gemm_operand_bytes=ctx.in_bytes(0) + ctx.in_bytes(1))


@register(FUSED_ATTENTION, cls="attention", autocast="low", domain=DOMAIN)
def fused_attention(ctx: OpContext) -> OpWork:
    """Flash-style attention: one kernel, q/k/v/mask read once, output written once; members' FLOPs."""
    f = member_flops(ctx, _members(ctx))
    work = _compulsory(ctx, f.get(WorkKind.MATMUL, 0.0), f.get(WorkKind.VECTOR, 0.0),
                       notes=_note(ctx, "fused attention, the score matrix stays on chip"))
    q, v = ctx.in_shape(0), ctx.in_shape(2)
    if len(q) < 2 or len(v) < 2:
        return work
    return replace(work, attention_tiles=(prod(q[:-2]), q[-2], v[-1], v[-2]))
