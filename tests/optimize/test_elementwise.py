"""elementwise: pointwise trees (+ one norm/softmax/reduction) -> one kernel reading inputs once."""
import time

import numpy as np
from onnx import helper

from predictor.graph.fused import FUSED_ELEMENTWISE, FUSED_NORM, FUSED_REDUCTION, FUSED_SOFTMAX, MEMBERS
from predictor.optimize import apply_passes
from predictor.optimize.elementwise import MAX_FUSION_SIZE
from predictor.types import WorkKind
from tests.optimize import costs, flops, fused, kernels, load

F = "float32"


def test_chain_reads_inputs_once_and_writes_the_output_once():
    nodes = [helper.make_node("Mul", ["x", "c"], ["a"], name="mul"),
             helper.make_node("Add", ["a", "y"], ["b"], name="add"),
             helper.make_node("Relu", ["b"], ["z"], name="relu")]
    g = load(nodes, [("x", F, [4, 8]), ("y", F, [4, 8]), ("c", F, [])], [("z", F, None)],
             {"c": np.array(2.0, np.float32)})
    before = costs(g)
    assert kernels(before) == 3
    # eager: mul reads x + c (64 + 2 B), add reads a + y (128 B), relu reads b (64 B); each writes 64 B
    assert sum(c.work.bytes_read for c in before.values()) == 258
    after_g = apply_passes(g, "elementwise")
    (node,) = fused(after_g)
    assert node.op_type == FUSED_ELEMENTWISE and node.name == "relu" and node.attrs[MEMBERS] == ("mul", "add", "relu")
    c = costs(after_g)["relu"]
    assert c.kernels == 1 and c.work.bytes_read == 64 + 64 + 2 and c.work.bytes_written == 64
    assert c.work.flops[WorkKind.VECTOR] == 96 == flops(before)  # 3 x 32 FLOPs kept


def test_residual_add_is_a_layernorm_prologue_and_is_written_for_its_later_reader():
    nodes = [helper.make_node("Add", ["x", "y"], ["h"], name="add"),
             helper.make_node("LayerNormalization", ["h", "g", "b"], ["n"], axis=-1, name="ln"),
             helper.make_node("MatMul", ["n", "w"], ["m"], name="mm"),
             helper.make_node("Add", ["m", "h"], ["o"], name="residual")]
    inits = {"g": np.ones(16, np.float32), "b": np.zeros(16, np.float32), "w": np.ones((16, 16), np.float32)}
    g = load(nodes, [("x", F, [8, 16]), ("y", F, [8, 16]), ("g", F, [16]), ("b", F, [16]), ("w", F, [16, 16])],
             [("o", F, None)], inits)
    assert kernels(costs(g)) == 4
    after_g = apply_passes(g, "elementwise")
    (node,) = fused(after_g)
    assert node.op_type == FUSED_NORM and node.attrs[MEMBERS] == ("add", "ln")
    assert [t.name for t in node.outputs] == ["h", "n"]  # h is read again by the residual add
    after = costs(after_g)
    assert kernels(after) == 3 and after["residual"].kernels == 1
    # reads x and y (128 elements each) + gamma and beta (16 each) at 2 B: 576 B; writes h and n: 512 B
    assert after["ln"].work.bytes_read == 576 and after["ln"].work.bytes_written == 512
    assert flops(after) == flops(costs(g))
    assert [n.name for n in after_g.nodes] == ["ln", "mm", "residual"]


def test_softmax_with_nan_guard_epilogue():
    nodes = [helper.make_node("Softmax", ["x"], ["s"], axis=-1, name="sm"),
             helper.make_node("IsNaN", ["s"], ["i"], name="isnan"),
             helper.make_node("Where", ["i", "zero", "s"], ["z"], name="guard")]
    g = load(nodes, [("x", F, [2, 4, 16]), ("zero", F, [])], [("z", F, None)], {"zero": np.array(0, np.float32)})
    assert kernels(costs(g)) == 3
    after_g = apply_passes(g, "elementwise")
    (node,) = fused(after_g)
    assert node.op_type == FUSED_SOFTMAX and kernels(costs(after_g)) == 1
    assert flops(costs(after_g)) == flops(costs(g))  # 8 * 128 + 128 + 128


def test_reduction_with_activation_prologue():
    nodes = [helper.make_node("Sigmoid", ["x"], ["s"], name="sig"),
             helper.make_node("Mul", ["x", "s"], ["a"], name="silu"),
             helper.make_node("GlobalAveragePool", ["a"], ["p"], name="gap"),
             helper.make_node("Mul", ["a", "p"], ["z"], name="scale")]
    g = load(nodes, [("x", F, [2, 4, 8, 8])], [("z", F, None)])
    assert kernels(costs(g)) == 3  # SiLU is one eager kernel; pool; scale
    after_g = apply_passes(g, "elementwise")
    ops = sorted(n.op_type for n in fused(after_g))
    # the pooled scale needs the whole mean first: its consumer of the prologue tensor stays a kernel of its own
    assert ops == [FUSED_REDUCTION] and kernels(costs(after_g)) == 2
    red = next(n for n in fused(after_g))
    assert [t.name for t in red.outputs] == ["a", "p"]


def test_conv_bias_moves_into_the_following_pointwise_kernel():
    w = np.ones((4, 3, 3, 3), np.float32)
    nodes = [helper.make_node("Conv", ["x", "w", "cb"], ["y"], pads=[1, 1, 1, 1], name="conv"),
             helper.make_node("Relu", ["y"], ["z"], name="relu")]
    g = load(nodes, [("x", F, [1, 3, 8, 8]), ("w", F, [4, 3, 3, 3]), ("cb", F, [4])], [("z", F, None)],
             {"w": w, "cb": np.zeros(4, np.float32)})
    before = costs(g)
    assert kernels(before) == 3  # convolution, its bias kernel, relu
    after_g = apply_passes(g, "elementwise")
    after = costs(after_g)
    assert kernels(after) == 2 and after["conv"].kernels == 1
    (node,) = fused(after_g)
    assert node.attrs[MEMBERS] == ("conv::bias", "relu")
    # the pointwise kernel reads the raw convolution (512 B) and the bias (8 B), writes z (512 B)
    assert after["relu"].work.bytes_read == 520 and after["relu"].work.bytes_written == 512
    assert flops(after) == flops(before)  # 13824 + 256 bias + 256 relu


def test_no_fusion_through_a_kernel_that_reads_an_intermediate_first():
    # a = relu(x) feeds a MatMul that feeds the Add: fusing relu with the Add would form a cycle
    nodes = [helper.make_node("Relu", ["x"], ["a"], name="relu"),
             helper.make_node("MatMul", ["a", "w"], ["m"], name="mm"),
             helper.make_node("Add", ["a", "m"], ["z"], name="add")]
    g = load(nodes, [("x", F, [8, 8]), ("w", F, [8, 8])], [("z", F, None)], {"w": np.ones((8, 8), np.float32)})
    assert apply_passes(g, "elementwise") is g


def test_constant_arithmetic_is_not_fused():
    nodes = [helper.make_node("Mul", ["c", "d"], ["k"], name="const_mul"),
             helper.make_node("Add", ["x", "k"], ["z"], name="add")]
    g = load(nodes, [("x", F, [4]), ("c", F, [4]), ("d", F, [4])], [("z", F, None)],
             {"c": np.ones(4, np.float32), "d": np.ones(4, np.float32)})
    assert apply_passes(g, "elementwise") is g


def test_transpose_joins_the_pointwise_kernel():
    nodes = [helper.make_node("Transpose", ["x"], ["t"], perm=[1, 0], name="tr"),
             helper.make_node("Relu", ["t"], ["z"], name="relu")]
    g = load(nodes, [("x", F, [4, 8])], [("z", F, None)])
    assert kernels(costs(g)) == 2 and kernels(costs(apply_passes(g, "elementwise"))) == 1


def test_long_chains_are_cut_at_max_fusion_size_in_linear_time():
    n = 1000
    nodes = [helper.make_node("Relu", ["x" if i == 0 else f"t{i - 1}"], [f"t{i}"], name=f"r{i}") for i in range(n)]
    g = load(nodes, [("x", F, [64])], [(f"t{n - 1}", F, None)])
    t0 = time.perf_counter()
    after_g = apply_passes(g, "elementwise")
    assert time.perf_counter() - t0 < 2.0
    sizes = [len(node.attrs[MEMBERS]) for node in fused(after_g)]
    assert max(sizes) == MAX_FUSION_SIZE and sum(sizes) == n and len(after_g.nodes) == -(-n // MAX_FUSION_SIZE)
