"""Matrix products: MatMul, Gemm, Einsum, MatMulInteger, QLinearMatMul.

    MatMul  FLOPs = 2 * out_numel * K          (batched, broadcast and 1-D operands all reduce to this:
                                                every output element is a K-long dot product)
    Gemm    FLOPs = 2 * M * N * K  (MATMUL)  + M*N per alpha != 1, + M*N for the C add, + M*N per
                                                beta != 1 (VECTOR, done in the GEMM epilogue)
    Einsum  pairwise contractions, left to right: 2 * product of the sizes of every index of the pair
            (MATMUL) when an index is summed away; otherwise an elementwise/outer product (VECTOR,
            1 multiply per element of the index space); single-operand sums/diagonals are VECTOR.

Reference runtime (PyTorch eager):
* ``torch.matmul`` folds an N-D @ 2-D product into one ``mm``; otherwise it broadcasts the batch
  dims, and an operand whose expanded batch dims cannot be merged into one (some broadcast, some
  not) is materialised by a copy kernel before ``bmm``. Those copies are counted (kernel + bytes).
* ``nn.Linear`` exports as Gemm with a 1-D bias: ``addmm`` runs it as one cuBLASLt GEMM with a
  bias epilogue. Any other C (2-D, a column, a scalar) is first copied into the output (copy kernel)
  and the GEMM accumulates onto it (beta): 2 kernels.
* ``torch.einsum`` permutes/reshapes each operand into bmm's [batch, free, summed] layout; a copy
  kernel appears when an operand's index order is not already [batch..., one group, other group]
  and when the output's order is not [batch..., free of A, free of B]. Counted by that rule.

weight_bytes: the operands that are initializers (the rule in ``_common``), whatever their rank.
NB: the exported MatMul + Add of a 3-D nn.Linear is one fused addmm in eager; the Add is a
separate node here (a fusion pass may merge them).
"""
from __future__ import annotations

from ...types import OpWork
from ..context import OpContext
from ._common import attr, in_elem_bytes, prod, register, str_attr


# ------------------------------------------------------------------------------------------ MatMul
# a linear layer whose K or N is tiny runs cuBLAS's small-tile kernels (CUTLASS wmma / SIMT, 32 x 32 output tiles,
# a 32-deep K step): its time follows the tile steps, not the FLOPs or the bytes (H100 linear_thin sweep,
# calibration/data/h100/microbench/run18: a 4 x 4 layer over 1.23 M rows takes 58-148 us where its 20 MB move in ~6;
# 3 x 96 and 96 x 3 take ~3x the 4 x 4 time, 4 x 64 and 64 x 4 1.4-3x). Measured for K and N of 3-12 against 64-96;
# THIN_DIM is the edge between the sizes measured slow (<= 12) and aligned (64), THIN_MAX_DIM the largest measured
THIN_DIM = 16
THIN_MAX_DIM = 128
THIN_TILE = 32


def thin_linear_steps(gemm: tuple[int, int, int, int] | None, weight_b: bool) -> int:
    """Tile steps of a thin linear layer's kernel (0 when the product is not one): ceil(M / 32) x ceil(N / 32) x
    ceil(K / 32) for an activation times a weight (``weight_b``: B an initializer; one GEMM after folding) whose
    smaller of K and N is below THIN_DIM and larger at most THIN_MAX_DIM. Ignores: the tile cuBLAS really picks
    (a 64-row SIMT tile at fp32), batched products of activations (other kernels; not measured)."""
    if gemm is None or not weight_b:
        return 0
    b, m, n, k = gemm
    if b != 1 or min(n, k) <= 0 or min(n, k) >= THIN_DIM or max(n, k) > THIN_MAX_DIM:
        return 0
    return -(-m // THIN_TILE) * -(-n // THIN_TILE) * -(-k // THIN_TILE)


def matmul_flops(out_numel: int, k: int) -> int:
    """2 * out_numel * K: one K-long dot product (K FMAs) per output element."""
    return 2 * out_numel * k


def _broadcast(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    n = max(len(a), len(b))
    a = (1,) * (n - len(a)) + a
    b = (1,) * (n - len(b)) + b
    return tuple(max(x, y) for x, y in zip(a, b))


def _needs_expand_copy(batch: tuple[int, ...], full: tuple[int, ...]) -> bool:
    """Whether ``expand(full).reshape(-1, ...)`` of an operand with batch dims ``batch`` copies.

    Dims of size 1 in ``full`` are ignored (they never block a merge). The merge into one batch
    dim is a view when either every remaining dim is broadcast (stride 0) or none is.
    """
    batch = (1,) * (len(full) - len(batch)) + batch
    kinds = {b == 1 for b, f in zip(batch, full) if f > 1}
    return len(kinds) == 2


def matmul_gemm(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[tuple[int, int, int, int], bool]:
    """((batch, M, N, K), folded) of torch.matmul on operands of shapes ``a`` and ``b``.

    ``folded``: an N-D @ 2-D (or 1-D) product runs as one mm with M = prod(a[:-1]).
    """
    k = a[-1]
    m = a[-2] if len(a) >= 2 else 1
    n = b[-1] if len(b) >= 2 else 1
    if len(a) >= 3 and len(b) <= 2:
        return (1, prod(a[:-1]), n, k), True
    batch = prod(_broadcast(a[:-2], b[:-2])) if max(len(a), len(b)) >= 3 else 1
    return (batch, m, n, k), False


@register("MatMul", cls="gemm", autocast="low")
def matmul(ctx: OpContext) -> OpWork:
    """MatMul (numpy semantics): MATMUL 2 * out_numel * K; 1 kernel (+ broadcast copies). A thin linear layer's
    tile steps are its rows (OpWork.rows: thin_linear_steps; class gemm_thin).

    A broadcast operand that torch.matmul must materialise costs one copy kernel that reads the
    operand and writes its expanded [batch, rows, cols] form, which the bmm then reads.
    """
    a, b = ctx.in_shape(0), ctx.in_shape(1)
    gemm, folded = matmul_gemm(a, b)
    batch, m, n, k = gemm
    flops = matmul_flops(ctx.out_numel(), k)
    kernels = 1
    bytes_read = float(ctx.all_in_bytes())
    bytes_written = float(ctx.all_out_bytes())
    operand_bytes = 0.0
    full = _broadcast(a[:-2], b[:-2]) if not folded else ()
    for idx, shape, rows, cols in ((0, a, m, k), (1, b, k, n)):
        if not folded and len(shape) >= 3 and _needs_expand_copy(shape[:-2], full):
            expanded = batch * rows * cols * in_elem_bytes(ctx, idx)
            kernels += 1
            bytes_written += expanded
            bytes_read += expanded  # the bmm reads the expanded copy
            operand_bytes += expanded
        else:
            operand_bytes += ctx.in_bytes(idx)
    return ctx.work(matmul_flops=flops, kernels=kernels, bytes_read=bytes_read, bytes_written=bytes_written,
                    gemm=gemm, gemm_operand_bytes=operand_bytes,
                    rows=thin_linear_steps(gemm, ctx.node.inputs[1].is_initializer))


@register("MatMulInteger", cls="gemm")
def matmul_integer(ctx: OpContext) -> OpWork:
    """MatMulInteger (A, B, a_zero_point, b_zero_point): MatMul's count on the int8 path, 1 kernel."""
    a, b = ctx.in_shape(0), ctx.in_shape(1)
    gemm, _ = matmul_gemm(a, b)
    return ctx.work(matmul_flops=matmul_flops(ctx.out_numel(), a[-1]), gemm=gemm,
                    gemm_operand_bytes=ctx.in_bytes(0) + ctx.in_bytes(1))


@register("QLinearMatMul", cls="gemm")
def qlinear_matmul(ctx: OpContext) -> OpWork:
    """QLinearMatMul (a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp): one fused int8 kernel.

    MATMUL 2 * out_numel * K; VECTOR 3 per output element to requantise (scale, round, add zp).
    """
    a, b = ctx.in_shape(0), ctx.in_shape(3)
    out_numel = ctx.out_numel()
    gemm, _ = matmul_gemm(a, b)
    return ctx.work(matmul_flops=matmul_flops(out_numel, a[-1]), vector_flops=3 * out_numel, gemm=gemm, gemm_operand_bytes=ctx.in_bytes(0) + ctx.in_bytes(3))


# -------------------------------------------------------------------------------------------- Gemm
@register("Gemm", cls="gemm", autocast="low")
def gemm(ctx: OpContext) -> OpWork:
    """Gemm: Y = alpha * op(A) @ op(B) + beta * C.

    MATMUL 2*M*N*K; VECTOR M*N (alpha != 1) + M*N (C add) + M*N (beta != 1).
    1 kernel without C or with a 1-D bias [N] and beta == 1 (cuBLASLt bias epilogue); otherwise
    2 kernels: C copied into Y (reads C, writes M*N), then the GEMM reads Y back (beta accumulate).
    """
    a = ctx.in_shape(0)
    trans_a = int(attr(ctx, "transA", 0))
    m, k = (a[1], a[0]) if trans_a else (a[0], a[1])
    n = ctx.out_shape()[1]
    mn = m * n
    alpha = float(attr(ctx, "alpha", 1.0))
    beta = float(attr(ctx, "beta", 1.0))
    has_c = ctx.has_input(2) and beta != 0.0
    vector = (mn if alpha != 1.0 else 0) + ((mn + (mn if beta != 1.0 else 0)) if has_c else 0)
    flops = 2 * m * n * k
    g = dict(gemm=(1, m, n, k), gemm_operand_bytes=ctx.in_bytes(0) + ctx.in_bytes(1))
    if not has_c:
        return ctx.work(matmul_flops=flops, vector_flops=vector, **g)
    c = ctx.in_shape(2)
    if len(c) == 1 and c[0] == n and n > 1 and beta == 1.0:
        return ctx.work(matmul_flops=flops, vector_flops=vector, **g)
    out_b = ctx.out_bytes()
    return ctx.work(matmul_flops=flops, vector_flops=vector, kernels=2,
                    bytes_read=ctx.all_in_bytes() + out_b, bytes_written=2 * out_b,
                    notes=("C copied into Y before the GEMM (addmm with a non-1-D bias)",), **g)


# ------------------------------------------------------------------------------------------ Einsum
_ELLIPSIS_LETTERS = "0123456789!#$%&*+:;<=>?@^_|~"  # never valid subscript letters


def parse_einsum(equation: str, shapes: list[tuple[int, ...]]) -> tuple[list[str], str, dict[str, int]]:
    """Expand an einsum equation: (input terms, output term, size of each index).

    Ellipses become placeholder indices, right-aligned and broadcast as numpy does; without '->'
    the output is the ellipsis dims followed by the indices that appear once, sorted.
    """
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise ValueError(f"einsum '{equation}': {len(terms)} terms for {len(shapes)} inputs")
    ell_rank = 0
    for t, s in zip(terms, shapes):
        if "..." in t:
            ell_rank = max(ell_rank, len(s) - (len(t) - 3))
    ell = _ELLIPSIS_LETTERS[:ell_rank]
    sizes: dict[str, int] = {}
    expanded = []
    for t, s in zip(terms, shapes):
        if "..." in t:
            n = len(s) - (len(t) - 3)
            t = t.replace("...", ell[ell_rank - n:] if n else "")
        if len(t) != len(s):
            raise ValueError(f"einsum '{equation}': term '{t}' does not match rank {len(s)}")
        for c, d in zip(t, s):
            sizes[c] = max(sizes.get(c, 1), d)
        expanded.append(t)
    if arrow:
        out = rhs.replace("...", ell)
    else:
        counts: dict[str, int] = {}
        for t in expanded:
            for c in t:
                counts[c] = counts.get(c, 0) + 1
        out = ell + "".join(sorted(c for c, v in counts.items() if v == 1 and c not in ell))
    return expanded, out, sizes


def _bmm_layout_ok(term: str, batch: str, first: str, second: str) -> bool:
    """``term`` == batch + first + second or batch + second + first (letter sets per group)."""
    nb = len(batch)
    if term[:nb] != batch:
        return False
    rest = term[nb:]
    a, b = rest[:len(first)], rest[len(first):]
    if set(a) == set(first) and set(b) == set(second):
        return True
    a, b = rest[:len(second)], rest[len(second):]
    return set(a) == set(second) and set(b) == set(first)


def einsum_pair(a: str, b: str, keep: str, sizes: dict[str, int],
                target: str | None = None) -> tuple[float, float, int, str, tuple[int, int, int, int] | None]:
    """One pairwise step: (matmul_flops, vector_flops, copy_kernels, result term, bmm dims or None).

    ``keep``: indices needed after this step (by later operands or the output); ``target``: the
    required index order of the result (the final output), or None for an intermediate.
    """
    flops_vec = 0.0
    # an index summed away that only one operand has is reduced first (1 add per element)
    for t, other in ((a, b), (b, a)):
        if set(t) - set(other) - set(keep):
            flops_vec += prod(sizes[c] for c in set(t))
    a_r = "".join(c for c in dict.fromkeys(a) if c in b or c in keep)
    b_r = "".join(c for c in dict.fromkeys(b) if c in a or c in keep)
    union = "".join(dict.fromkeys(a_r + b_r))
    contracted = set(a_r) & set(b_r) - set(keep)
    out = target if target is not None else "".join(c for c in union if c in keep)
    space = prod(sizes[c] for c in union)
    if not contracted:
        return 0.0, flops_vec + space, 0, out, None
    batch = "".join(c for c in out if c in a_r and c in b_r)
    free_a = "".join(c for c in a_r if c not in b_r)
    free_b = "".join(c for c in b_r if c not in a_r)
    summed = "".join(c for c in a_r if c in contracted)
    copies = 0
    if not _bmm_layout_ok(a_r, batch, free_a, summed):
        copies += 1
    if not _bmm_layout_ok(b_r, batch, summed, free_b):
        copies += 1
    if out != batch + free_a + free_b and out != batch + free_b + free_a:
        copies += 1
    gemm = (prod(sizes[c] for c in batch), prod(sizes[c] for c in free_a), prod(sizes[c] for c in free_b),
            prod(sizes[c] for c in summed))
    return 2.0 * space, flops_vec, copies, out, gemm


@register("Einsum", cls="gemm", autocast="low")
def einsum(ctx: OpContext) -> OpWork:
    """Einsum: pairwise left-to-right contraction (torch.einsum without opt_einsum).

    Two operands with a summed index: one bmm (MATMUL 2 * prod(all index sizes)) plus one copy
    kernel per operand/output whose index order bmm cannot take as a view (rule in the module doc);
    ``gemm`` = (prod batch, prod free of A, prod free of B, prod summed) when there is one bmm.
    One operand: a permutation is one copy kernel (like Transpose); a sum or diagonal is one VECTOR
    reduction kernel (1 FLOP per input element). Copies are counted as kernels; their bytes are not.
    NB: with opt_einsum installed torch may pick another contraction order for 3+ operands.
    """
    eq = str_attr(ctx, "equation", "")
    shapes = [ctx.in_shape(i) for i in range(ctx.n_inputs)]
    terms, out, sizes = parse_einsum(eq, shapes)
    if len(terms) == 1:
        t = terms[0]
        if len(set(t)) == len(t) and set(t) == set(out):
            if t == out:
                return ctx.free_view()
            return ctx.work()  # pure permutation: one copy kernel, 0 FLOPs
        return ctx.work(vector_flops=prod(sizes[c] for c in set(t)))
    mm, vec, kernels = 0.0, 0.0, 0
    gemms = []
    cur = terms[0]
    for j in range(1, len(terms)):
        last = j == len(terms) - 1
        keep = "".join(dict.fromkeys(out + "".join(terms[j + 1:])))
        m, v, copies, cur, gemm = einsum_pair(cur, terms[j], keep, sizes, out if last else None)
        mm += m
        vec += v
        kernels += 1 + copies
        if gemm is not None:
            gemms.append(gemm)
    if len(gemms) == 1:
        return ctx.work(matmul_flops=mm, vector_flops=vec, kernels=kernels, gemm=gemms[0],
                        gemm_operand_bytes=ctx.all_in_bytes())
    return ctx.work(matmul_flops=mm, vector_flops=vec, kernels=kernels)
