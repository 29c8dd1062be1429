"""Elementwise ops: the per-element FLOP table, broadcasting bytes, variadic ops, Cast, folded constants."""
import numpy as np
import pytest

from predictor.graph.ops.elementwise import ELEMENTWISE_FLOPS, elementwise
from predictor.graph.registry import lookup
from predictor.types import WorkKind
from tests.helpers import one_node

VEC = WorkKind.VECTOR
X = ("x", "float32", (2, 3, 4))  # 24 elements, 96 bytes


@pytest.mark.parametrize("op, per, opset", [
    ("Relu", 1, 17), ("Neg", 1, 17), ("Sqrt", 1, 17), ("Exp", 4, 17), ("Log", 4, 17), ("Tanh", 4, 17),
    ("Erf", 4, 17), ("Sigmoid", 6, 17), ("LeakyRelu", 2, 17), ("HardSigmoid", 4, 17), ("HardSwish", 5, 17),
    ("Elu", 7, 17), ("Selu", 8, 17), ("Celu", 8, 17), ("Softplus", 9, 17), ("Softsign", 3, 17),
    ("Mish", 14, 18), ("Sin", 4, 17), ("Floor", 1, 17), ("ThresholdedRelu", 1, 17), ("Shrink", 3, 17),
    ("Gelu", 8, 20), ("Swish", 8, 24),
])
def test_unary(op, per, opset):
    work = one_node(op, [X], [("y", "float32", None)], opset=opset).work
    assert work.flops == {VEC: per * 24}
    assert work.kernels == 1
    assert work.bytes_read == 96 and work.bytes_written == 96


def test_gelu_tanh_approximation():
    work = one_node("Gelu", [X], [("y", "float32", None)], attrs=dict(approximate="tanh"), opset=20).work
    assert work.flops == {VEC: 12 * 24}  # 288


def test_binary_broadcast_reads_each_input_at_its_own_size():
    work = one_node("Add", [("a", "float32", (8, 16, 32)), ("b", "float32", (32,))], [("y", "float32", None)]).work
    assert work.flops == {VEC: 4096}
    assert work.bytes_read == 4096 * 4 + 32 * 4  # 16384 + 128 = 16512
    assert work.bytes_written == 16384


def test_fp16_halves_float_bytes_not_bool():
    # Where(cond bool [4,1], x [4,5], y [1,5]) -> [4,5]
    ins = [("c", "bool", (4, 1)), ("x", "float32", (4, 5)), ("y", "float32", (1, 5))]
    w32 = one_node("Where", ins, [("z", "float32", None)]).work
    w16 = one_node("Where", ins, [("z", "float32", None)], precision="fp16").work
    assert w32.flops == {VEC: 20}
    assert w32.bytes_read == 4 + 80 + 20  # 104
    assert w16.bytes_read == 4 + 40 + 10  # 54: bool stays 1 byte
    assert w16.bytes_written == 40


def test_comparison_writes_bool():
    work = one_node("Equal", [("a", "float32", (10,)), ("b", "float32", (10,))], [("y", "bool", None)]).work
    assert work.bytes_read == 80 and work.bytes_written == 10


def test_clip_and_prelu():
    clip = one_node("Clip", [X, ("lo", "float32", ()), ("hi", "float32", ())], [("y", "float32", None)],
                    initializers={"lo": np.float32(0), "hi": np.float32(6)}, opset=13).work
    assert clip.flops == {VEC: 48}  # min + max per element
    assert clip.bytes_read == 96 + 8
    prelu = one_node("PRelu", [("x", "float32", (1, 3, 4, 4)), ("s", "float32", (3, 1, 1))],
                     [("y", "float32", None)]).work
    assert prelu.flops == {VEC: 2 * 48}


@pytest.mark.parametrize("op, n, flops, kernels", [
    ("Sum", 3, 2 * 24, 2),  # (a + b) + c
    ("Max", 2, 24, 1),
    ("Mean", 2, 24 + 24, 2),  # add, then divide
    ("Sum", 1, 0, 0),  # identity
])
def test_variadic(op, n, flops, kernels):
    ins = [(f"x{i}", "float32", (2, 3, 4)) for i in range(n)]
    work = one_node(op, ins, [("y", "float32", None)]).work
    assert work.flops.get(VEC, 0) == flops
    assert work.kernels == kernels


def test_sum_of_three_counts_the_intermediate():
    work = one_node("Sum", [(f"x{i}", "float32", (2, 3, 4)) for i in range(3)], [("y", "float32", None)]).work
    assert work.bytes_read == 3 * 96 + 96  # three inputs + the intermediate (a + b) read back = 384
    assert work.bytes_written == 2 * 96  # intermediate + output = 192


def test_cast_int_to_float_is_a_kernel():
    work = one_node("Cast", [("x", "int64", (10,))], [("y", "float32", None)], attrs=dict(to=1)).work
    assert work.kernels == 1 and not work.flops
    assert work.bytes_read == 80 and work.bytes_written == 40


def test_cast_float_to_float_is_free_under_the_policy():
    work = one_node("Cast", [("x", "float32", (10,))], [("y", "float16", None)], attrs=dict(to=10)).work
    assert work.kernels == 0 and work.bytes_read == 0


def test_castlike_does_not_read_its_type_source():
    work = one_node("CastLike", [("x", "int32", (10,)), ("t", "float32", (1000,))], [("y", "float32", None)],
                    opset=15).work
    assert work.bytes_read == 40 and work.bytes_written == 40
    assert work.input_bytes["t"] == 0


def test_folded_shape_arithmetic_is_free():
    # Mul of two int64 constants: shape arithmetic PyTorch does on Python ints
    work = one_node("Mul", [("a", "int64", (1,)), ("b", "int64", (1,))], [("y", "int64", None)],
                    initializers={"a": np.array([4]), "b": np.array([8])}).work
    assert work.kernels == 0 and work.bytes_read == 0


def test_quantize_dequantize():
    inits = {"s": np.float32(0.1), "z": np.uint8(0)}
    q = one_node("QuantizeLinear", [X, ("s", "float32", ()), ("z", "uint8", ())], [("y", "uint8", None)],
                 initializers=inits, opset=13).work
    assert q.flops == {VEC: 5 * 24}
    assert q.bytes_written == 24


def test_factory_and_table():
    f = elementwise(3)
    assert f.flops_per_output_element == 3
    for op in ELEMENTWISE_FLOPS:
        assert lookup(op) is not None
