"""Kernel features (predictor/timing/features.py): the fused attention kernels' tiles and waves, exact values."""
import numpy as np
import pytest

from predictor.graph.cost import cost_graph
from predictor.graph.loader import load_model_proto
from predictor.machine.profile import load_profile
from predictor.precision import policy
from predictor.roofline import level_times_s
from predictor.types import MemLevel
from predictor.timing.features import attention_blocks, attention_loop, attention_wave, kernel_features
from tests.graph.test_runtime import _sdpa_graph
from tests.helpers import make_model


def test_attention_wave_pads_tiles_and_counts_blocks():
    # ViT-B/16 at batch 1: 12 heads x ceil(197 / 128) = 24 blocks on 132 SMs (24/132 busy); 197 -> 256 on both sides
    assert attention_wave((12, 197, 64, 197), 132) == pytest.approx((256 / 197) ** 2 * 132 / 24, rel=1e-12)
    # batch 32: 768 blocks = 6 waves of 132 (768 / 792 busy)
    assert attention_wave((384, 197, 64, 197), 132) == pytest.approx((256 / 197) ** 2 * 792 / 768, rel=1e-12)
    # short sequences take power-of-two tiles: 50 query rows -> 64, 49 keys -> 64
    assert attention_wave((132, 50, 64, 49), 132) == pytest.approx((64 / 50) * (64 / 49), rel=1e-12)
    # long prefill: 16 heads x 64 blocks = 1024 blocks, 8 waves (1024 / 1056 busy), no padding
    assert attention_wave((16, 8192, 64, 8192), 132) == pytest.approx(1056 / 1024, rel=1e-12)
    # decoding (one query row): the keys are split over blocks, no padding and full waves
    assert attention_wave((32, 1, 64, 2048), 132) == 1.0
    # causal, 8192 tokens: 64 query tiles run 1, 2, ..., 64 key tiles: 2080 of 4096
    assert attention_wave((16, 8192, 64, 8192), 132, causal=True) == pytest.approx(2080 / 4096 * 1056 / 1024,
                                                                                     rel=1e-12)
    # causal, 256 queries over 384 keys (bottom-right aligned): query tiles run 2 and 3 of the 3 key tiles
    assert attention_wave((66, 256, 64, 384), 132, causal=True) == pytest.approx(5 / 6, rel=1e-12)
    # one tile: causal changes nothing
    assert attention_wave((132, 128, 64, 128), 132, causal=True) == attention_wave((132, 128, 64, 128), 132)
    # grouped-query heads stacked per key/value head (8 x 1024 query rows over 1024 keys, the causal mask repeated):
    # each group runs its own triangle, 8 x (1 + ... + 8) = 288 of the 64 x 8 = 512 tiles; 4 x 64 = 256 blocks
    assert attention_wave((4, 8192, 64, 1024), 132, causal=True) == pytest.approx(288 / 512 * 264 / 256, rel=1e-12)


def test_attention_loop_is_the_key_length():
    """A fused attention kernel's K loop runs over the keys (its gemm_k); split keys (decoding) count none."""
    assert attention_loop((16, 8192, 64, 8192)) == 8192.0
    assert attention_loop((16, 197, 64, 197)) == 197.0
    assert attention_loop((32, 1, 64, 2048)) == 0.0
    assert attention_loop(None) == 0.0


def test_attention_blocks_are_query_tiles_of_each_head():
    """B x H x ceil(Sq / tile) blocks, each paying its prologue and epilogue (the class's row_s per block per SM)."""
    assert attention_blocks((384, 197, 64, 197)) == 384 * 2   # ViT-B/16 at batch 32: 197 rows in two tiles of 128
    assert attention_blocks((12, 50, 64, 49)) == 12           # one 64-row tile
    assert attention_blocks((16, 8192, 128, 8192)) == 16 * 64
    assert attention_blocks((32, 1, 64, 2048)) == 0           # decoding: split keys, no query blocks counted
    assert attention_blocks(None) == 0


def test_fp32_attention_runs_64_row_tiles():
    """fp32/tf32 SDPA is PyTorch's memory-efficient kernel (fmha_cutlassF_f32_aligned_64x64 in the H100 tables, run18):
    64 query rows a block, stepping over 64 keys; the 16-bit flash kernels keep 128."""
    from predictor.timing.features import attention_tile_for

    assert [attention_tile_for(p) for p in ("fp32", "tf32", "fp16", "bf16")] == [64, 64, 128, 128]
    assert attention_blocks((384, 197, 64, 197), 64) == 384 * 4   # ViT-B/16 at batch 32: 197 rows in 4 tiles of 64
    # 197 -> 256 on both sides, 1536 blocks = 12 waves of 132 (1536 / 1584 busy)
    assert attention_wave((384, 197, 64, 197), 132, tile=64) == pytest.approx((256 / 197) ** 2 * 1584 / 1536,
                                                                              rel=1e-12)


def test_runtime_fused_attention_carries_its_tiles():
    """The runtime's SDPA pattern gives the fused kernel the (B x H, Sq, Dv, Skv) of its P V product; its features hold
    the padding and waves: q (1, 2, 40, 8) -> 2 heads x 1 block of 64 rows on 132 SMs, 40 rows and keys padded to 64."""
    nodes, _, outputs, inits = _sdpa_graph()
    inputs = [("q", "float32", [1, 2, 40, 8]), ("kt", "float32", [1, 2, 8, 40]), ("v", "float32", [1, 2, 40, 8])]
    g = load_model_proto(make_model(nodes, inputs, outputs, inits), batch=None)
    gc = cost_graph(g.nodes, policy("fp16"), 17, graph_inputs=frozenset(t.name for t in g.inputs))
    fused = next(c for c in gc.costs if c.name == "mm2")
    assert fused.work.attention_tiles == (2, 40, 8, 40)
    prof = load_profile("h200")
    shape = (64 / 40) ** 2 * prof.sm_count / 2
    assert attention_wave((2, 40, 8, 40), prof.sm_count) == pytest.approx(shape, rel=1e-12)
    ideal = level_times_s(fused, prof, 0.0)["compute"]
    assert kernel_features(fused, prof, "fp16").compute_s == pytest.approx(ideal * shape, rel=1e-12)
    assert kernel_features(fused, prof, "fp16").rows_per_sm == 2 / prof.sm_count  # 2 heads x 1 query block


def test_convolutions_keep_k_whole_gemms_split_it():
    """cuDNN's implicit-GEMM convolutions run K in one block (few tiles leave SMs idle); GEMMs and pointwise
    convolutions (cuBLAS) split K to fill the SMs."""
    from onnx import helper

    from predictor.graph.loader import load_model_proto
    from predictor.timing.features import splits_k
    from tests.helpers import make_model

    nodes = [helper.make_node("Conv", ["x", "w3"], ["y3"], pads=[1, 1, 1, 1], name="c3"),
             helper.make_node("Conv", ["x", "w1"], ["y1"], name="c1"),
             helper.make_node("MatMul", ["a", "b"], ["ab"], name="mm")]
    inits = {"w3": np.ones((64, 512, 3, 3), np.float32), "w1": np.ones((64, 512, 1, 1), np.float32),
             "b": np.ones((4608, 64), np.float32)}
    g = load_model_proto(make_model(nodes, [("x", "float32", [1, 512, 7, 7]), ("a", "float32", [49, 4608])],
                                    [("y3", "float32", None), ("y1", "float32", None), ("ab", "float32", None)],
                                    inits), batch=None)
    by = {n.name: n for n in g.nodes}
    gc = cost_graph(g.nodes, policy("fp16"), 17, graph_inputs=frozenset(t.name for t in g.inputs))
    costs = {c.name: c for c in gc.costs}
    assert not splits_k(costs["c3"], by["c3"]) and splits_k(costs["c1"], by["c1"]) and splits_k(costs["mm"], by["mm"])
    # at fp32 cuDNN runs the pointwise convolution as an implicit GEMM too: K whole; the MatMul (cuBLAS) still splits
    assert not splits_k(costs["c1"], by["c1"], "fp32") and splits_k(costs["c1"], by["c1"], "fp16")
    assert splits_k(costs["mm"], by["mm"], "fp32")
    prof = load_profile("h200")
    # the 3x3 convolution: M = 49, N = 64, K = 4608: one 64x64 tile on 132 SMs, K kept whole
    f3 = kernel_features(costs["c3"], prof, "fp16", by["c3"])
    fm = kernel_features(costs["mm"], prof, "fp16", by["mm"])  # the same GEMM shape, K split 9 ways
    assert f3.compute_s / fm.compute_s == pytest.approx(9.0, rel=1e-12)


def test_loop_steps_of_a_thread_loop_kernel():
    from predictor.timing.features import LOOP_THREADS_PER_SM, loop_steps

    assert loop_steps(None, 132) == 0.0
    # 196 threads (14 x 14 pixels) each looping over 32 x 1024 planes: the loop's length
    assert loop_steps((32768, 196), 132) == 32768.0
    # 512 x 512 pixels on 132 SMs at LOOP_THREADS_PER_SM: 262144 / 67584 waves of the loop
    assert loop_steps((672, 262144), 132) == pytest.approx(672 * 262144 / (132 * LOOP_THREADS_PER_SM), rel=1e-12)


def test_a_loop_over_more_than_the_l2_holds_waits_on_hbm():
    from predictor.timing.features import LOOP_MISS_LATENCY, loop_steps

    # 32 blocks of 512 looping 2,048 times over 64 MiB: each step LOOP_MISS_LATENCY long when the window is 25 MiB
    assert loop_steps((2048, 32 * 512, 2048, 1 << 26), 132, 25 * 2 ** 20) == 2048 * LOOP_MISS_LATENCY
    assert loop_steps((2048, 32 * 512, 2048, 1 << 23), 132, 25 * 2 ** 20) == 2048.0
    assert loop_steps((2048, 32 * 512, 2048, 1 << 26), 132) == 2048.0  # no window given: held


def test_kernel_features_take_the_l2_share_of_the_profile():
    from predictor.graph.traffic import TrafficParams
    from predictor.timing.features import LOOP_MISS_LATENCY
    from tests.graph.test_runtime import _group_norm_graph

    prof = load_profile("h200")
    cost = _group_norm_graph()["inorm"]
    assert cost.work.thread_loop[3] < TrafficParams.resident_fraction * prof.l2_bytes
    assert kernel_features(cost, prof, "fp16").loop_steps == 1.0
    from dataclasses import replace

    big = replace(cost, work=replace(cost.work, thread_loop=(1, 256, 1024, int(prof.l2_bytes))))
    assert kernel_features(big, prof, "fp16").loop_steps == LOOP_MISS_LATENCY


def test_a_large_kernel_grouped_convolution_fills_the_sms_one_group_at_a_time():
    """Class grouped_large (SpeechT5's positional convolution: 768 channels, 128 taps, 16 groups): from batch 8 one
    kernel per group, so a wave holds one group's 64 x 64 tiles of the (N x L) x 48 implicit GEMM; below it one kernel
    over all groups."""
    from predictor.timing.features import gemm_shape, grouped_large_shape
    from predictor.types import Node, TensorInfo, frozen_map

    def conv(n, length):
        x = TensorInfo("x", "float32", (n, 768, length))
        w = TensorInfo("w", "float32", (768, 48, 128), is_initializer=True)
        y = TensorInfo("y", "float32", (n, 768, length + 1))
        return Node("pos", "Conv", "", (x, w), (y,), frozen_map({"group": 16, "kernel_shape": (128,),
                                                                  "pads": (64, 64)}))

    # batch 32, 499 frames: M = 32 x 500 = 16,000 -> 250 tiles of 64, N = 48 -> 1 tile: 2 waves of 132 per kernel
    pad = 250 * 64 * 64 / (16000 * 48)
    assert grouped_large_shape(conv(32, 499), 132) == pytest.approx(pad / (250 / 264), rel=1e-12)
    # batch 1: one kernel over the 16 groups' 8 tiles each (128 of 132 SMs)
    assert grouped_large_shape(conv(1, 499), 132) == pytest.approx(8 * 64 * 64 / (500 * 48) / (128 / 132), rel=1e-12)
    # any other node: 1; a Conv's gemm_shape without OpWork.gemm reads it
    other = Node("c", "Conv", "", (TensorInfo("x", "float32", (1, 64, 8, 8)),
                                   TensorInfo("w", "float32", (64, 1, 3, 3), is_initializer=True)),
                 (TensorInfo("y", "float32", (1, 64, 8, 8)),), frozen_map({"group": 64}))
    assert grouped_large_shape(other, 132) == 1.0
    c = cost_graph([conv(32, 499)], policy("fp32"), 17, graph_inputs=frozenset({"x"})).costs[0]
    assert c.work.gemm is None and gemm_shape(c, conv(32, 499), "fp32", 132) == grouped_large_shape(conv(32, 499), 132)


def test_hbm_time_reads_at_the_read_ceiling():
    """A sum of a [4096, 1024] fp32 tensor over its last axis reads 16 MiB and writes 16 KiB: the reads at the H200's
    read-only ceiling (4.636 TB/s), the writes at the rate that makes a copy run at the copy ceiling (3.952 TB/s)."""
    from onnx import helper

    node = helper.make_node("ReduceSum", ["x", "axes"], ["y"], keepdims=0)
    model = make_model([node], [("x", "float32", [4096, 1024])], [("y", "float32", [4096])],
                       {"axes": np.array([1], np.int64)}, 18)
    g = load_model_proto(model)
    prof = load_profile("h200")
    c = cost_graph(g.nodes, policy("fp32"), 18, graph_inputs=frozenset({"x"})).costs[0]
    read, written = 4096 * 1024 * 4 + 8, 4096 * 4  # the data and the int64 axes constant; the sums
    assert c.bytes[MemLevel.HBM] == read + written and c.work.bytes_written == written
    copy, rd = 3952090131751.126, 4636165011778.266
    assert kernel_features(c, prof, "fp32").hbm_s == pytest.approx(read / rd + written * (2 / copy - 1 / rd),
                                                                   rel=1e-12)
