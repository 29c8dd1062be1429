"""Registry: pass names, ``all``, pipeline order, errors; NetworkPrediction records the passes."""
import pytest
from onnx import helper

from predictor.machine.profile import load_profile
from predictor.optimize import all_passes, apply_passes, known_passes, resolve
from predictor.predict import predict_graph
from predictor.types import PredictorError
from tests.optimize import load


def test_known_and_all():
    assert known_passes() == ("bn_fold", "conv_bias_act", "attention", "elementwise", "channels_last")
    assert all_passes() == resolve("all") == ("bn_fold", "attention", "elementwise", "channels_last")


def test_pipeline_order_whatever_the_order_named():
    assert resolve("elementwise,bn_fold") == resolve(["bn_fold", "elementwise"]) == ("bn_fold", "elementwise")
    assert resolve(" All , conv_bias_act ") == known_passes()
    assert resolve("") == resolve(None) == resolve(()) == resolve("none") == ()


def test_unknown_pass_is_one_clear_error():
    with pytest.raises(PredictorError) as e:
        resolve("bn_fold,fuse_everything")
    msg = str(e.value)
    assert "'fuse_everything'" in msg
    assert "known: bn_fold, conv_bias_act, attention, elementwise, channels_last, all" in msg


def test_passes_are_pure_and_recorded():
    nodes = [helper.make_node("Relu", ["x"], ["a"], name="r1"), helper.make_node("Neg", ["a"], ["z"], name="n1")]
    g = load(nodes, [("x", "float32", [16])], [("z", "float32", None)])
    before = g.nodes
    out = apply_passes(g, "all")
    assert g.nodes is before and len(out.nodes) == 1
    p = predict_graph(g, load_profile("h200"), "fp16", optimize="all")
    assert p.optimizations == all_passes() and p.kernels == 1
    assert predict_graph(g, load_profile("h200"), "fp16").optimizations == ()
