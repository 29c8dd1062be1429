"""Which tensors need and receive gradients; parameters; fused groups' effective inputs and outputs."""
import numpy as np
from onnx import helper

from tests.train.util import graph_of, plan, rng_w


def test_parameters_identity_copies_and_buffers():
    # the TorchScript exporter dedups equal initializers with Identity: the copy keeps the parameter's name
    c = 4
    nodes = [helper.make_node("Identity", ["s0"], ["s1"], name="dedup"),
             helper.make_node("Conv", ["x", "w0"], ["a"], name="c0"),
             helper.make_node("BatchNormalization", ["a", "s0", "b0", "m", "v"], ["a2"], name="bn0"),
             helper.make_node("Conv", ["a2", "w1"], ["b"], name="c1"),
             helper.make_node("BatchNormalization", ["b", "s1", "b0", "m", "v"], ["y"], name="bn1")]
    inits = {"s0": np.ones(c, np.float32), "b0": np.zeros(c, np.float32), "m": np.zeros(c, np.float32),
             "v": np.ones(c, np.float32), "w0": rng_w(c, 3, 1, 1), "w1": rng_w(c, c, 1, 1)}
    p = plan(graph_of(nodes, [("x", "float32", [1, 3, 4, 4])], [("y", "float32", None)], inits))
    assert list(p.autograd.params) == ["w0", "s0", "b0", "w1", "s1"]  # s1 counted by its own name; m, v buffers
    assert "x" not in p.autograd.requires_grad and "a" in p.autograd.requires_grad
    assert p.autograd.contributions["b0"] == 2  # shared by both batch norms: one accumulation
    assert "dedup" not in {op.name for op in p.autograd.ops}  # folded before the run


def test_scalar_constants_are_not_parameters_and_no_grad_without_parameters():
    nodes = [helper.make_node("Mul", ["x", "k"], ["y"], name="scale")]
    p = plan(graph_of(nodes, [("x", "float32", [4])], [("y", "float32", None)], {"k": np.array(2.0, np.float32)}))
    assert not p.autograd.params and not p.backward and not p.optimizer


def test_gelu_after_a_linear_reads_the_linear_output():
    # MatMul + bias (epilogue) -> x * 0.5 * (1 + erf(x / sqrt 2)): the fused GELU's input is the linear's
    # output (the absorbed bias Add's), not the bias
    nodes = [helper.make_node("MatMul", ["x", "w"], ["z"], name="mm"),
             helper.make_node("Add", ["b", "z"], ["h"], name="bias"),
             helper.make_node("Div", ["h", "sqrt2"], ["d"], name="div"),
             helper.make_node("Erf", ["d"], ["e"], name="erf"),
             helper.make_node("Add", ["e", "one"], ["e1"], name="add1"),
             helper.make_node("Mul", ["h", "e1"], ["m"], name="mul"),
             helper.make_node("Mul", ["m", "half"], ["y"], name="mul2")]
    inits = {"w": rng_w(8, 8), "b": rng_w(8), "sqrt2": np.array(1.4142135, np.float32),
             "one": np.array(1.0, np.float32), "half": np.array(0.5, np.float32)}
    p = plan(graph_of(nodes, [("x", "float32", [4, 8])], [("y", "float32", None)], inits))
    gelu = next(op for op in p.autograd.ops if op.key[1] == "FusedElementwise")
    assert [t.name for t in gelu.node.inputs] == ["h"]
    mm = next(op for op in p.autograd.ops if op.name == "mm")
    assert [t.name for t in mm.node.outputs] == ["h"] and [t.name for t in mm.node.inputs] == ["x", "w", "b"]
    written = {t.name for k in p.backward for t in k.writes}
    assert {"grad::w", "grad::b", "grad::h"} <= written


def test_packed_projection_split_around_fused_attention_passes_gradients():
    """x @ W -> Split into q, k, v (views SDPA reads: no forward kernel) -> heads -> fused attention -> output head
    transpose (read by a Shape too) -> reshape: the gradients reach the packed projection's weight through the Split."""
    from tests.graph.test_runtime import packed_split_attention

    nodes, inits, outputs = packed_split_attention(returned_k=False)
    nodes = [helper.make_node("MatMul", ["x", "w"], ["qkv"], name="proj")] + nodes
    p = plan(graph_of(nodes, [("x", "float32", [1, 4, 16])], outputs, dict(inits, w=rng_w(16, 48))),
             precision="fp16")
    split = next(op for op in p.autograd.ops if op.name == "split")
    assert split.key[1] == "View" and split.work.kernels == 0
    attn = next(op for op in p.autograd.ops if op.key[1] == "FusedAttention")
    assert [t.name for t in attn.node.outputs] == ["ot"]  # through the output head transpose (Shape aside)
    assert "qkv" in p.autograd.has_grad and "grad::w" in {t.name for k in p.backward for t in k.writes}


def test_std_after_a_linear_is_one_fused_reduction_with_a_backward():
    # h = x @ w; s = torch.std(h, -1, keepdim=True) as exported (mean, centre, square, mean, correction, sqrt); y = h * s
    from tests.graph.test_runtime import _var_nodes

    nodes, inits = _var_nodes(x="h")
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"], name="mm")] + nodes + \
        [helper.make_node("Mul", ["h", "s"], ["y"], name="use")]
    p = plan(graph_of(nodes, [("x", "float32", [4, 64])], [("y", "float32", None)], dict(inits, w=rng_w(64, 64))))
    var = next(op for op in p.autograd.ops if op.key[1] == "FusedVar")
    assert [t.name for t in var.node.inputs] == ["h"] and [t.name for t in var.node.outputs] == ["s"]
    assert [k.name for k in p.backward if k.name.startswith("var")][:3] == ["var::bwd_mean", "var::bwd_centre", "var::bwd"]
    assert p.autograd.contributions["h"] == 2  # the std's gradient and the product's: one accumulation


def test_exported_group_norm_is_one_fused_op_with_its_weight_and_bias_gradients():
    # h = conv(x); F.group_norm(h, 4, w, b) as exported (reshape, instance norm, reshape back, mul, add); y = relu
    n = helper.make_node
    inits = {"g3": np.array([2, 4, -1], np.int64), "ones": np.ones(4, np.float32), "zeros": np.zeros(4, np.float32),
             "back": np.array([2, 8, 4, 4], np.int64), "w": rng_w(8, 1, 1), "b": rng_w(8, 1, 1),
             "wc": rng_w(8, 3, 1, 1)}
    nodes = [n("Conv", ["x", "wc"], ["h"], name="conv"), n("Reshape", ["h", "g3"], ["hg"], name="r1"),
             n("InstanceNormalization", ["hg", "ones", "zeros"], ["yg"], name="gn"),
             n("Reshape", ["yg", "back"], ["y0"], name="r2"), n("Mul", ["y0", "w"], ["y1"], name="scale"),
             n("Add", ["y1", "b"], ["y2"], name="shift"), n("Relu", ["y2"], ["y"], name="act")]
    p = plan(graph_of(nodes, [("x", "float32", [2, 3, 4, 4])], [("y", "float32", None)], inits))
    gn = next(op for op in p.autograd.ops if op.key[1] == "FusedGroupNorm")
    assert [t.name for t in gn.node.inputs] == ["h", "w", "b"] and [t.name for t in gn.node.outputs] == ["y2"]
    assert [k.name for k in p.backward if k.name.startswith("gn")] == ["gn::reduce", "gn::params", "gn::apply"]
    assert {"grad::w", "grad::b", "grad::wc"} <= {t.name for k in p.backward for t in k.writes}


def test_exported_rms_norm_is_one_fused_op_with_its_weight_gradient():
    # h = x @ wm; F.rms_norm(h, (16,), w) as exported (square, mean, eps, sqrt, divide, scale); y = relu
    n = helper.make_node
    inits = {"wm": rng_w(16, 16), "w": rng_w(16), "eps": np.array(1e-6, np.float32)}
    nodes = [n("MatMul", ["x", "wm"], ["h"], name="mm"), n("Mul", ["h", "h"], ["sq"], name="square"),
             n("ReduceMean", ["sq"], ["ms"], name="mean", axes=[-1], keepdims=1),
             n("Add", ["ms", "eps"], ["mse"], name="add_eps"), n("Sqrt", ["mse"], ["r"], name="sqrt"),
             n("Div", ["h", "r"], ["hn"], name="rms"), n("Mul", ["hn", "w"], ["y0"], name="scale"),
             n("Relu", ["y0"], ["y"], name="act")]
    p = plan(graph_of(nodes, [("x", "float32", [4, 8, 16])], [("y", "float32", None)], inits))
    rms = next(op for op in p.autograd.ops if op.name == "rms")
    assert rms.key[1] == "RMSNormalization"
    assert [t.name for t in rms.node.inputs] == ["h", "w"] and [t.name for t in rms.node.outputs] == ["y0"]
    assert [k.name for k in p.backward if k.name.startswith("rms")] == ["rms::apply", "rms::reduce"]
    assert {"grad::w", "grad::wm"} <= {t.name for k in p.backward for t in k.writes}
