"""Classes fitted on the committed microbenchmarks (calibration/fit/micro_fit.py): grouped convolutions, unaligned
batched GEMMs."""
import json

import pytest
from onnx import helper

from calibration.fit.micro_fit import MICRO_CLASSES, bmm_node, conv_node, fit_micro_classes, microbench_rows
from predictor.fitted import bundled_calibration
from predictor.graph.cost import cost_graph
from predictor.graph.opclass import hidden_key, kernel_class
from predictor.machine.profile import load_profile
from predictor.precision import policy
from predictor.types import WorkKind
from tests.helpers import load_nodes, make_model


def test_conv_node_flops_match_the_microbenchmark():
    """The Conv node built from a row's parameters costs the FLOPs the microbenchmark recorded for its call."""
    rows = microbench_rows(("conv_grouped", "conv_grouped_width"))
    assert len(rows) == 4 * (10 + 14)
    for r in rows:
        node = conv_node(json.loads(r["params"]))
        assert kernel_class(node) == "grouped"
        work = cost_graph([node], policy(r["precision"]), 21, graph_inputs=frozenset({"x"})).costs[0].work
        assert work.flops[WorkKind.MATMUL] == pytest.approx(float(r["flops"]), rel=1e-12)


def test_bundled_micro_classes_are_reproducible():
    """python -m calibration.fit.fit's microbenchmark classes and their hidden kernels come back from the data."""
    profile = load_profile("h200")
    cal = bundled_calibration(profile)
    classes = {c: {p: vars(v) for p, v in by_p.items()} for c, by_p in cal.classes.items()}
    params, hidden = fit_micro_classes(classes, cal.gemm_k_half, cal.kernel_gap_s, profile, log=lambda *_: None)
    assert {"grouped", "gemm_unaligned"} <= set(params) <= {mc.name for mc in MICRO_CLASSES}
    assert {"Conv:grouped", "Conv:grouped_batched", "MatMul:unaligned"} <= set(hidden)
    for cls, by_p in params.items():
        assert set(by_p) == {"fp32", "tf32", "fp16", "bf16", "*"}
        for p in ("fp32", "tf32", "fp16", "bf16"):
            for k in ("t0_s", "eff_compute", "eff_memory"):
                assert by_p[p][k] == pytest.approx(getattr(cal.classes[cls][p], k), rel=1e-3)
    for key, by_p in hidden.items():
        for p, n in by_p.items():
            if isinstance(n, dict):  # a per-group entry
                assert [vars(h) for h in cal.hidden[key][p]] == [n]
            else:
                assert sum(h.count for h in cal.hidden[key][p]) == n


def test_fp32_batched_grouped_conv_launches_a_kernel_per_group():
    """At fp32 batch 32 the microbenchmarks show one kernel per group: the fit keeps a per-group entry there and a
    per-node count at batch 1."""
    cal = bundled_calibration(load_profile("h200"))
    (batched,) = cal.hidden["Conv:grouped_batched"]["fp32"]
    assert batched.per_group and batched.kind == "grouped" and batched.bytes_of == "none"
    assert 0.5 < batched.count <= 1.0
    assert not any(h.per_group for h in cal.hidden["Conv:grouped"]["fp32"])


def test_unaligned_rows_only():
    """Only the bmm_unaligned rows whose K or N is not a multiple of 8 are gemm_unaligned; aligned controls are not."""
    rows = microbench_rows(("bmm_unaligned",))
    classes = {json.dumps(json.loads(r["params"]), sort_keys=True): kernel_class(bmm_node(json.loads(r["params"])))
               for r in rows}
    assert classes[json.dumps({"B": 6144, "K": 32, "M": 49, "N": 49}, sort_keys=True)] == "gemm_unaligned"
    assert classes[json.dumps({"B": 6144, "K": 49, "M": 49, "N": 32}, sort_keys=True)] == "gemm_unaligned"
    assert classes[json.dumps({"B": 6144, "K": 48, "M": 48, "N": 32}, sort_keys=True)] == "gemm"
    assert classes[json.dumps({"B": 384, "K": 64, "M": 200, "N": 200}, sort_keys=True)] == "gemm"
    assert sum(c == "gemm_unaligned" for c in classes.values()) == 10


@pytest.mark.parametrize("batch,grouped_key", [(1, "Conv:grouped"), (7, "Conv:grouped"), (8, "Conv:grouped_batched")])
def test_kernel_classes_of_grouped_conv_and_layer_norm(batch, grouped_key):
    model = make_model([helper.make_node("Conv", ["x", "w"], ["y"], group=4, pads=[1, 1, 1, 1], name="g"),
                        helper.make_node("Conv", ["x", "wd"], ["z"], group=16, pads=[1, 1, 1, 1], name="d"),
                        helper.make_node("Conv", ["x", "w7"], ["z7"], group=16, pads=[3, 3, 3, 3], name="d7"),
                        helper.make_node("LayerNormalization", ["y", "s"], ["o"], name="ln")],
                       [("x", "float32", [batch, 16, 8, 8]), ("w", "float32", [16, 4, 3, 3]),
                        ("wd", "float32", [16, 1, 3, 3]), ("w7", "float32", [16, 1, 7, 7]), ("s", "float32", [8])],
                       [("o", "float32", None), ("z", "float32", None), ("z7", "float32", None)])
    nodes = {n.name: n for n in load_nodes(model).nodes}
    assert [kernel_class(nodes[k]) for k in ("g", "d", "d7", "ln")] == \
        ["grouped", "depthwise", "depthwise_large", "layernorm"]
    assert [hidden_key(nodes[k]) for k in ("g", "d", "d7")] == [grouped_key, "Conv:depthwise", "Conv:depthwise_large"]


@pytest.mark.parametrize("a,b,key", [
    ((8, 49, 32), (8, 32, 49), "MatMul:unaligned"),   # N = 49
    ((8, 49, 49), (8, 49, 32), "MatMul:unaligned"),   # K = 49
    ((8, 49, 32), (8, 32, 64), "MatMul"),             # M does not matter
    ((49, 32), (32, 49), "MatMul"),                   # 2-D: a linear layer, not a batched product
])
def test_unaligned_matmul_key(a, b, key):
    from predictor.graph.opclass import hidden_key

    model = make_model([helper.make_node("MatMul", ["x", "y"], ["z"], name="mm")],
                       [("x", "float32", list(a)), ("y", "float32", list(b))], [("z", "float32", None)])
    assert hidden_key(load_nodes(model).nodes[0]) == key


@pytest.mark.parametrize("a,w,key", [
    ((8, 384, 196), (196, 196), "MatMul:unaligned"),  # gMLP's token projection: K = N = 196
    ((8, 197, 197, 4), (4, 4), "MatMul:thin"),        # CaiT's talking heads, K = N = 4: a thin layer first
    ((8, 197, 100), (100, 20), "MatMul:unaligned"),   # K = 100, N = 20: unaligned, not thin
    ((8, 197, 192), (192, 768), "MatMul"),            # an aligned linear layer
    ((49, 32), (32, 64), "MatMul"),                   # 2-D, aligned
])
def test_unaligned_weight_matmul_key(a, w, key):
    """An activation times a weight whose K or N is not a multiple of 8 runs cuBLAS's unaligned kernels too."""
    import numpy as np

    from predictor.graph.opclass import hidden_key

    model = make_model([helper.make_node("MatMul", ["x", "w"], ["z"], name="mm")],
                       [("x", "float32", list(a))], [("z", "float32", None)], {"w": np.ones(w, np.float32)})
    assert hidden_key(load_nodes(model).nodes[0]) == key


def _write_rows(path, rows):
    import csv

    path.parent.mkdir(parents=True, exist_ok=True)
    cols = ["op", "family", "precision", "params", "flops", "bytes", "time_s", "p10_s", "p90_s", "n_timed", "method",
            "n_kernels", "error"]
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, cols)
        w.writeheader()
        for r in rows:
            w.writerow({c: r.get(c, "") for c in cols})


def _row(op, params, time_s, method="graph_x100", family="gemm", precision="fp16"):
    return {"op": op, "family": family, "precision": precision, "params": params, "time_s": time_s, "method": method}


def test_microbench_rows_keep_the_latest_run_in_numeric_order_and_a_canonical_row_order(tmp_path):
    """run10 is later than run9 (numbers as numbers); the rows come sorted by family, op, precision, parameters
    whatever the files' row order, so a fit that reads them does not move with the order they were written in."""
    from calibration.fit.micro_fit import run_order

    a, b, c = _row("mm", '{"M":2}', "2e-6"), _row("mm", '{"M":1}', "1e-6"), _row("add", '{"n":1}', "3e-6", family="elementwise")
    _write_rows(tmp_path / "one" / "run9" / "microbench.csv", [a, b, c])
    _write_rows(tmp_path / "one" / "run10" / "microbench.csv", [_row("mm", '{"M":2}', "5e-6")])
    _write_rows(tmp_path / "two" / "run9" / "microbench.csv", [c, b, a])
    _write_rows(tmp_path / "two" / "run10" / "microbench.csv", [_row("mm", '{"M":2}', "5e-6")])
    one = microbench_rows(("gemm", "elementwise"), tmp_path / "one")
    two = microbench_rows(("gemm", "elementwise"), tmp_path / "two")
    assert one == two
    assert [(r["op"], r["params"], r["time_s"]) for r in one] == \
        [("add", '{"n":1}', "3e-6"), ("mm", '{"M":1}', "1e-6"), ("mm", '{"M":2}', "5e-6")]
    from pathlib import Path

    assert sorted(map(Path, ["run10", "run9", ".", "run9_x", "run21"]), key=run_order) == \
        [Path("."), Path("run9"), Path("run9_x"), Path("run10"), Path("run21")]


def test_host_bound_rows_are_short_replays_and_short_event_timings():
    """A graph replay of K calls under 40 us, or an event-timed call under 80 us, timed the host's launch."""
    from calibration.fit.micro_fit import host_bound

    assert host_bound(_row("mm", "{}", "5e-6", "graph_x7"))          # 35 us a replay
    assert not host_bound(_row("mm", "{}", "5e-6", "graph_x8"))      # 40 us
    assert host_bound(_row("mm", "{}", "6e-5", "events"))
    assert not host_bound(_row("mm", "{}", "8e-5", "events"))
    assert not host_bound(_row("mm", "{}", "2e-6", "graph_x100"))    # 200 us: the fixed timing's least
