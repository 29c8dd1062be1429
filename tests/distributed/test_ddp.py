"""DDP's buckets and their overlap with backward, on synthetic steps with exact expected times."""
import pytest

from predictor.distributed.collectives import Layout, collective_time
from predictor.distributed.ddp import MIB, DPConfig, assign_buckets, dp_step, simulate_overlap
from predictor.distributed.gradients import synthetic_step
from predictor.distributed.system import load_system
from predictor.types import PredictorError


def test_buckets_first_cap_then_bucket_cap():
    # gradient sizes (MiB) in ready order; the first bucket closes at >= 1 MiB (0.5 + 0.6), the others at
    # >= 4 MiB: 2 + 2 = 4; 3 + 0.5 = 3.5 stays open, + 5 = 8.5 closes it
    sizes = [x * MIB for x in (0.5, 0.6, 2, 2, 3, 0.5, 5)]
    assert assign_buckets(sizes, 4 * MIB) == [[0, 1], [2, 3], [4, 5, 6]]


def test_a_gradient_larger_than_the_cap_closes_its_bucket():
    assert assign_buckets([30 * MIB, 1.0], 25 * MIB) == [[0], [1]]


def test_overlap_serialises_collectives_and_exposes_the_tail():
    # buckets ready at 1, 2, 9 ms; all-reduces of 3, 3, 2 ms; backward ends at 10 ms
    spans, exposed = simulate_overlap([1e-3, 2e-3, 9e-3], [3e-3, 3e-3, 2e-3], 10e-3)
    assert spans == [pytest.approx((1e-3, 4e-3)), pytest.approx((4e-3, 7e-3)), pytest.approx((9e-3, 11e-3))]
    assert exposed == pytest.approx(1e-3)  # 11 - 10


def test_hidden_communication_is_not_exposed():
    spans, exposed = simulate_overlap([1e-3], [1e-3], 10e-3)
    assert exposed == 0.0


def _step():
    # forward 10 ms, backward 20 ms, optimizer 2 ms; three 10 MiB (fp32) gradients ready at 5, 10 and 20 ms
    n = 10 * MIB // 4
    return synthetic_step(10e-3, 20e-3, 2e-3, [("a", n, 5e-3), ("b", n, 10e-3), ("c", n, 20e-3)],
                          memory={"peak": 1e9, "parameters": 3 * n * 4.0, "gradients": 3 * n * 4.0,
                                  "optimizer_state": 6 * n * 4.0})


def test_one_gpu_is_the_baseline():
    r = dp_step(_step(), load_system("dgx-a100"), Layout(1, 1), DPConfig(), 2e12)
    assert r.step_s == pytest.approx(32e-3) and r.efficiency == 1.0 and r.exposed_comm_s == 0.0


def test_ddp_step_exact_with_bucket_views():
    s = load_system("dgx-a100")
    lay = Layout(8, 1)
    cfg = DPConfig(bucket_mb=10, bucket_view=True)
    hbm = 2e12
    r = dp_step(_step(), s, lay, cfg, hbm)
    # buckets: [a] (first, 10 MiB >= 1 MiB), [b], [c]; each all-reduce of 10 MiB
    t = collective_time("all_reduce", 10 * MIB, s, lay).time_s
    div = 2 * 30 * MIB / hbm                 # divide by world size: read + write the 30 MiB of gradients
    bwd = 20e-3 + div
    scale = bwd / 20e-3
    last_end = max(max(5e-3 * scale + t, 10e-3 * scale) + t, 20e-3 * scale) + t
    exposed = max(0.0, last_end - bwd)
    assert [b.params for b in r.buckets] == [1, 1, 1]
    assert r.exposed_comm_s == pytest.approx(exposed, rel=1e-9)
    assert r.step_s == pytest.approx(10e-3 + bwd + 2e-3 + exposed, rel=1e-9)
    assert r.efficiency == pytest.approx(32e-3 / r.step_s)
    assert r.speedup == pytest.approx(8 * r.efficiency)


def test_fp16_gradients_halve_the_bytes_on_the_wire():
    s, lay = load_system("dgx-a100"), Layout(16, 2)
    full = dp_step(_step(), s, lay, DPConfig(bucket_mb=10), 2e12)
    half = dp_step(_step(), s, lay, DPConfig(bucket_mb=10, grad_comm="fp16"), 2e12)
    assert [b.bytes for b in half.buckets] == [b.bytes / 2 for b in full.buckets]
    assert half.comm_s < full.comm_s


def test_accumulation_hides_communication_in_the_last_micro_batch_only():
    s, lay = load_system("summit"), Layout(12, 2)
    one = dp_step(_step(), s, lay, DPConfig(bucket_mb=10), 2e12)
    four = dp_step(_step(), s, lay, DPConfig(bucket_mb=10, accumulate=4), 2e12)
    assert four.baseline_step_s == pytest.approx(4 * 30e-3 + 2e-3)
    assert four.exposed_comm_s == pytest.approx(one.exposed_comm_s)
    assert four.efficiency > one.efficiency
    assert four.samples_per_step == 4 * one.samples_per_step


def test_zero1_shards_the_optimizer_and_its_state():
    s, lay = load_system("dgx-a100"), Layout(8, 1)
    ddp = dp_step(_step(), s, lay, DPConfig(bucket_mb=10, bucket_view=True), 2e12)
    z1 = dp_step(_step(), s, lay, DPConfig(strategy="zero1", bucket_mb=10, bucket_view=True), 2e12)
    n = 10 * MIB // 4
    # optimizer state 6n x 4 B, 7/8 of it gone
    assert ddp.memory_per_gpu_bytes - z1.memory_per_gpu_bytes == pytest.approx(6 * n * 4.0 * 7 / 8)
    assert z1.compute_s < ddp.compute_s  # optimizer on 1/8 of the parameters


def test_fsdp_shards_everything():
    s, lay = load_system("dgx-a100"), Layout(8, 1)
    f = dp_step(_step(), s, lay, DPConfig(strategy="fsdp", bucket_mb=10), 2e12)
    n = 10 * MIB // 4
    static = (3 + 3 + 6) * n * 4.0
    assert f.memory_per_gpu_bytes == pytest.approx(1e9 - static * 7 / 8 + 2 * 10 * MIB)
    assert f.step_s > f.compute_s


@pytest.mark.parametrize("cfg,msg", [(DPConfig(strategy="pp"), "unknown data-parallel strategy 'pp'"),
                                     (DPConfig(bucket_mb=0), "--bucket-mb must be"),
                                     (DPConfig(accumulate=0), "--accumulate must be at least 1"),
                                     (DPConfig(grad_comm="fp8"), "unknown gradient communication 'fp8'")])
def test_bad_config(cfg, msg):
    with pytest.raises(PredictorError, match=msg):
        cfg.check()
