"""bn_fold: BatchNormalization after a Conv folds into the Conv (FusedConv with a bias, one kernel)."""
import numpy as np
from onnx import helper

from predictor.graph.fused import FOLDED, FUSED_CONV, MEMBERS
from predictor.optimize import apply_passes
from predictor.types import WorkKind
from tests.optimize import costs, fused, kernels, load

RNG = np.random.default_rng(0)
W = RNG.standard_normal((4, 3, 3, 3)).astype(np.float32)
BN = {k: np.ones(4, np.float32) for k in ("s", "b", "m", "v")}
INPUTS = [("x", "float32", [1, 3, 8, 8]), ("w", "float32", [4, 3, 3, 3])] + [(k, "float32", [4]) for k in BN]


def _graph(extra_nodes=(), outputs=(("z", "float32", None),), bn_attrs=None, inits=None):
    nodes = [helper.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1], name="conv"),
             helper.make_node("BatchNormalization", ["y", "s", "b", "m", "v"], ["z"], name="bn", **(bn_attrs or {}))]
    return load(nodes + list(extra_nodes), INPUTS, list(outputs), {"w": W, **BN} if inits is None else inits)


def test_bn_folds_into_the_conv():
    g = _graph()
    before, after_g = costs(g), apply_passes(g, "bn_fold")
    after = costs(after_g)
    # Conv: 2 * 256 outputs * 27 = 13824 MATMUL; BN 2 per element = 512 VECTOR; one kernel each
    assert kernels(before) == 2 and before["bn"].total_flops == 512
    (node,) = fused(after_g)
    assert node.op_type == FUSED_CONV and node.name == "conv" and len(after_g.nodes) == 1
    assert node.attrs[FOLDED] == ("bn",) and node.attrs[MEMBERS] == ("conv", "bn")
    c = after["conv"]
    assert c.kernels == 1
    # the batch norm's 2 FLOPs per element are folded away; the bias adds 1 per element: 13824 + 256
    assert c.work.flops[WorkKind.MATMUL] == 13824 and c.work.flops[WorkKind.VECTOR] == 256
    # reads x (192 * 2 B) + W (108 * 2 B) + the folded bias (4 * 2 B) = 608; writes z once (256 * 2 B)
    assert c.work.bytes_read == 608 and c.work.bytes_written == 512
    assert c.work.gemm == (1, 64, 4, 27)
    assert node.outputs[0].name == "z"


def test_no_fold_when_the_conv_output_has_another_reader():
    g = _graph([helper.make_node("Relu", ["y"], ["r"], name="relu")], [("z", "float32", None), ("r", "float32", None)])
    assert apply_passes(g, "bn_fold") is g


def test_no_fold_in_training_mode_or_with_runtime_statistics():
    g = _graph(bn_attrs={"training_mode": 1})
    assert not fused(apply_passes(g, "bn_fold"))
    g = _graph(inits={"w": W, "s": BN["s"], "b": BN["b"]})  # mean and variance are graph inputs
    assert not fused(apply_passes(g, "bn_fold"))


def test_conv_bias_is_kept_as_the_folded_bias():
    nodes = [helper.make_node("Conv", ["x", "w", "cb"], ["y"], pads=[1, 1, 1, 1], name="conv"),
             helper.make_node("BatchNormalization", ["y", "s", "b", "m", "v"], ["z"], name="bn")]
    g = load(nodes, INPUTS + [("cb", "float32", [4])], [("z", "float32", None)],
             {"w": W, "cb": np.zeros(4, np.float32), **BN})
    before = costs(g)
    assert before["conv"].kernels == 2  # PyTorch eager: convolution, then a bias kernel
    (node,) = fused(apply_passes(g, "bn_fold"))
    assert node.inputs[2].name == "cb"
    assert kernels(costs(apply_passes(g, "bn_fold"))) == 1
