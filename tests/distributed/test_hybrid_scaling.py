"""The hybrid scheme and the sweep over GPU counts."""
import math

import pytest

from predictor.distributed.collectives import nccl_model
from predictor.distributed.ddp import MIB, DPConfig
from predictor.distributed.gradients import synthetic_step
from predictor.distributed.hybrid import exchange_time, hybrid_step
from predictor.distributed.scaling import log_counts, sweep
from predictor.distributed.system import load_system
from predictor.types import PredictorError


def _step(fwd=10e-3):
    n = 10 * MIB // 4
    return synthetic_step(fwd, 2 * fwd, 1e-3, [("a", n, fwd), ("b", n, 2 * fwd)], memory={"peak": 1e9})


def test_exchange_time_exact():
    s = load_system("summit")
    m = nccl_model()
    per_gpu = 2 * 12.5e9 * m.net_efficiency / 6
    lat = 2 * math.ceil(math.log2(8)) * m.hw_latency_s["net"]["tree"]["Simple"]
    assert exchange_time(6e6, 8, s) == pytest.approx(lat + 2 * 7 / 8 * 6e6 / per_gpu)
    assert exchange_time(6e6, 1, s) == 0.0


def test_hybrid_is_no_slower_than_its_group_and_reports_staleness():
    s = load_system("summit")
    h = hybrid_step(_step(), s, 6 * 64, 6, DPConfig(), 9e11)
    assert h.groups == 64 and h.step_s >= h.group.step_s
    assert h.staleness_steps == max(1, math.ceil(h.exchange_s / h.group.step_s))


def test_hybrid_group_must_divide():
    with pytest.raises(PredictorError, match="must divide"):
        hybrid_step(_step(), load_system("summit"), 60, 7, DPConfig(), 9e11)


def test_sweep_rows_and_efficiency_fall_with_scale():
    s = load_system("summit")
    sc = sweep([_step()], s, [1, 6, 60, 600], DPConfig(), 9e11, hybrid_group=6)
    assert [r.gpus for r in sc.rows] == [1, 6, 60, 600]
    assert sc.rows[0].efficiency == 1.0
    effs = [r.efficiency for r in sc.rows]
    assert effs == sorted(effs, reverse=True)
    assert sc.rows[-1].throughput_per_s == pytest.approx(600 * sc.rows[-1].efficiency / sc.rows[0].step_s)
    assert sc.rows[1].hybrid == () and sc.rows[2].hybrid


def test_two_parts_add_their_steps():
    s = load_system("dgx-a100")
    one = sweep([_step()], s, [8], DPConfig(), 2e12).rows[0]
    two = sweep([_step(), _step()], s, [8], DPConfig(), 2e12).rows[0]
    assert two.step_s == pytest.approx(2 * one.step_s) and two.baseline_step_s == pytest.approx(2 * one.baseline_step_s)


def test_log_counts():
    assert log_counts(load_system("dgx-a100"), limit=64) == [1, 2, 4, 8, 16, 32, 64]
    assert log_counts(load_system("summit"), limit=48) == [1, 2, 4, 6, 12, 24, 48]


def test_input_rate_holds_the_step_to_the_nodes_pipeline():
    # one sample per GPU per step; one-GPU step 10 + 20 + 1 = 31 ms; the node's pipeline delivers 100 samples/s:
    # one GPU needs 10 ms of it (not bound), eight on one node need 80 ms, sixteen on two nodes still 80 ms each
    s = load_system("dgx-a100")
    rows = sweep([_step()], s, [1, 8, 16], DPConfig(input_rate=100.0), 2e12).rows
    assert rows[0].step_s == pytest.approx(31e-3) and not rows[0].input_bound
    assert [r.input_s for r in rows] == pytest.approx([0.01, 0.08, 0.08])
    assert rows[1].step_s == pytest.approx(0.08) and rows[1].input_bound
    assert rows[1].efficiency == pytest.approx(31e-3 / 0.08)
    assert rows[2].throughput_per_s == pytest.approx(16 / 0.08)
    free = sweep([_step()], s, [8], DPConfig(), 2e12).rows[0]
    assert free.input_s == 0.0 and not free.input_bound and free.step_s < 0.08


def test_input_rate_bounds_the_one_gpu_baseline_too():
    s = load_system("dgx-a100")
    rows = sweep([_step()], s, [1, 8], DPConfig(input_rate=10.0), 2e12).rows   # 100 ms per sample
    assert rows[0].step_s == pytest.approx(0.1) and rows[0].efficiency == pytest.approx(1.0)
    assert rows[1].step_s == pytest.approx(0.8) and rows[1].efficiency == pytest.approx(0.125)


def test_input_rate_must_be_positive():
    with pytest.raises(PredictorError, match="--input-rate must be a positive number"):
        DPConfig(input_rate=-1.0).check()
