"""conv_bias_act: Conv [+ per-channel bias Add] + activation -> one FusedConv kernel."""
import numpy as np
from onnx import helper

from predictor.graph.fused import EPILOGUE, FUSED_CONV, MEMBERS
from predictor.optimize import apply_passes, resolve
from predictor.types import WorkKind
from tests.optimize import costs, flops, fused, kernels, load

W = np.random.default_rng(1).standard_normal((4, 3, 3, 3)).astype(np.float32)
X = [("x", "float32", [1, 3, 8, 8]), ("w", "float32", [4, 3, 3, 3])]
CONV_FLOPS = 2 * 256 * 27  # 13824


def _conv(*extra, bias=False):
    ins = ["x", "w", "cb"] if bias else ["x", "w"]
    return [helper.make_node("Conv", ins, ["y"], pads=[1, 1, 1, 1], name="conv"), *extra]


def test_conv_relu_one_kernel():
    g = load(_conv(helper.make_node("Relu", ["y"], ["z"], name="relu")), X, [("z", "float32", None)], {"w": W})
    before = costs(g)
    assert kernels(before) == 2
    after_g = apply_passes(g, "conv_bias_act")
    (node,) = fused(after_g)
    assert node.op_type == FUSED_CONV and node.attrs[MEMBERS] == ("conv", "relu")
    c = costs(after_g)["conv"]
    assert c.kernels == 1
    assert c.work.flops[WorkKind.MATMUL] == CONV_FLOPS and c.work.flops[WorkKind.VECTOR] == 256  # relu kept
    # the activation's read and write are gone: x (384 B) + W (216 B) in, z (512 B) out
    assert c.work.bytes_read == 600 and c.work.bytes_written == 512
    assert flops(before) == flops(costs(after_g))


def test_bias_add_and_silu():
    nodes = _conv(helper.make_node("Add", ["y", "bias"], ["yb"], name="add"),
                  helper.make_node("Sigmoid", ["yb"], ["sg"], name="sig"),
                  helper.make_node("Mul", ["yb", "sg"], ["z"], name="mul"))
    g = load(nodes, X + [("bias", "float32", [1, 4, 1, 1])], [("z", "float32", None)],
             {"w": W, "bias": np.zeros((1, 4, 1, 1), np.float32)})
    before = costs(g)
    assert kernels(before) == 3  # conv, bias add, SiLU (one kernel in eager: graph/runtime.py)
    after_g = apply_passes(g, "conv_bias_act")
    (node,) = fused(after_g)
    assert [n.name for n in node.attrs[EPILOGUE]] == ["sig", "mul"] and node.inputs[2].name == "bias"
    c = costs(after_g)["conv"]
    assert c.kernels == 1
    # FLOPs kept: conv + bias 256 + sigmoid 6 * 256 + mul 256
    assert c.work.flops[WorkKind.VECTOR] == 256 + 6 * 256 + 256
    assert flops(before) == flops(costs(after_g))
    # x + W + bias (4 * 2 B) read, z written once
    assert c.work.bytes_read == 608 and c.work.bytes_written == 512


def test_own_bias_and_clip():
    nodes = _conv(helper.make_node("Clip", ["y", "lo", "hi"], ["z"], name="clip"), bias=True)
    g = load(nodes, X + [("cb", "float32", [4]), ("lo", "float32", []), ("hi", "float32", [])],
             [("z", "float32", None)], {"w": W, "cb": np.zeros(4, np.float32), "lo": np.array(0, np.float32),
                                        "hi": np.array(6, np.float32)})
    before = costs(g)
    assert kernels(before) == 3  # conv + its bias kernel + clip
    after = costs(apply_passes(g, "conv_bias_act"))
    assert kernels(after) == 1 and flops(after) == flops(before)


def test_after_bn_fold():
    bn = {k: np.ones(4, np.float32) for k in ("s", "b", "m", "v")}
    nodes = _conv(helper.make_node("BatchNormalization", ["y", "s", "b", "m", "v"], ["n"], name="bn"),
                  helper.make_node("Relu", ["n"], ["z"], name="relu"))
    g = load(nodes, X + [(k, "float32", [4]) for k in bn], [("z", "float32", None)], {"w": W, **bn})
    assert kernels(costs(g)) == 3
    after_g = apply_passes(g, "bn_fold,conv_bias_act")
    (node,) = fused(after_g)
    assert node.attrs[MEMBERS] == ("conv", "bn", "relu")
    c = costs(after_g)["conv"]
    assert c.kernels == 1 and c.work.flops[WorkKind.VECTOR] == 256 + 256  # folded bias + relu


def test_activation_with_another_reader_stays():
    nodes = _conv(helper.make_node("Relu", ["y"], ["z"], name="relu"),
                  helper.make_node("Neg", ["y"], ["q"], name="neg"))
    g = load(nodes, X, [("z", "float32", None), ("q", "float32", None)], {"w": W})
    assert apply_passes(g, "conv_bias_act") is g


def test_not_in_all():
    assert "conv_bias_act" not in resolve("all") and "conv_bias_act" in resolve("all,conv_bias_act")
