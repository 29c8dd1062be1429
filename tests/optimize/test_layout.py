"""channels_last: NHWC convolutions and batch norms lose the calibration's hidden layout kernels."""
import numpy as np
from onnx import helper

from predictor.fitted import FittedCalibration
from predictor.graph.fused import LAYOUT, NHWC
from predictor.machine.profile import load_profile
from predictor.optimize import apply_passes
from predictor.predict import predict_graph
from tests.optimize import load

F = "float32"
_P = {"t0_s": 1e-6, "eff_compute": 0.5, "eff_memory": 0.5}
DOC = {"schema_version": 1, "gpu": "h200", "kernel_gap_s": 0.0,
       "classes": {"default": {"*": _P}, "layout": {"*": _P}},
       "hidden_kernels": {"Conv": {"fp16": [{"kind": "layout", "count": 2.0, "bytes_of": "io"},
                                            {"kind": "cast", "count": 1.0, "bytes_of": "input"}]}}}


def _graph(group: int):
    cin = 8
    w = np.ones((8, cin // group, 3, 3), np.float32)
    nodes = [helper.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1], group=group, name="conv")]
    return load(nodes, [("x", F, [2, cin, 8, 8]), ("w", F, list(w.shape))], [("y", F, None)], {"w": w})


def test_dense_conv_loses_its_layout_kernels_only():
    cal = FittedCalibration(DOC)
    g = _graph(group=1)
    after_g = apply_passes(g, "channels_last")
    assert after_g.nodes[0].attrs[LAYOUT] == NHWC and LAYOUT not in g.nodes[0].attrs
    assert [h.kind for h in cal.hidden_kernels(g.nodes[0], "fp16")] == ["layout", "cast"]
    assert [h.kind for h in cal.hidden_kernels(after_g.nodes[0], "fp16")] == ["cast"]
    prof = load_profile("h200")
    a = predict_graph(g, prof, "fp16", cal).ops[0]
    b = predict_graph(g, prof, "fp16", cal, optimize="channels_last").ops[0]
    assert a.extra_kernels == ("layout x2", "cast x1") and b.extra_kernels == ("cast x1",)
    assert b.cost == a.cost and b.time_s < a.time_s  # the node's own cost is unchanged


def test_depthwise_is_channels_last_grouped_is_not():
    assert LAYOUT in apply_passes(_graph(group=8), "channels_last").nodes[0].attrs   # depthwise
    assert apply_passes(_graph(group=2), "channels_last").nodes[0].attrs.get(LAYOUT) is None  # 4 channels a group


def test_folded_conv_keeps_the_convs_hidden_kernels_until_channels_last():
    cal = FittedCalibration(DOC)
    bn = {k: np.ones(8, np.float32) for k in ("s", "b", "m", "v")}
    w = np.ones((8, 8, 3, 3), np.float32)
    nodes = [helper.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1], name="conv"),
             helper.make_node("BatchNormalization", ["y", "s", "b", "m", "v"], ["z"], name="bn")]
    g = load(nodes, [("x", F, [2, 8, 8, 8]), ("w", F, [8, 8, 3, 3])] + [(k, F, [8]) for k in bn],
             [("z", F, None)], {"w": w, **bn})
    folded = apply_passes(g, "bn_fold").nodes[0]
    assert [h.kind for h in cal.hidden_kernels(folded, "fp16")] == ["layout", "cast"]
    nhwc = apply_passes(g, "bn_fold,channels_last").nodes[0]
    assert [h.kind for h in cal.hidden_kernels(nhwc, "fp16")] == ["cast"]
