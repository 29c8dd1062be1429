"""Normalisation backward (reduce + apply passes) and the training-mode batch-norm forward."""
import numpy as np
from onnx import helper

from predictor.types import WorkKind
from tests.train.util import graph_of, kernels_of, plan, rng_w

VEC = WorkKind.VECTOR


def conv_bn():
    c = 4
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv"),
             helper.make_node("BatchNormalization", ["c", "s", "b", "m", "v"], ["y"], name="bn")]
    inits = {"w": rng_w(c, 3, 1, 1), "s": np.ones(c, np.float32), "b": np.zeros(c, np.float32),
             "m": np.zeros(c, np.float32), "v": np.ones(c, np.float32)}
    return graph_of(nodes, [("x", "float32", [2, 3, 5, 5])], [("y", "float32", None)], inits)


def test_batch_norm_reduce_and_apply():
    p = plan(conv_bn())
    k = kernels_of(p, "bn")
    assert list(k) == ["reduce", "apply"]
    n = 2 * 4 * 25  # 200 elements of X
    x = n * 4
    assert k["reduce"].work.flops == {VEC: 4 * n} and k["apply"].work.flops == {VEC: 5 * n}
    # reduce reads dY, X and the batch statistics (C floats each); writes dscale, dbias
    assert k["reduce"].work.bytes_read == 2 * x + 2 * 4 * 4 and k["reduce"].work.bytes_written == 2 * 4 * 4
    assert [t.name for t in k["apply"].writes] == ["grad::c"]
    assert set(p.autograd.params) == {"w", "s", "b"}  # running mean / var are buffers
    assert [t.name for t in p.internals["bn"]] == ["bn::save_mean", "bn::save_invstd"]


def test_batch_norm_backward_kernels_are_class_norm():
    """The backward's reduce and apply kernels are class norm (marked, keyed BatchNormalization:backward), not the
    inference transform kernel's batchnorm; the training forward is norm_train."""
    from predictor.graph.opclass import hidden_key, kernel_class

    p = plan(conv_bn())
    k = kernels_of(p, "bn")
    for kind in ("reduce", "apply"):
        assert hidden_key(k[kind].node()) == "BatchNormalization:backward"
        assert kernel_class(k[kind].node()) == "norm"
    bn = next(n for n, _w, _ in p.forward if n.name == "bn")
    assert kernel_class(bn) == "norm_train"


def test_training_mode_forward_of_batch_norm():
    p = plan(conv_bn())
    bn = next(w for n, w, _ in p.forward if n.name == "bn")
    assert "training mode: batch statistics" in bn.notes
    assert bn.flops[VEC] == 6 * 200 and bn.input_bytes["c"] == 2 * 800  # X read twice
    assert [k.name for k in p.forward_extra["bn"]] == ["bn::num_batches_tracked"]


def test_layer_norm_apply_then_reduce():
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"], name="lin"),
             helper.make_node("LayerNormalization", ["h", "s", "b"], ["y"], axis=-1, name="ln")]
    g = graph_of(nodes, [("x", "float32", [2, 3, 8])], [("y", "float32", None)],
                 {"w": rng_w(8, 8), "s": np.ones(8, np.float32), "b": np.zeros(8, np.float32)}, opset=17)
    p = plan(g)
    k = kernels_of(p, "ln")
    assert list(k) == ["apply", "reduce"]
    assert k["apply"].work.flops == {VEC: 8 * 48} and k["reduce"].work.flops == {VEC: 4 * 48}
    assert [t.shape for t in p.internals["ln"]] == [(2, 3), (2, 3)]  # mean and rstd per row
    assert [t.name for t in k["reduce"].writes] == ["grad::s", "grad::b"]
