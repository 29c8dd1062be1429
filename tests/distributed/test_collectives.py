"""Collective formulas: nccl-tests' bus-bandwidth factors, ring bytes, NCCL's model on tiny systems."""

import pytest

from predictor.distributed.collectives import (Layout, bus_factor, candidates, collective_time, layout_for,
                                               nccl_model, ring_busbw_Bps, ring_bytes_per_rank)
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


def test_single_node_ring_bandwidth_is_link_times_efficiency():
    s = load_system("dgx-h100")
    eff = nccl_model().link_efficiency["nvlink"]
    assert ring_busbw_Bps(s, Layout(8, 1)) == pytest.approx(450e9 * eff)  # 450 GB/s per direction x 0.822


def test_multi_node_ring_is_bounded_by_node_injection():
    s = load_system("summit")  # 2 x 12.5 GB/s NICs per node, 25 GB/s NVLink per GPU
    m = nccl_model()
    bw = ring_busbw_Bps(s, Layout(12, 2))
    assert bw == pytest.approx(min(25e9 * m.link_efficiency["nvlink"], 2 * 12.5e9 * m.link_efficiency["net"]))


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
    alg = ring_busbw_Bps(s, lay) * 4 / 6
    assert ring.time_s == pytest.approx(lat + 1e9 / alg, rel=1e-12)


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
