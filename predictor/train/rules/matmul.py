"""Matrix-product backward: two GEMMs, one per operand that needs a gradient (mm/bmm/addmm backward).

For Y = A @ B with the forward GEMM (batch, M, N, K):

    dA = dY @ B^T   GEMM (batch, M, K, N), FLOPs = 2 * batch * M * N * K   (skipped if A needs no grad)
    dB = A^T @ dY   GEMM (batch, K, N, M), same FLOPs                       (skipped if B needs no grad)

An N-D @ 2-D product (``nn.Linear`` on a sequence) runs as one mm forward, so dB is one GEMM whose
contraction runs over every row: (1, K, N, prod(A.shape[:-1])). An operand broadcast over batch dims gets its
full-size GEMM result reduced by ``sum_to_size`` (one reduction kernel). A bias (Gemm's C, or the 1-D bias
graph/runtime.py folds into the GEMM epilogue) gets ``dY.sum(rows)``: one reduction kernel, or the output
gradient itself when C has Y's shape. mm saves A only when B needs a gradient and B only when A does.
Einsum: the two GEMMs of its single pairwise contraction (its operand permutation copies are not counted);
other einsums have no backward rule here.
"""
from __future__ import annotations

from ...graph.ops.matmul import matmul_gemm
from ..registry import backward


def _bias(ctx, i: int, out: list) -> None:
    if ctx.has_input(i) and ctx.needs_grad(i):
        out.extend(ctx.pass_or_reduce(i, "bgrad"))


def _operand_grads(ctx, a_idx: int, b_idx: int, gemm_a, gemm_b, flops: float, out: list) -> None:
    a, b = ctx.input(a_idx), ctx.input(b_idx)
    gy = ctx.grad_out(0)
    if ctx.needs_grad(b_idx):
        ctx.save(a)
    if ctx.needs_grad(a_idx):
        ctx.save(b)
    for idx, kind, gemm, reads in ((a_idx, "dA", gemm_a, (gy, b)), (b_idx, "dB", gemm_b, (a, gy))):
        if not ctx.needs_grad(idx):
            continue
        target = ctx.input(idx)
        full_elems = gemm[0] * gemm[1] * gemm[2]
        if full_elems > ctx.numel(target):  # broadcast operand: full-size result, then sum_to_size
            full = ctx.temp(f"{kind}_full", target)
            full = type(full)(full.name, full.dtype, (gemm[0], gemm[1], gemm[2]))
            out.append(ctx.kernel(kind, reads, (full,), matmul=flops, gemm=gemm, operands=reads))
            out.append(ctx.kernel(f"{kind}_sum", (full,), (ctx.grad_in(idx),), op_type="ReduceSum",
                                  vector=full_elems))
        else:
            out.append(ctx.kernel(kind, reads, (ctx.grad_in(idx),), matmul=flops, gemm=gemm, operands=reads))


@backward("MatMul")
def matmul(ctx):
    a, b = ctx.shape(ctx.input(0)), ctx.shape(ctx.input(1))
    (batch, m, n, k), folded = matmul_gemm(a, b)
    flops = 2 * batch * m * n * k
    gemm_b = (1, k, n, m) if folded else (batch, k, n, m)
    out: list = []
    _operand_grads(ctx, 0, 1, (batch, m, k, n), gemm_b, flops, out)
    _bias(ctx, 2, out)
    return out


@backward("Gemm")
def gemm(ctx):
    a = ctx.shape(ctx.input(0))
    trans_a = int(ctx.attr("transA", 0) or 0)
    m, k = (a[1], a[0]) if trans_a else (a[0], a[1])
    n = ctx.shape(ctx.output(0))[1]
    out: list = []
    _operand_grads(ctx, 0, 1, (1, m, k, n), (1, k, n, m), 2 * m * n * k, out)
    _bias(ctx, 2, out)
    return out


@backward("Einsum")
def einsum(ctx):
    g = ctx.work.gemm
    if g is None or len(ctx.node.inputs) != 2:
        return None
    b, m, n, k = g
    out: list = []
    _operand_grads(ctx, 0, 1, (b, m, k, n), (b, k, n, m), 2 * b * m * n * k, out)
    return out

