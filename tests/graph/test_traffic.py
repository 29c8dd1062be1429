"""The traffic model (predictor/graph/traffic.py) on tiny graphs: exact bytes, arithmetic beside them.

Conventions: fp32 = 4 bytes, fp16 = 2 bytes; F = l2_far_fraction (0.47 on Hopper) adds F x compulsory
bytes at L2; ``sm_count=1`` switches wave filling off where a test is about the tiling arithmetic.
"""
from __future__ import annotations

import dataclasses
import inspect

import numpy as np
import pytest
from onnx import helper

from predictor.graph.cost import cost_graph
from predictor.graph.loader import load_model_proto
from predictor.graph.traffic import (HierarchicalTraffic, TrafficParams, choose_tile, padded_gemm_flops,
                                     params_for)
from predictor.precision import policy
from predictor.types import MemLevel, Unit
from tests.helpers import make_model

L1, L2, HBM = MemLevel.L1, MemLevel.L2, MemLevel.HBM
F = 0.47
BIG_L2 = 64 * 2**20  # 64 MiB: everything stays resident in the stream regime


def costs(nodes, inputs, outputs, *, precision="fp32", residency="stream", l2=BIG_L2, inits=None,
          arch="hopper", **overrides):
    """{node name: {level: bytes}} of a graph costed with the traffic model."""
    graph = load_model_proto(make_model(nodes, inputs, outputs, inits))
    p = dataclasses.replace(params_for(arch, residency), **overrides)
    gc = cost_graph(graph.nodes, policy(precision), graph.opset or 17, HierarchicalTraffic(l2, arch, p),
                    **graph_inputs(graph))
    return {c.name: dict(c.bytes) for c in gc.costs}


def graph_inputs(graph) -> dict:
    """cost_graph's ``graph_inputs`` where it takes one (it tells graph inputs from initializers)."""
    if "graph_inputs" in inspect.signature(cost_graph).parameters:
        return {"graph_inputs": frozenset(t.name for t in graph.inputs)}
    return {}


def relu(x, y, name):
    return helper.make_node("Relu", [x], [y], name=name)


# --------------------------------------------------------------------------------- parameters
def test_traffic_for_takes_every_gpu_fact_from_the_profile():
    from predictor.graph.traffic import traffic_for
    from predictor.machine.profile import load_profile

    for name in ("v100", "a100", "h200"):
        prof = load_profile(name)
        t = traffic_for(prof, "replay")
        assert (t.l2_bytes, t.params.sm_count, t.params.residency) == (prof.l2_bytes, prof.sm_count, "replay")
    assert traffic_for(load_profile("v100")).params.sm_count == 80  # the profile's, not an arch table's


def test_params_for_architectures():
    h = params_for("hopper")
    assert (h.tma_tensor_path, h.l2_far_fraction, h.sm_count, h.residency) == (True, 0.47, 132, "stream")
    v = params_for("volta", "replay", 80)
    assert (v.tma_tensor_path, v.l2_far_fraction, v.sm_count, v.residency) == (False, 0.0, 80, "replay")
    assert params_for("hopper", sm_count=114).sm_count == 114
    with pytest.raises(ValueError, match="residency"):
        params_for("hopper", "warm")
    with pytest.raises(ValueError, match="residency"):
        HierarchicalTraffic(BIG_L2, "hopper", TrafficParams(residency="cold"))


def test_tile_per_path():
    assert TrafficParams().tile(Unit.TENSOR) == (128, 128) and TrafficParams().tile(Unit.CUDA) == (128, 64)


@pytest.mark.parametrize("args, expected", [
    # big problem: 1 x 8 x 8 = 64 tiles < 132 -> 64x128 (128 tiles) -> 64x64 (256 tiles)
    ((1, 1024, 1024, (128, 128), 132), (64, 64)),
    # BERT linear 1024 x 768: 8 x 6 = 48 -> 64x128: 16 x 6 = 96 -> 64x64: 16 x 12 = 192 >= 132
    ((1, 1024, 768, (128, 128), 132), (64, 64)),
    # LSTM step, 16 rows: tm clamps to 16; tn 64 -> 32 -> 16 (1 x 128 = 128 tiles), stops at min_tile
    ((1, 16, 2048, (128, 64), 132), (16, 16)),
    # enough tiles already: 4 x 196 x 4 = 3136 >= 132, tile unchanged
    ((4, 25088, 256, (128, 64), 132), (128, 64)),
    # wave filling off (sm_count 1): only the clamp to the problem size (N = 16 -> 16)
    ((1, 256, 16, (128, 64), 1), (128, 16)),
    # a long K split over blocks fills the SMs instead: 512 x 1024 x 16384 keeps 4 x 8 = 32 tiles of 128 x 128 in
    # min(ceil(132 / 32), 16384 // 512) = 5 slices (160 blocks); without K (a convolution's loop) it shrinks to 32 x 64
    ((1, 512, 1024, (128, 128), 132, 16, 16384), (128, 128)),
    ((1, 512, 1024, (128, 128), 132, 16, 0), (32, 64)),
    # a short K (768: one slice of 512) does not: the same shrinking as without
    ((1, 512, 1024, (128, 128), 132, 16, 768), (32, 64)),
    # 1024 x 1024 x 3072: 64 tiles of 128 x 128 in min(3, 6) = 3 slices, 192 blocks
    ((1, 1024, 1024, (128, 128), 132, 16, 3072), (128, 128)),
])
def test_choose_tile(args, expected):
    assert choose_tile(*args) == expected


def test_k_slices():
    from predictor.graph.traffic import SPLIT_K_MIN, k_slices

    assert k_slices(32, 132, 16384) == 5  # ceil(132 / 32)
    assert k_slices(32, 132, 3 * SPLIT_K_MIN) == 3  # K's slices of SPLIT_K_MIN
    assert k_slices(132, 132, 16384) == 1 and k_slices(32, 132, 0) == 1 and k_slices(0, 132, 4096) == 1


def test_padded_gemm_flops():
    # ResNet-50 layer4 3x3: M = 8*7*7 = 392 -> 4 tiles of 128 = 512 rows; N = 512, K = 4608
    assert padded_gemm_flops((1, 392, 512, 4608)) == 2 * 512 * 512 * 4608
    # N = 1000 -> 16 x 64 = 1024; M = 8 < 128 runs unpadded (8 is its own power of two)
    assert padded_gemm_flops((1, 8, 1000, 2048)) == 2 * 8 * 1024 * 2048
    # exact multiples: no padding, batch multiplies
    assert padded_gemm_flops((3, 256, 128, 64)) == 2 * 3 * 256 * 128 * 64


# --------------------------------------------------------------------------------- streaming kernels
def test_elementwise_chain_stream():
    # x [1, 1024] fp32 = 4096 B; r1: reads x (graph input: HBM) writes a; r2: a resident in L2
    c = costs([relu("x", "a", "r1"), relu("a", "y", "r2")], [("x", "float32", (1, 1024))],
              [("y", "float32", (1, 1024))])
    assert c["r1"][L1] == 8192                       # 4096 read + 4096 written, through L1
    assert c["r1"][L2] == pytest.approx(8192 * (1 + F))  # + 0.47 x distinct bytes (far partition)
    assert c["r1"][HBM] == 4096 + 4096               # x from HBM, a written back
    assert c["r2"][HBM] == 0 + 4096                  # a resident, y written back


def test_elementwise_chain_replay_in_place():
    # replay: r1 reads the graph input (cold, not written by a kernel: not in place) -> 4096 B,
    # footprint 8192 B < half of the L2: nothing written back during the kernel.
    # r2: a dies at r2 with y's shape and type -> overwritten in place: no HBM traffic at all.
    c = costs([relu("x", "a", "r1"), relu("a", "y", "r2")], [("x", "float32", (1, 1024))],
              [("y", "float32", (1, 1024))], residency="replay")
    assert c["r1"][HBM] == 4096
    assert c["r2"][HBM] == 0
    assert c["r2"][L2] == pytest.approx(8192 * (1 + F))  # L2 requests do not depend on residency


def test_replay_not_in_place_when_input_is_read_later():
    # a is read by r2 and by the Add: r2 cannot overwrite it -> reads a from HBM (cold)
    nodes = [relu("x", "a", "r1"), relu("a", "b", "r2"), helper.make_node("Add", ["a", "b"], ["y"], name="add")]
    c = costs(nodes, [("x", "float32", (1, 1024))], [("y", "float32", (1, 1024))], residency="replay")
    assert c["r2"][HBM] == 4096
    # Add: first input a dies here -> in place; reads b cold: 4096
    assert c["add"][HBM] == 4096


def test_replay_in_place_through_a_view():
    # Reshape is a free view: r2 reads buffer a through it and is its last reader -> in place
    shape = helper.make_node("Constant", [], ["s"], name="s",
                             value=helper.make_tensor("s", 7, [2], [32, 32]))
    nodes = [relu("x", "a", "r1"), shape, helper.make_node("Reshape", ["a", "s"], ["v"], name="view"),
             relu("v", "y", "r2")]
    c = costs(nodes, [("x", "float32", (1, 1024))], [("y", "float32", (32, 32))], residency="replay")
    assert c["r2"][HBM] == 0


def test_replay_spill_beyond_half_the_l2():
    # L2 of 8192 B: window 0.5 x 8192 = 4096 B. x [1, 2048] fp32 = 8192 B.
    # r1: x cold 8192; footprint 8192 + 8192 = 16384 -> spill 16384 - 4096 = 12288 -> writes min(12288, 8192)
    # r2: in place on a: footprint 8192 (one buffer) -> spill 4096: 4096 written back, and the in-place
    #     input re-read: 0 + min(4096, 8192) = 4096
    c = costs([relu("x", "a", "r1"), relu("a", "y", "r2")], [("x", "float32", (1, 2048))],
              [("y", "float32", (1, 2048))], residency="replay", l2=8192)
    assert c["r1"][HBM] == 8192 + 8192
    assert c["r2"][HBM] == 4096 + 4096


def test_stream_window_evicts_old_producers():
    # L2 of 16384 B: window 8192 B. x, a, b, d [1, 512] fp32 = 2048 B each.
    # r1 x->a (touched 4096), r2 a->b (8192), r3 b->d (12288); add(a, d): 12288 - 4096 = 8192 B touched
    # since a was written (== window: still resident), d resident -> reads 0, writes 2048.
    # With one more relu in between, a is 10240 B old -> re-read from HBM.
    nodes = [relu("x", "a", "r1"), relu("a", "b", "r2"), relu("b", "d", "r3"),
             helper.make_node("Add", ["a", "d"], ["y"], name="add")]
    ins, outs = [("x", "float32", (1, 512))], [("y", "float32", (1, 512))]
    assert costs(nodes, ins, outs, l2=16384)["add"][HBM] == 2048
    nodes2 = nodes[:3] + [relu("d", "e", "r4"), helper.make_node("Add", ["a", "e"], ["y"], name="add")]
    assert costs(nodes2, ins, outs, l2=16384)["add"][HBM] == 2048 + 2048


# --------------------------------------------------------------------------------- GEMM tiling
def matmul_graph(dtype):
    # A [256, 512] (graph input) @ B [512, 128] (weight) -> Y [256, 128]; M=256, N=128, K=512
    b = np.zeros((512, 128), dtype=np.float16 if dtype == "float16" else np.float32)
    return ([helper.make_node("MatMul", ["a", "b"], ["y"], name="mm")],
            [("a", dtype, (256, 512)), ("b", dtype, (512, 128))], [("y", dtype, (256, 128))], {"b": b})


def test_matmul_cuda_core_path_tiles_through_l1():
    # fp32 (CUDA cores), tile 128x64, no wave filling: nM = 2, nN = 2
    # A 256*512*4 = 524288 read nN = 2 times; B 512*128*4 = 262144 read nM = 2 times; Y 256*128*4 = 131072
    nodes, ins, outs, inits = matmul_graph("float32")
    c = costs(nodes, ins, outs, inits=inits, sm_count=1)["mm"]
    requests = 524288 * 2 + 262144 * 2 + 131072          # 1703936
    assert c[L1] == requests
    assert c[L2] == pytest.approx(requests + F * (524288 + 262144 + 131072))
    assert c[HBM] == 524288 + 262144 + 131072           # A and B from HBM, Y written back


def test_matmul_tensor_path_tma_no_l1_and_multicast():
    # fp16 (tensor cores, Hopper TMA), tile 128x128: nM = 2, nN = 1
    # A 256*512*2 = 262144 x 1, B 512*128*2 = 131072 x 2; both streams / 2 (2-CTA multicast); Y 65536
    nodes, ins, outs, inits = matmul_graph("float16")
    c = costs(nodes, ins, outs, precision="fp16", inits=inits, sm_count=1)["mm"]
    assert c[L1] == 0
    assert c[L2] == pytest.approx((262144 + 131072 * 2) / 2 + 65536 + F * (262144 + 131072 + 65536))


def test_matmul_tensor_path_before_hopper_goes_through_l1():
    # Ampere: no TMA, no multicast: L1 = L2 requests = 262144 + 131072 * 2 + 65536
    nodes, ins, outs, inits = matmul_graph("float16")
    c = costs(nodes, ins, outs, precision="fp16", inits=inits, sm_count=1, arch="ampere")["mm"]
    assert c[L1] == 262144 + 262144 + 65536
    assert c[L2] == pytest.approx(589824 + 0.47 * 458752)


def test_matmul_wave_filling_shrinks_tiles():
    # fp32 with wave filling (132 SMs): (128,64) -> 2x2=4 tiles ... -> (16,16): 16 x 8 = 128 tiles (stops
    # at min_tile): A read nN = 8 times, B nM = 16 times
    nodes, ins, outs, inits = matmul_graph("float32")
    c = costs(nodes, ins, outs, inits=inits)["mm"]
    assert choose_tile(1, 256, 128, (128, 64), 132) == (16, 16)
    assert c[L1] == 524288 * 8 + 262144 * 16 + 131072


def test_conv_implicit_gemm_im2col_at_l1_input_at_l2():
    # x [1,8,16,16], w [16,8,3,3], pad 1 -> y [1,16,16,16]; gemm (1, M=256, N=16, K=72), fp32, tile
    # (128, 16 after the clamp to N): nM = 2, nN = 1.
    # X 8*256*4 = 8192; W 16*72*4 = 4608; Y 16*256*4 = 16384; im2col A = 256*72*4 = 73728
    w = np.zeros((16, 8, 3, 3), dtype=np.float32)
    node = helper.make_node("Conv", ["x", "w"], ["y"], name="conv", pads=[1, 1, 1, 1])
    c = costs([node], [("x", "float32", (1, 8, 16, 16)), ("w", "float32", (16, 8, 3, 3))],
              [("y", "float32", (1, 16, 16, 16))], inits={"w": w}, sm_count=1)["conv"]
    assert c[L1] == 73728 * 1 + 4608 * 2 + 16384            # 99328
    assert c[L2] == pytest.approx(8192 * 1 + 4608 * 2 + 16384 + F * (8192 + 4608 + 16384))


def test_conv_bias_pass_streams_through_l1_on_the_tma_path():
    # fp16 conv with bias: 2 kernels. The GEMM kernel (TMA) has no l1tex bytes; the bias kernel reads
    # Y and B and writes Y: L1 = 2 * Y + B = 2 * 8192 + 32.
    # x [1,8,16,16] fp16 = 4096; W [16,8,1,1] = 256; B [16] = 32; Y [1,16,16,16] = 8192
    w = np.zeros((16, 8, 1, 1), dtype=np.float16)
    bias = np.zeros((16,), dtype=np.float16)
    node = helper.make_node("Conv", ["x", "w", "b"], ["y"], name="conv")
    c = costs([node], [("x", "float16", (1, 8, 16, 16)), ("w", "float16", (16, 8, 1, 1)),
                       ("b", "float16", (16,))], [("y", "float16", (1, 16, 16, 16))],
              precision="fp16", inits={"w": w, "b": bias}, sm_count=1)["conv"]
    assert c[L1] == 2 * 8192 + 32
    # L2: GEMM (M=256, N=16, tile (128,16)): X x 1 + W x 2, / 2 multicast, + Y; bias pass 2Y + B;
    # compulsory = X + W + B + Y (reads) + 2Y (writes) = 4096 + 256 + 32 + 8192 + 16384
    gemm = (4096 * 1 + 256 * 2) / 2 + 8192
    assert c[L2] == pytest.approx(gemm + 2 * 8192 + 32 + F * (4096 + 256 + 32 + 8192 + 16384))


def test_lstm_step_gemm_rereads():
    # LSTM S=2, B=4, I=8, H=8 (4H = 32), fp32, wave filling on: both GEMMs get (16,16) tiles
    # (tm clamps to 16; tn 32 -> 16 since 1 x 1 x 2 < 132), so nN = 2, nM = 1:
    # input GEMM re-reads X once: 2*4*8*4 = 256 B; each step re-reads h once: 4*8*4 = 128 B, 2 steps
    inits = {"W": np.zeros((1, 32, 8), np.float32), "R": np.zeros((1, 32, 8), np.float32)}
    node = helper.make_node("LSTM", ["X", "W", "R"], ["Y"], name="lstm", hidden_size=8)
    graph = load_model_proto(make_model([node], [("X", "float32", (2, 4, 8)), ("W", "float32", (1, 32, 8)),
                                                 ("R", "float32", (1, 32, 8))],
                                        [("Y", "float32", (2, 1, 4, 8))], inits))
    p = params_for("hopper")
    c = cost_graph(graph.nodes, policy("fp32"), 17, HierarchicalTraffic(BIG_L2, "hopper", p),
                   **graph_inputs(graph)).costs[0]
    compulsory = c.work.bytes_read + c.work.bytes_written
    assert c.bytes[L2] == pytest.approx(compulsory + 256 + 2 * 128 + F * compulsory)
    assert c.bytes[L1] == pytest.approx(compulsory + 256 + 2 * 128)


def test_views_cost_nothing():
    shape = helper.make_node("Constant", [], ["s"], name="s", value=helper.make_tensor("s", 7, [2], [32, 32]))
    c = costs([shape, helper.make_node("Reshape", ["x", "s"], ["y"], name="view")],
              [("x", "float32", (1, 1024))], [("y", "float32", (32, 32))])
    assert c["view"] == {L1: 0.0, L2: 0.0, HBM: 0.0}


def test_a_bias_add_in_the_gemm_epilogue_keeps_the_gemm_output_resident():
    # y = x @ w; z = Add(b, y) as the TorchScript exporter writes it (bias first), absorbed into the GEMM's epilogue;
    # relu(z) right after: z [64, 64] fp32 (16384 B) was written by the GEMM kernel -> read from L2, HBM = its write
    nodes = [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm"),
             helper.make_node("Add", ["b", "y"], ["z"], name="bias"), relu("z", "r", "act")]
    inits = {"w": np.ones((64, 64), np.float32), "b": np.ones((64,), np.float32)}
    c = costs(nodes, [("x", "float32", (64, 64))], [("r", "float32", (64, 64))], inits=inits)
    assert c["bias"][HBM] == 0 and c["act"][HBM] == 64 * 64 * 4
