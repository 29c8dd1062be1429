"""MatMul, Gemm, Einsum, MatMulInteger, QLinearMatMul."""
import numpy as np
import pytest

from predictor.graph.ops.matmul import parse_einsum
from predictor.types import WorkKind
from tests.helpers import one_node

MM, VEC = WorkKind.MATMUL, WorkKind.VECTOR


def matmul(a, b, out, precision="fp32"):
    return one_node("MatMul", [("a", "float32", a), ("b", "float32", b)], [("y", "float32", None)],
                    precision=precision).work


@pytest.mark.parametrize("a, b, out, flops, gemm", [
    ((64, 128), (128, 32), (64, 32), 2 * 64 * 32 * 128, (1, 64, 32, 128)),  # 524288
    # N-D @ 2-D folds into one mm: M = 2*3*4 = 24; 2 * 144 * 5 = 1440
    ((2, 3, 4, 5), (5, 6), (2, 3, 4, 6), 1440, (1, 24, 6, 5)),
    # attention scores: 2 * 8*12*64*64 * 32 = 25165824
    ((8, 12, 64, 32), (8, 12, 32, 64), (8, 12, 64, 64), 25165824, (96, 64, 64, 32)),
    # 1-D operands: (5,)@(5,6) -> (6,): 2*6*5 = 60; (3,4,5)@(5,) -> (3,4): 2*12*5 = 120; dot: 2*5 = 10
    ((5,), (5, 6), (6,), 60, (1, 1, 6, 5)),
    ((3, 4, 5), (5,), (3, 4), 120, (1, 12, 1, 5)),
    ((5,), (5,), (), 10, (1, 1, 1, 5)),
    # 2-D @ 3-D: the 2-D operand broadcasts with a stride-0 batch, no copy: 2 * 4*3*6 * 5 = 720
    ((3, 5), (4, 5, 6), (4, 3, 6), 720, (4, 3, 6, 5)),
])
def test_matmul_flops(a, b, out, flops, gemm):
    work = matmul(a, b, out)
    assert work.flops == {MM: flops}
    assert work.kernels == 1
    assert work.gemm == gemm
    assert work.bytes_read == 4 * (int(np.prod(a)) + int(np.prod(b)))
    assert work.bytes_written == 4 * int(np.prod(out))


def test_matmul_weight_bytes_are_its_initializer_operands():
    def mm(a, b, weight):
        inits = {"b": np.zeros(b, np.float32)} if weight else None
        return one_node("MatMul", [("a", "float32", a), ("b", "float32", b)], [("y", "float32", None)],
                        initializers=inits).work

    assert mm((2, 3, 4, 5), (5, 6), True).weight_bytes == 5 * 6 * 4  # nn.Linear on N-D activations: 120
    assert mm((2, 3, 4, 5), (5, 6), False).weight_bytes == 0  # same shapes, B an activation
    assert mm((8, 12, 64, 32), (8, 12, 32, 64), False).weight_bytes == 0  # attention
    assert mm((4, 3, 5), (4, 5, 6), True).weight_bytes == 4 * 5 * 6 * 4  # a batched weight counts too: 480


def test_matmul_of_two_initializers_is_folded():
    work = one_node("MatMul", [("a", "float32", (4, 5)), ("b", "float32", (5, 6))], [("y", "float32", None)],
                    initializers={"a": np.ones((4, 5), np.float32), "b": np.ones((5, 6), np.float32)}).work
    assert work.kernels == 0 and work.bytes_read == 0 and not work.flops


def test_matmul_mixed_broadcast_copies_the_expanded_operand():
    # B batch (2, 1) against (2, 3): one dim broadcast, one not -> torch.matmul materialises B
    work = matmul((2, 3, 4, 5), (2, 1, 5, 6), (2, 3, 4, 6))
    expanded = 2 * 3 * 5 * 6 * 4  # 720 bytes
    assert work.kernels == 2
    assert work.flops[MM] == 2 * 144 * 5  # 1440
    assert work.bytes_read == 480 + 240 + expanded  # A + B (copy) + expanded B (bmm) = 1440
    assert work.bytes_written == 576 + expanded  # Y + the copy = 1296
    assert work.gemm == (6, 4, 6, 5)
    assert work.gemm_operand_bytes == 480 + expanded


def test_matmul_full_broadcast_is_a_view():
    # B batch (1,) against (4,): every batch dim broadcast -> stride-0 bmm, no copy
    assert matmul((4, 3, 5), (1, 5, 6), (4, 3, 6)).kernels == 1


def test_matmul_fp16_halves_bytes():
    assert matmul((64, 128), (128, 32), None, "fp16").bytes_read == (64 * 128 + 128 * 32) * 2  # 24576


def test_gemm_transb_with_bias_is_one_kernel():
    # nn.Linear(256, 128) on 32 rows: A 32x256, B 128x256 (transB), C [128]
    work = one_node("Gemm", [("a", "float32", (32, 256)), ("b", "float32", (128, 256)), ("c", "float32", (128,))],
                    [("y", "float32", None)], attrs=dict(transB=1),
                    initializers={"b": np.zeros((128, 256), np.float32), "c": np.zeros(128, np.float32)}).work
    assert work.flops == {MM: 2 * 32 * 128 * 256, VEC: 32 * 128}  # 2097152 and 4096 bias adds
    assert work.kernels == 1
    assert work.gemm == (1, 32, 128, 256)
    assert work.weight_bytes == 128 * 256 * 4 + 128 * 4  # 131072 + 512 = 131584
    assert work.bytes_read == 32 * 256 * 4 + 131584  # 32768 + 131584 = 164352
    assert work.bytes_written == 32 * 128 * 4  # 16384


def test_gemm_full_c_alpha_beta_is_copy_plus_gemm():
    work = one_node("Gemm", [("a", "float32", (256, 32)), ("b", "float32", (256, 128)), ("c", "float32", (32, 128))],
                    [("y", "float32", None)], attrs=dict(transA=1, alpha=0.5, beta=2.0)).work
    mn = 32 * 128  # 4096
    assert work.flops == {MM: 2 * 32 * 128 * 256, VEC: 3 * mn}  # alpha, C add, beta: 12288
    assert work.kernels == 2
    assert work.bytes_read == (256 * 32 + 256 * 128 + 32 * 128) * 4 + mn * 4  # A + B + C + Y reread = 180224
    assert work.bytes_written == 2 * mn * 4  # 32768


def test_gemm_without_c():
    work = one_node("Gemm", [("a", "float32", (16, 64)), ("b", "float32", (64, 8))], [("y", "float32", None)]).work
    assert work.flops == {MM: 2 * 16 * 8 * 64}  # 16384
    assert work.kernels == 1


def einsum(eq, shapes, precision="fp32"):
    ins = [(f"x{i}", "float32", s) for i, s in enumerate(shapes)]
    return one_node("Einsum", ins, [("y", "float32", None)], attrs=dict(equation=eq), precision=precision).work


@pytest.mark.parametrize("eq, shapes, mm, vec, kernels", [
    # attention scores, bmm-ready layout: 2 * b2*h4*q8*k8*d16 = 16384, one bmm
    ("bhqd,bhkd->bhqk", [(2, 4, 8, 16), (2, 4, 8, 16)], 16384, 0, 1),
    # heads in the middle: both operands and nothing else need permute copies: 1 bmm + 2 copies
    ("bqhd,bkhd->bhqk", [(2, 8, 4, 16), (2, 8, 4, 16)], 16384, 0, 3),
    # chain, left to right: 2*3*4*5 (ij,jk) + 2*3*5*6 (ik,kl) = 120 + 180 = 300
    ("ij,jk,kl->il", [(3, 4), (4, 5), (5, 6)], 300, 0, 2),
    # ellipsis batch: 2 * 2*3*4*5 = 240; implicit output 'ik'
    ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)], 240, 0, 1),
    ("ij,jk", [(3, 4), (4, 5)], 120, 0, 1),
    # outer product and elementwise product: 1 multiply per element
    ("i,j->ij", [(3,), (4,)], 0, 12, 1),
    ("ij,ij->ij", [(3, 4), (3, 4)], 0, 12, 1),
    # single operand: a row sum (12 adds), a transpose (a copy, 0 FLOPs)
    ("ij->i", [(3, 4)], 0, 12, 1),
    ("ij->ji", [(3, 4)], 0, 0, 1),
])
def test_einsum(eq, shapes, mm, vec, kernels):
    work = einsum(eq, shapes)
    assert work.flops.get(MM, 0) == mm
    assert work.flops.get(VEC, 0) == vec
    assert work.kernels == kernels


def test_einsum_gemm_dims_and_identity():
    assert einsum("bhqd,bhkd->bhqk", [(2, 4, 8, 16), (2, 4, 8, 16)]).gemm == (8, 8, 8, 16)
    assert einsum("ij->ij", [(3, 4)]).kernels == 0


def test_parse_einsum_ellipsis_broadcast():
    terms, out, sizes = parse_einsum("...ij,jk->...ik", [(7, 1, 3, 4), (4, 5)])
    assert out == terms[0][:2] + "ik"
    assert sizes["i"] == 3 and sizes["k"] == 5


def test_matmul_integer_and_qlinear_matmul():
    work = one_node("MatMulInteger", [("a", "int8", (4, 16)), ("b", "int8", (16, 8))], [("y", "int32", None)]).work
    assert work.flops == {MM: 2 * 4 * 8 * 16}  # 1024
    assert work.bytes_read == 64 + 128 and work.bytes_written == 32 * 4
    inits = {"as": np.float32(0.1), "az": np.int8(0), "bs": np.float32(0.1), "bz": np.int8(0),
             "ys": np.float32(0.1), "yz": np.int8(0)}
    q = one_node("QLinearMatMul", [("a", "int8", (4, 16)), ("as", "float32", ()), ("az", "int8", ()),
                                   ("b", "int8", (16, 8)), ("bs", "float32", ()), ("bz", "int8", ()),
                                   ("ys", "float32", ()), ("yz", "int8", ())],
                 [("y", "int8", None)], initializers=inits).work
    assert q.flops == {MM: 1024, VEC: 3 * 32}


@pytest.mark.parametrize("a, b, weight, rows", [
    # CaiT's talking-heads mixing, 4 x 4 over 2 x 196 x 196 rows: ceil(76832 / 32) = 2401 tiles of one 32-deep step
    ((2, 196, 196, 4), (4, 4), True, 2401),
    # 3 -> 96 over 1000 rows: ceil(1000 / 32) = 32 row tiles x ceil(96 / 32) = 3 column tiles x 1 step = 96
    ((1000, 3), (3, 96), True, 96),
    # 96 -> 3: 32 row tiles x 1 column tile x ceil(96 / 32) = 3 K steps = 96
    ((1000, 96), (96, 3), True, 96),
    ((1000, 96), (96, 3), False, 0),      # B an activation: not a linear layer
    ((1000, 64), (64, 64), True, 0),      # neither K nor N below THIN_DIM
    ((1000, 4), (4, 256), True, 0),       # N above THIN_MAX_DIM: outside the measured range
    ((8, 1000, 4), (8, 4, 4), True, 0),   # a batched product (batch 8): other kernels
])
def test_thin_linear_tile_steps_are_rows(a, b, weight, rows):
    inits = {"b": np.zeros(b, np.float32)} if weight else None
    work = one_node("MatMul", [("a", "float32", a), ("b", "float32", b)], [("y", "float32", None)],
                    initializers=inits).work
    assert work.rows == rows
