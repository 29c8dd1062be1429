"""MatMul / Gemm backward: two GEMMs, skipped for operands without gradients, bias reductions."""
from onnx import helper

from predictor.types import WorkKind
from tests.train.util import graph_of, kernels_of, plan, rng_w

MM = WorkKind.MATMUL


def test_linear_on_a_sequence_two_gemms():
    # h [4, 16, 32] (from a first linear, so it needs a gradient) @ W [32, 64]: one mm forward (64 x 64 x 32)
    nodes = [helper.make_node("MatMul", ["x", "w0"], ["h"], name="mm0"),
             helper.make_node("MatMul", ["h", "w"], ["y"], name="mm")]
    g = graph_of(nodes, [("x", "float32", [4, 16, 8])], [("y", "float32", None)],
                 {"w0": rng_w(8, 32), "w": rng_w(32, 64)})
    p = plan(g)
    k = kernels_of(p, "mm")
    flops = 2 * 64 * 64 * 32  # 262144
    assert k["dA"].work.gemm == (1, 64, 32, 64) and k["dA"].work.flops[MM] == flops
    assert k["dB"].work.gemm == (1, 32, 64, 64) and k["dB"].work.flops[MM] == flops
    assert [t.name for t in k["dA"].reads] == ["grad::y", "w"] and [t.name for t in k["dA"].writes] == ["grad::h"]
    assert [t.name for t in k["dB"].reads] == ["h", "grad::y"] and [t.name for t in k["dB"].writes] == ["grad::w"]
    assert k["dA"].work.bytes_read == 4 * 16 * 64 * 4 + 32 * 64 * 4  # dY + W
    assert set(kernels_of(p, "mm0")) == {"dB"}  # x is an input: no dA


def test_batched_matmul_of_activations():
    # attention-like: a [2, 3, 5, 4] @ b [2, 3, 4, 6], both from linears of the input
    nodes = [helper.make_node("MatMul", ["x", "wa"], ["a"], name="la"),
             helper.make_node("MatMul", ["xt", "wb"], ["b"], name="lb"),
             helper.make_node("MatMul", ["a", "b"], ["y"], name="bmm")]
    g = graph_of(nodes, [("x", "float32", [2, 3, 5, 7]), ("xt", "float32", [2, 3, 4, 7])], [("y", "float32", None)],
                 {"wa": rng_w(7, 4), "wb": rng_w(7, 6)})
    k = kernels_of(plan(g), "bmm")
    assert k["dA"].work.gemm == (6, 5, 4, 6) and k["dB"].work.gemm == (6, 4, 6, 5)
    assert k["dA"].work.flops[MM] == k["dB"].work.flops[MM] == 2 * 6 * 5 * 6 * 4


def test_gemm_with_bias():
    nodes = [helper.make_node("Gemm", ["x", "w", "b"], ["y"], transB=1, name="fc")]
    g = graph_of(nodes, [("x", "float32", [8, 16])], [("y", "float32", None)], {"w": rng_w(4, 16), "b": rng_w(4)})
    k = kernels_of(plan(g), "fc")
    assert set(k) == {"dB", "bgrad"}
    assert k["dB"].work.gemm == (1, 16, 4, 8) and k["dB"].work.flops[MM] == 2 * 8 * 4 * 16
    assert k["bgrad"].op_type == "ReduceSum" and k["bgrad"].work.bytes_read == 8 * 4 * 4


def test_linear_bias_folded_by_the_runtime_gets_its_bias_gradient():
    # MatMul + Add(1-D constant) is one addmm in eager: dA, dB and the bias reduction
    nodes = [helper.make_node("MatMul", ["x", "w0"], ["h"], name="mm0"),
             helper.make_node("MatMul", ["h", "w"], ["z"], name="mm"),
             helper.make_node("Add", ["z", "b"], ["y"], name="bias")]
    g = graph_of(nodes, [("x", "float32", [8, 6])], [("y", "float32", None)],
                 {"w0": rng_w(6, 16), "w": rng_w(16, 4), "b": rng_w(4)})
    p = plan(g)
    assert set(kernels_of(p, "mm")) == {"dA", "dB", "bgrad"}
    assert not kernels_of(p, "bias")  # absorbed into the GEMM
    assert "b" in p.autograd.params
