"""Elementwise backward: activations, Add pass-through and broadcast reductions, Mul, accumulation."""
import numpy as np
from onnx import helper

from predictor.types import WorkKind
from tests.train.util import graph_of, kernels_of, plan, rng_w

VEC = WorkKind.VECTOR


def _after_linear(op_nodes, out="y", extra_inits=None, shape=(4, 8)):
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"], name="lin")] + op_nodes
    inits = {"w": rng_w(shape[1], shape[1]), **(extra_inits or {})}
    return graph_of(nodes, [("x", "float32", list(shape))], [(out, "float32", None)], inits)


def test_relu_reads_its_output():
    p = plan(_after_linear([helper.make_node("Relu", ["h"], ["y"], name="relu")]))
    k = kernels_of(p, "relu")["bwd"]
    assert [t.name for t in k.reads] == ["grad::y", "y"] and [t.name for t in k.writes] == ["grad::h"]
    assert k.work.bytes_read == 2 * 32 * 4 and k.work.bytes_written == 32 * 4 and k.work.flops == {VEC: 32}
    assert [t.name for t in k.keeps] == ["y"]


def test_sigmoid_gelu_and_neg():
    p = plan(_after_linear([helper.make_node("Sigmoid", ["h"], ["s"], name="sig"),
                            helper.make_node("Neg", ["s"], ["y"], name="neg")]))
    assert kernels_of(p, "sig")["bwd"].work.flops == {VEC: 3 * 32}
    assert [t.name for t in kernels_of(p, "neg")["bwd"].reads] == ["grad::y"]


def test_add_passes_the_gradient_and_reduces_a_broadcast_operand():
    # relu(h) [4, 8] + a bias parameter [8]: r gets dY itself, the bias a sum_to_size reduction
    p = plan(_after_linear([helper.make_node("Relu", ["h"], ["r"], name="relu"),
                            helper.make_node("Add", ["r", "bias"], ["y"], name="add")],
                           extra_inits={"bias": np.zeros(8, np.float32)}))
    ks = kernels_of(p, "add")
    assert set(ks) == {"d1"} and ks["d1"].op_type == "ReduceSum"
    assert [t.name for t in ks["d1"].writes] == ["grad::bias"] and ks["d1"].work.bytes_read == 32 * 4
    assert p.grad_alias["grad::r"] == "grad::y"  # no kernel, no buffer: the output gradient itself


def test_mul_by_a_constant_and_accumulation_of_a_residual():
    # y = h * 0.5 + h: h gets two gradients -> one accumulation kernel (Add) reading both
    nodes = [helper.make_node("Mul", ["h", "half"], ["m"], name="mul"),
             helper.make_node("Add", ["m", "h"], ["y"], name="res")]
    p = plan(_after_linear(nodes, extra_inits={"half": np.array(0.5, np.float32)}))
    # the scalar constant needs no gradient; h's second gradient arrives at the Mul's backward
    assert set(kernels_of(p, "mul")) == {"d0", "accumulate"}
    acc = [k for k in p.backward if k.kind == "accumulate"]
    assert len(acc) == 1 and acc[0].op_type == "Add"
    # the first gradient was dY itself (the Add's pass-through): added out of place into h's own buffer
    assert [t.name for t in acc[0].reads] == ["grad::y", "grad::h#1"] and [t.name for t in acc[0].writes] == ["grad::h"]
    assert "grad::h" not in p.grad_alias
    assert acc[0].work.bytes_read == 2 * 32 * 4 and acc[0].work.bytes_written == 32 * 4
    assert p.autograd.contributions["h"] == 2


def test_training_dropout_writes_a_mask_and_reads_it_back():
    nodes = [helper.make_node("Dropout", ["h", "ratio"], ["y"], name="drop")]
    p = plan(_after_linear(nodes, extra_inits={"ratio": np.array(0.1, np.float32)}))
    fwd = next(w for n, w, _ in p.forward if n.name == "drop")
    assert fwd.kernels == 1 and fwd.bytes_written == 32 * 4 + 32  # output + one byte of mask per element
    k = kernels_of(p, "drop")["bwd"]
    assert [t.name for t in k.reads] == ["grad::y", "drop::mask"] and k.work.bytes_read == 32 * 4 + 32


def test_a_tensor_read_twice_gets_two_gradients_and_one_accumulation():
    p = plan(_after_linear([helper.make_node("Mul", ["h", "h"], ["y"], name="square")]))
    ks = [k for k in p.backward if k.source == "square"]
    assert [k.kind for k in ks] == ["d0", "d1", "accumulate"]
    assert [t.name for t in ks[1].writes] == ["grad::h#slot1"]
    assert [t.name for t in ks[2].reads] == ["grad::h", "grad::h#slot1"]
