"""Collective formulas: nccl-tests' bus-bandwidth factors, ring bytes, NCCL's model on tiny systems."""

import pytest

from predictor.distributed.collectives import (Layout, bus_factor, candidates, collective_time, layout_for,
                                               nccl_model, nvls_chunk_bytes, nvls_fill_s, node_net_Bps, ring_busbw_Bps, ring_bytes_per_rank)
from predictor.distributed.system import load_system
from predictor.types import PredictorError


@pytest.mark.parametrize("op,n,factor", [
    ("all_reduce", 8, 2 * 7 / 8),        # 2(n-1)/n = 1.75
    ("all_reduce", 2, 1.0),              # 2 * 1 / 2
    ("reduce_scatter", 8, 7 / 8),        # (n-1)/n
    ("all_gather", 4, 3 / 4),
    ("broadcast", 16, 1.0),
])
def test_bus_factor(op, n, factor):
    assert bus_factor(op, n) == pytest.approx(factor, rel=1e-12)


def test_ring_all_reduce_bytes_per_rank():
    # 2 (n-1)/n x size: 8 ranks, 100 MB -> 175 MB sent by each rank
    assert ring_bytes_per_rank("all_reduce", 100e6, 8) == pytest.approx(175e6)
    # reduce-scatter + all-gather = all-reduce
    assert ring_bytes_per_rank("reduce_scatter", 100e6, 8) + ring_bytes_per_rank("all_gather", 100e6, 8) == \
        pytest.approx(ring_bytes_per_rank("all_reduce", 100e6, 8))


def test_unknown_op_is_an_error():
    with pytest.raises(PredictorError, match="unknown collective 'alltoall'"):
        bus_factor("alltoall", 4)


@pytest.mark.parametrize("system,eff", [
    ("dgx1-v100", 20.0 / 25.0),    # NCCL's SM70_NVLINK_BW over the 25 GB/s brick
    ("dgx-a100", 20.0 / 25.0),     # SM80_NVLINK_BW
    ("dgx-h100", 20.6 / 25.0),     # SM90_NVLINK_BW
    ("hgx-h200", 20.6 / 25.0),
])
def test_nvlink_efficiency_is_nccls_per_link_bandwidth(system, eff):
    assert nccl_model().intra_efficiency(load_system(system)) == pytest.approx(eff, rel=1e-12)


def test_single_node_ring_bandwidth_is_link_times_efficiency():
    s = load_system("dgx-h100")
    assert ring_busbw_Bps(s, Layout(8, 1)) == pytest.approx(18 * 20.6e9)  # 18 NVLink 4 bricks x 20.6 GB/s


def test_multi_node_ring_is_bounded_by_node_injection():
    s = load_system("ib-cluster")  # 8 x 50 GB/s NICs per node, 450 GB/s NVLink per GPU
    bw = ring_busbw_Bps(s, Layout(64, 8))
    assert bw == pytest.approx(min(18 * 20.6e9, 8 * 50e9 * 0.94))
    assert node_net_Bps(s, Layout(64, 8)) == pytest.approx(8 * 50e9 * 0.94)
    assert node_net_Bps(s, Layout(16, 16)) == pytest.approx(1 * 50e9 * 0.94)  # one GPU per node uses one NIC


def test_large_message_reaches_bus_bandwidth_ring_simple():
    s = load_system("dgx-a100")
    c = collective_time("all_reduce", 8 * 2**30, s, 8, nvls=False)
    assert (c.algorithm, c.protocol) == ("ring", "Simple")
    # time = latency + size / (busbw x n / (2(n-1))): busbw within 0.5% of the link figure at 8 GiB
    assert c.busbw_Bps == pytest.approx(ring_busbw_Bps(s, Layout(8, 1)), rel=5e-3)


def test_ring_simple_time_exact():
    s = load_system("dgx-a100")
    m = nccl_model()
    lay = Layout(4, 1)
    ring = {(c.algorithm, c.protocol): c for c in candidates("all_reduce", 1e9, s, lay)}[("ring", "Simple")]
    lat = m.base_latency_s["ring"]["Simple"] + 2 * 3 * m.hw_latency_s["nvlink"]["ring"]["Simple"]  # 6 steps
    assert lat == pytest.approx(8.4e-6 + 6 * 3.4e-6)
    alg = ring_busbw_Bps(s, lay) * 4 / 6
    assert ring.time_s == pytest.approx(lat + 1e9 / alg, rel=1e-12)


def test_multi_node_ring_latency_exact():
    # 2 nodes x 8 A100: 30 steps, 2 x 2 of them on the network (14 us), the others at least the network post
    # overhead (1 us x 3 for Simple = 3 us < NVLink's 3.4 us); plateau x1.4 from sm80 for a large all-reduce
    s = load_system("dgx-a100")
    ring = {(c.algorithm, c.protocol): c for c in candidates("all_reduce", 1e9, s, Layout(16, 2))}
    lat = (8.4e-6 + 26 * 3.4e-6 + 4 * 14e-6) * 1.4
    assert ring[("ring", "Simple")].latency_s == pytest.approx(lat, rel=1e-12)
    ll = ring[("ring", "LL")]
    assert ll.latency_s == pytest.approx(6.6e-6 + 26 * 1e-6 + 4 * 2.7e-6, rel=1e-12)  # LL: overhead 1 us > 0.6


def test_two_node_tree_uses_intra_bandwidth_held_to_the_network():
    # NCCL prices a tree on <= 2 nodes with the intra-node bandwidth: 0.5 x 0.92 x 240 GB/s = 110.4 GB/s of
    # algorithm bandwidth; with 4 x 12.5 GB/s NICs the node cannot send more than 47 GB/s each way
    s = load_system("dgx-a100")
    lay = Layout(16, 2)
    tree = {c.protocol: c for c in candidates("all_reduce", 2**30, s, lay) if c.algorithm == "tree"}
    lat = tree["Simple"].latency_s
    assert lat == pytest.approx(2 * (7 * 28e-6 + 1 * 28e-6))
    assert 2**30 / (tree["Simple"].time_s - lat) == pytest.approx(0.5 * 0.92 * 240e9)   # 1 GiB: no correction
    from dataclasses import replace
    thin = replace(s, inter=replace(s.inter, nics_per_node=4, nic_bandwidth_Bps=12.5e9))
    tree = {c.protocol: c for c in candidates("all_reduce", 2**30, thin, lay) if c.algorithm == "tree"}
    assert 2**30 / (tree["Simple"].time_s - lat) == pytest.approx(4 * 12.5e9 * 0.94)


def test_nvls_tree_across_nodes():
    s = load_system("ib-cluster")
    two = [c for c in candidates("all_reduce", 2**33, s, Layout(16, 2)) if c.algorithm == "nvls_tree"][0]
    assert two.latency_s == pytest.approx(23e-6 + 2 * 1 * 14e-6)
    assert 2**33 / (two.time_s - two.latency_s - two.fill_s) == pytest.approx(275e9)  # 8 NDR NICs keep up on 2 nodes
    four = [c for c in candidates("all_reduce", 2**33, s, Layout(32, 4)) if c.algorithm == "nvls_tree"][0]
    assert 2**33 / (four.time_s - four.latency_s - four.fill_s) == pytest.approx(
        275e9 * 0.5 * 8 * 47e9 / (18 * 20.6e9))


@pytest.mark.parametrize("size,tree,chunk", [
    (2**33, True, 512 * 1024),        # >= 32 x 128 lanes x 512 KiB = 2 GiB: the whole Simple step
    (2**30, True, 256 * 1024),        # < 2 GiB, >= 16 x 128 x 256 KiB = 512 MiB
    (2**26, True, 128 * 1024),        # 64 MiB: below 16 x 128 x 256 KiB, not below 4 x 128 x 128 KiB
    (2**23, True, 64 * 1024),         # 8 MiB: below 4 x 128 x 128 KiB, not below 1 x 128 x 64 KiB
    (2**20, True, 32 * 1024),         # 1 MiB: below 128 x 64 KiB
    (2**33, False, 128 * 1024),       # NVLS: capped at 128 KiB, 8 GiB >= 64 x 128 x 128 KiB
    (2**29, False, 64 * 1024),        # 512 MiB < 1 GiB
    (2**20, False, 16 * 1024),        # 1 MiB < 8 x 128 x 64 KiB and < 2 x 128 x 32 KiB
])
def test_nvls_chunk_sizes_follow_nccl(size, tree, chunk):
    assert nvls_chunk_bytes(size, 128, tree, nccl_model()) == chunk


def test_nvls_pipeline_fill():
    # 2 nodes x 8 GPUs: 16 channels x 8 heads = 128 lanes, stages = reduce + broadcast + one hop up and one down
    s = load_system("ib-cluster")
    lay = Layout(16, 2)
    m = nccl_model()
    assert nvls_fill_s(2**23, 275e9, lay, m) == pytest.approx(3 * 128 * 64 * 1024 / 275e9)
    assert nvls_fill_s(2**14, 275e9, lay, m) == pytest.approx(3 * 2**14 / 275e9)      # the message is all in flight
    c = [c for c in candidates("all_reduce", 2**23, s, lay) if c.algorithm == "nvls_tree"][0]
    assert c.fill_s == pytest.approx(3 * 128 * 64 * 1024 / 275e9)
    assert c.time_s == pytest.approx(c.latency_s + c.fill_s + 2**23 / 275e9)
    # one node: reduce and broadcast, 2 stages; rings and trees carry no fill term
    one = [c for c in candidates("all_reduce", 2**30, load_system("dgx-h100"), Layout(8, 1)) if c.algorithm == "nvls"][0]
    assert one.fill_s == pytest.approx(1 * 128 * 128 * 1024 / 275e9)
    assert all(c.fill_s == 0.0 for c in candidates("all_reduce", 2**23, s, lay) if not c.algorithm.startswith("nvls"))


def test_small_messages_are_latency_bound_and_use_ll():
    s = load_system("dgx-h100")
    c = collective_time("all_reduce", 4096, s, 8)
    assert c.protocol == "LL" and c.time_s < 20e-6


def test_tree_wins_at_scale_for_small_messages():
    s = load_system("summit")
    c = collective_time("all_reduce", 1e6, s, 6 * 4096)
    assert c.algorithm == "tree"  # ring latency grows with 2(n-1) steps


def test_nvls_only_when_the_system_has_it_and_it_is_enabled():
    h = load_system("dgx-h100")
    assert collective_time("all_reduce", 2**32, h, 8).algorithm == "nvls"
    assert collective_time("all_reduce", 2**32, h, 8, nvls=False).algorithm == "ring"
    assert collective_time("all_reduce", 2**32, load_system("dgx-a100"), 8).algorithm == "ring"


def test_one_rank_costs_nothing():
    c = collective_time("all_reduce", 1e9, load_system("dgx-a100"), 1)
    assert c.time_s == 0.0


def test_layout_fills_whole_nodes():
    s = load_system("dgx-a100")
    assert layout_for(s, 4) == Layout(4, 1)
    assert layout_for(s, 64) == Layout(64, 8)
    with pytest.raises(PredictorError, match="do not fill whole dgx-a100 nodes of 8"):
        layout_for(s, 12)
    with pytest.raises(PredictorError, match="the system has 1024"):
        layout_for(s, 8 * 2048)


def test_summit_ring_inside_a_socket_across_sockets_and_nodes():
    s = load_system("summit")
    assert ring_busbw_Bps(s, Layout(3, 1)) == pytest.approx(2 * 20e9)   # 2 NVLink 2 bricks x NCCL's 20 GB/s
    assert ring_busbw_Bps(s, Layout(6, 1)) == pytest.approx(32e9)       # the X-Bus (NCCL's P9_BW)
    assert ring_busbw_Bps(s, Layout(12, 2)) == pytest.approx(2 * 12.5e9 * 0.94)  # the two EDR rails
