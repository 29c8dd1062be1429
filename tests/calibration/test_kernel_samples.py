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


def _flops(node, precision="fp16"):
    c = cost_graph([node], policy(precision), 21, graph_inputs=frozenset({"x"})).costs[0]
    return sum(f.flops for f in c.flops), c


def test_conv3d_node_flops():
    # 2 x N 2 x K 64 x out 4x14x14 x C 32 x taps 3x3x3 = 2 x 2 x 64 x 784 x 32 x 27 = 173,408,256
    from calibration.fit.kernel_samples import conv_nd_node

    node = conv_nd_node({"N": 2, "C": 32, "spatial": [4, 14, 14], "K": 64, "kernel": [3, 3, 3], "stride": [1, 1, 1],
                         "dilation": [1, 1, 1], "pads": [1, 1, 1], "groups": 1, "out": [4, 14, 14]})
    assert node.attrs["pads"] == (1, 1, 1, 1, 1, 1)
    assert _flops(node)[0] == 173_408_256


def test_avg_pool_node_keeps_the_rows_padding():
    # 3x3 stride 1 pad 1 on 1x64x56x56: output 56x56, out_numel x (9 + 1) = 2,007,040 FLOPs
    node = NODE_BUILDERS["avg_pool2d"]({"N": 1, "C": 64, "H": 56, "W": 56, "k": 3, "stride": 1, "pad": 1})
    assert node.outputs[0].shape == (1, 64, 56, 56)
    assert _flops(node)[0] == 64 * 56 * 56 * 10


def test_data_movement_nodes_move_their_bytes():
    # Concat of two [64, 4096] halves at fp16: reads and writes 2 x 64 x 4096 x 2 bytes each way
    node = NODE_BUILDERS["cat"]({"n": 1 << 19})
    assert node.outputs[0].shape == (128, 4096)
    # an embedding gather of 85 rows of 768 from a 50000-row table reads only those rows
    g = NODE_BUILDERS["embedding"]({"tokens": 85, "D": 768, "vocab": 50000})
    assert g.op_type == "Gather" and g.outputs[0].shape == (85, 768)


def test_sdpa_node_is_attention():
    from predictor.graph.opclass import kernel_class

    node = NODE_BUILDERS["sdpa"]({"B": 2, "H": 8, "S": 128, "D": 64, "causal": True})
    assert kernel_class(node) == "attention"
    # QK^T and PV: 2 x (2 x 2 x 8 x 128 x 128 x 64) = 33,554,432 matmul FLOPs
    flops, c = _flops(node)
    assert c.kernels == 1 and flops >= 33_554_432


def test_sdpa_kv_node_is_grouped_query_attention():
    """Run 10's decode call: one query token of 16 heads against 4 KV heads x 1,024 cached keys: QK^T and PV, 2 x (2 x
    16 x 1 x 1024 x 64) = 4,194,304 matmul FLOPs per image."""
    from predictor.graph.opclass import kernel_class

    node = NODE_BUILDERS["sdpa_kv"]({"B": 1, "H": 16, "KVH": 4, "Sq": 1, "Skv": 1024, "D": 64})
    assert kernel_class(node) == "attention"
    assert node.inputs[1].shape == (1, 4, 1024, 64) and node.outputs[0].shape == (1, 16, 1, 64)
    c = cost_graph([node], policy("fp16"), 23, graph_inputs=frozenset({"q", "k", "v"})).costs[0]
    assert c.kernels == 1 and sum(f.flops for f in c.flops) >= 4_194_304


def test_reduction_rows_of_the_h100_are_one_reduce_kernel_each():
    """reduce_shapes (h100/microbench/run12): torch.var rows rebuilt as the exporter's four nodes fold into one Welford
    kernel carrying reduce_kernel's loop; the fit reads them from the H100's folder, priced on its own profile."""
    from calibration.fit.fit import _micro_sources
    from calibration.fit.kernel_samples import OTHER_GPU_FAMILIES
    from predictor.graph.runtime import WELFORD

    fams, profile, root, keep = [s for s in _micro_sources(FIT_FAMILIES, load_profile("h200")) if s[0] != FIT_FAMILIES][0]
    assert fams == OTHER_GPU_FAMILIES["h100"] == ("reduce_shapes", "group_norm_shapes", "loop_kernels",
                                                  "conv_depthwise_taps") \
        and profile.name == "h100" \
        and root.parts[-2] == "h100" and keep is None
    xs = [x for x in micro_costs(fams, profile, root) if x[0]["family"] == "reduce_shapes"]
    assert len(xs) == 504 and all(c.kernels == 1 and n.op_type == "ReduceMean" for _, n, c in xs)
    var = [(r, c) for r, _, c in xs if r["op"] == "var" and r["precision"] == "fp32"
           and r["params"] == '{"outputs":32,"R":6272,"layout":"inner"}']
    assert len(var) == 1 and WELFORD in var[0][1].work.notes
    assert var[0][1].work.thread_loop == (98, 2 * 512, 2048, 32 * 6272 * 4)


def test_depthwise_taps_rows_of_the_h100_are_depthwise_convolutions_with_their_outputs_as_rows():
    """conv_depthwise_taps (h100/microbench/run17): 240 calls (80 shapes x fp32/fp16/bf16) enter the fit as one
    depthwise Conv node each, of class depthwise or depthwise_large by the kernel's shape, each output a row."""
    from calibration.fit.kernel_samples import OTHER_GPU_FAMILIES
    from calibration.fit.micro_fit import MICROBENCH
    from predictor.graph.opclass import kernel_class

    xs = micro_costs(("conv_depthwise_taps",), load_profile("h100"), MICROBENCH.parents[1] / "h100" / "microbench")
    assert "conv_depthwise_taps" in OTHER_GPU_FAMILIES["h100"] and len(xs) == 240
    assert {kernel_class(n) for _, n, _ in xs} == {"depthwise", "depthwise_large"}
    one = [c for r, _, c in xs if r["precision"] == "fp32" and r["params"].startswith('{"N":32,"C":256,"spatial":[2048],')
           and '"kernel":[7]' in r["params"]]
    assert len(one) == 1 and one[0].kernels >= 1 and one[0].work.rows == 32 * 256 * 2048


def test_group_norm_rows_of_the_h100_carry_the_row_moments_loop():
    """group_norm_shapes (h100/microbench/run13): F.group_norm rows as GroupNormalization nodes, 3 kernels, the
    row-moments loop over their (image, group) rows."""
    from calibration.fit.kernel_samples import OTHER_GPU_FAMILIES

    from calibration.fit.micro_fit import MICROBENCH

    xs = micro_costs(("group_norm_shapes",), load_profile("h100"), MICROBENCH.parents[1] / "h100" / "microbench")
    assert "group_norm_shapes" in OTHER_GPU_FAMILIES["h100"] and len(xs) == 399
    assert all(c.kernels == 3 and n.op_type == "GroupNormalization" for _, n, c in xs)
    sd = [c for r, _, c in xs if r["precision"] == "fp16" and r["params"] == '{"N":1,"C":128,"H":512,"groups":32}']
    assert len(sd) == 1 and sd[0].work.thread_loop == (2048, 32 * 512, 2048, 128 * 512 * 512 * 2)


def test_cumsum_rows_of_the_h100_carry_the_scan_loop_and_its_conv1d_rows_stay_out():
    """loop_kernels (h100/microbench/run14): only its cumsum calls enter the fit (FAMILY_OPS), as CumSum nodes of class
    reduce with PyTorch's scan loop: down the rows one step a row, along a row by chunks of the block's tree."""
    from calibration.fit.kernel_samples import FAMILY_OPS
    from calibration.fit.micro_fit import MICROBENCH
    from predictor.graph.opclass import kernel_class

    xs = micro_costs(("loop_kernels",), load_profile("h100"), MICROBENCH.parents[1] / "h100" / "microbench")
    assert FAMILY_OPS["loop_kernels"] == ("cumsum",) and len(xs) == 84
    assert all(n.op_type == "CumSum" and kernel_class(n) == "reduce" and c.kernels == 1 for _, n, c in xs)
    loops = {r["params"]: c.work.thread_loop for r, _, c in xs if r["precision"] == "fp32"}
    assert loops['{"rows":32768,"cols":8,"dim":0}'] == (32768, 8, 256, 2 * 32768 * 8 * 4)
    # 131,072 rows of 8: the thread split wraps to 512 threads across a row, one row a block, one chunk of 9 + 2 steps
    assert loops['{"rows":131072,"cols":8,"dim":-1}'] == (11, 131072 * 512, 2048, 2 * 131072 * 8 * 4)


def test_host_bound_rows_of_the_h200_are_replaced_by_the_h100_runs_of_the_fixed_timing():
    """The H200's rows whose replay timed the host's launch (micro_fit.host_bound) leave the fit; the H100's run 21
    (calibration/data/h100/microbench/run21, the fixed timing) gives the same cases instead, on the H100's profile."""
    from calibration.fit.fit import _micro_sources
    from calibration.fit.micro_fit import host_bound, microbench_rows, row_key

    own, _other, retimed = _micro_sources(FIT_FAMILIES, load_profile("h200"))
    assert own[1].name == "h200" and retimed[1].name == "h100" and retimed[2].parts[-2] == "h100"
    bound = {row_key(r) for r in microbench_rows(FIT_FAMILIES) if host_bound(r)}
    assert len(bound) == 605
    kept = micro_costs(*own)
    assert len(kept) == 2054 and not any(host_bound(r) for r, _, _ in kept)
    xs = micro_costs(*retimed)
    assert len(xs) == 560 and {row_key(r) for r, _, _ in xs} <= bound
    assert all(r["method"].startswith("graph_x") and not host_bound(r) for r, _, _ in xs)

