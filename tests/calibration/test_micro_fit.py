"""The grouped-convolution class fitted on the committed microbenchmarks (calibration/fit/micro_fit.py)."""
import json

import pytest
from onnx import helper

from calibration.fit.micro_fit import GROUPED_FAMILIES, conv_node, fit_grouped, microbench_rows
from predictor.fitted import bundled_calibration
from predictor.graph.cost import cost_graph
from predictor.graph.opclass import kernel_class
from predictor.machine.profile import load_profile
from predictor.precision import policy
from predictor.types import WorkKind
from tests.helpers import load_nodes, make_model


def test_conv_node_flops_match_the_microbenchmark():
    """The Conv node built from a row's parameters costs the FLOPs the microbenchmark recorded for its call."""
    rows = microbench_rows(GROUPED_FAMILIES)
    assert len(rows) >= 40
    for r in rows:
        node = conv_node(json.loads(r["params"]))
        assert kernel_class(node) == "grouped"
        work = cost_graph([node], policy(r["precision"]), 21, graph_inputs=frozenset({"x"})).costs[0].work
        assert work.flops[WorkKind.MATMUL] == pytest.approx(float(r["flops"]), rel=1e-12)


def test_bundled_grouped_class_is_reproducible():
    """python -m calibration.fit.fit's grouped class and hidden kernels come back from the committed data."""
    profile = load_profile("h200")
    cal = bundled_calibration(profile)
    classes = {c: {p: vars(v) for p, v in by_p.items()} for c, by_p in cal.classes.items()}
    params, hidden = fit_grouped(classes, cal.gemm_k_half, cal.kernel_gap_s, profile, log=lambda *_: None)
    assert set(params) == {"fp32", "tf32", "fp16", "bf16", "*"}
    for p in ("fp32", "tf32", "fp16", "bf16"):
        for k in ("t0_s", "eff_compute", "eff_memory"):
            assert params[p][k] == pytest.approx(getattr(cal.classes["grouped"][p], k), rel=1e-6)
        assert sum(h.count for h in cal.hidden["Conv:grouped"][p]) == hidden[p]


def test_kernel_classes_of_grouped_conv_and_layer_norm():
    model = make_model([helper.make_node("Conv", ["x", "w"], ["y"], group=4, pads=[1, 1, 1, 1], name="g"),
                        helper.make_node("Conv", ["x", "wd"], ["z"], group=16, pads=[1, 1, 1, 1], name="d"),
                        helper.make_node("LayerNormalization", ["y", "s"], ["o"], name="ln")],
                       [("x", "float32", [1, 16, 8, 8]), ("w", "float32", [16, 4, 3, 3]),
                        ("wd", "float32", [16, 1, 3, 3]), ("s", "float32", [8])],
                       [("o", "float32", None), ("z", "float32", None)])
    nodes = {n.name: n for n in load_nodes(model).nodes}
    assert (kernel_class(nodes["g"]), kernel_class(nodes["d"]), kernel_class(nodes["ln"])) == \
        ("grouped", "depthwise", "layernorm")
