"""Microbenchmark rows rebuilt as single ONNX nodes for the main fit (calibration/fit/kernel_samples.py)."""
from calibration.fit.kernel_samples import (BENCHMARK_FAMILIES, FIT_FAMILIES, NODE_BUILDERS, conv_transpose_node,
                                            linear_node, micro_costs)
from predictor.graph.cost import cost_graph
from predictor.machine.profile import load_profile
from predictor.precision import policy


def test_benchmark_sweep_kept_out_of_the_fit():
    assert not set(BENCHMARK_FAMILIES) & set(FIT_FAMILIES)


def test_linear_node_flops():
    node = linear_node({"M": 8, "N": 4096, "K": 1024})
    c = cost_graph([node], policy("fp16"), 21, graph_inputs=frozenset({"x"})).costs[0]
    assert sum(f.flops for f in c.flops) == 2 * 8 * 4096 * 1024  # 67,108,864


def test_conv_transpose_node_flops():
    # 4x4 stride-2 transposed conv, 256 -> 128 channels on 16x16: 2 x 1 x 256 x 16 x 16 x 128 x 4 x 4 = 268,435,456
    node = conv_transpose_node({"N": 1, "C": 256, "H": 16, "K": 128, "R": 4, "stride": 2, "pad": 1, "Ho": 32, "Wo": 32})
    c = cost_graph([node], policy("fp16"), 21, graph_inputs=frozenset({"x"})).costs[0]
    assert sum(f.flops for f in c.flops) == 268_435_456


def test_committed_rows_cost():
    xs = micro_costs(FIT_FAMILIES, load_profile("h200"))
    assert len(xs) >= 700
    assert {r["op"] for r, _, _ in xs} <= set(NODE_BUILDERS)
    assert all(c.kernels >= 1 and float(r["time_s"]) > 0 for r, _, c in xs)
