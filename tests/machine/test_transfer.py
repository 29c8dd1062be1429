"""Transfer of the H200 calibration to other GPUs: achievable ceilings, what the output says."""
import json
import math

import pytest

from predictor.fitted import bundled_calibration
from predictor.machine.profile import load_profile
from predictor.machine.transfer import achievable_fractions, transfer_of, transfer_profile
from predictor.types import MemLevel, Precision, Unit


def test_h200_fractions_are_measured_over_datasheet():
    f = achievable_fractions("default")
    assert f["bandwidth_Bps.HBM"] == 3952090131751.126 / 4.8e12                 # 0.823
    assert f["peak_flops_per_s.fp32.cuda"] == 61900351337757.07 / 66900000000000.01  # 0.925
    assert f["bandwidth_Bps.L2"] == 8903406257654.213 / 10137600000000.0          # 0.878


def test_a_datasheet_hopper_gets_the_h200s_measured_fractions():
    t = transfer_profile(load_profile("gh200"))  # datasheet ceilings only
    h200 = load_profile("h200")
    assert t.profile.peak(Precision.FP32, Unit.CUDA) == pytest.approx(67e12 * 61900351337757.07 / 66900000000000.01,
                                                                      rel=1e-12)
    assert t.profile.bandwidth(MemLevel.HBM) == pytest.approx(4.0e12 * 3952090131751.126 / 4.8e12, rel=1e-12)
    # 16-bit CUDA cores: achievable fp32 x the H200's measured fp16/fp32 ratio
    ratio = h200.peak(Precision.FP16, Unit.CUDA) / h200.peak(Precision.FP32, Unit.CUDA)
    assert t.profile.peak(Precision.FP16, Unit.CUDA) == pytest.approx(t.profile.peak(Precision.FP32, Unit.CUDA) * ratio,
                                                                      rel=1e-9)


def test_h100_ceilings_are_its_own_ert_run_but_l1():
    """The H100 SXM5's ceilings were measured on one (calibration/data/h100/ert, 2026-12-05); its ERT run found no L1
    plateau above L2, so L1 stays derived from the datasheet and takes the H200's achievable fraction."""
    t = transfer_profile(load_profile("h100"))
    assert dict(t.factors) == {"bandwidth_Bps.L1": pytest.approx(29628237246608.758 / 33454080000000.0)}
    assert t.profile.bandwidth(MemLevel.HBM) == 2892791576682.0566
    assert t.profile.bandwidth(MemLevel.L2) == 7570875332755.885
    assert "e.g. L1 x0.886" in t.summary()


def test_measured_ceilings_are_used_as_they_are():
    assert transfer_profile(load_profile("v100")).factors == {}
    t4 = transfer_profile(load_profile("t4"))
    # its L2 is derived from the V100's published ERT L2 (derived-measured): only the sustained clock scales it
    assert t4.factors["bandwidth_Bps.L2"] == pytest.approx(900 / 1590)
    assert t4.factors["bandwidth_Bps.HBM"] == 828.8e9 / 900e9   # Turing takes the V100 ERT / datasheet fraction


def test_sustained_clock_scales_compute_and_on_chip_bandwidth():
    import dataclasses

    from predictor.types import frozen_map

    t4 = load_profile("t4")
    # a T4-like board of more than 75 W without a sustained clock: boost clock (the power-limited rule is off)
    t4 = dataclasses.replace(t4, sustained_sm_clock_hz=0.0, datasheet=frozen_map({**t4.datasheet, "tdp_w": 250}))
    slow = dataclasses.replace(t4, sustained_sm_clock_hz=1.2e9)
    a, b = transfer_profile(t4), transfer_profile(slow)
    assert a.clock_factor == 1.0 and b.clock_factor == pytest.approx(1.2 / 1.59)
    assert b.factors["peak_flops_per_s.fp32.cuda"] == pytest.approx(a.factors["peak_flops_per_s.fp32.cuda"] * 1.2 / 1.59)
    assert b.factors["bandwidth_Bps.HBM"] == a.factors["bandwidth_Bps.HBM"]       # memory has its own clock


def test_power_limited_boards_take_the_t4s_measured_sustained_fraction_of_boost():
    import dataclasses

    from predictor.machine.transfer import power_limited_clock_fraction

    assert power_limited_clock_fraction() == 900e6 / 1590e6
    l4, p4 = transfer_profile(load_profile("l4")), transfer_profile(load_profile("p4"))
    assert l4.clock_factor == p4.clock_factor == 900e6 / 1590e6            # 72 W and 75 W: no published clock
    assert l4.factors["peak_flops_per_s.fp32.cuda"] == pytest.approx(61900351337757.07 / 66.9e12 * 900 / 1590)
    assert l4.factors["bandwidth_Bps.HBM"] == 3952090131751.126 / 4.8e12    # memory has its own clock
    assert "power-limited board (72 W <= 75 W)" in l4.to_json()["sm_clock"]["why"]
    assert "SM clock x0.566 (sustained)" in l4.summary()
    assert transfer_profile(load_profile("t4")).clock_why == "sustained / boost clock"   # its own measurement
    for gpu in ("a10", "a100-pcie-40gb", "h100", "v100-pcie-32gb"):                 # 150-700 W: boost clock
        assert transfer_profile(load_profile(gpu)).clock_factor == 1.0
    own = dataclasses.replace(load_profile("l4"), sustained_sm_clock_hz=1.5e9)      # a published clock wins
    assert transfer_profile(own).clock_factor == pytest.approx(1.5 / 2.04)


def _total(model, gpu, precision):
    from predictor.predict import predict_file

    prof = load_profile(gpu)
    return predict_file(model, prof, precision=precision, calibration=bundled_calibration(prof)).total_time_s


@pytest.mark.parametrize("precision", ["fp32", "fp16"])
def test_h200_never_slower_than_h100(conv_model, precision):
    assert _total(conv_model, "h200", precision) <= _total(conv_model, "h100", precision)
    # the same GPU with datasheet ceilings predicts as the measured one once the fractions are applied
    assert _total(conv_model, "h200-datasheet", precision) == pytest.approx(_total(conv_model, "h200", precision),
                                                                            rel=1e-9)


def test_output_says_what_was_transferred(conv_model, capsys):
    from predictor.cli import main

    assert main([conv_model, "--gpu", "l4", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["transfer"]["from_gpu"] == "h200" and doc["transfer"]["to_gpu"] == "l4"
    assert doc["transfer"]["ceilings"]["bandwidth_Bps.HBM"]["factor"] == pytest.approx(3952090131751.126 / 4.8e12)
    assert main([conv_model, "--gpu", "h200", "--format", "json"]) == 0
    assert "transfer" not in json.loads(capsys.readouterr().out)
    assert main([conv_model, "--gpu", "l4"]) == 0
    assert "calibration of h200 transferred to l4" in capsys.readouterr().out
    assert transfer_of("uncalibrated", load_profile("l4")) is None


def test_t4_holds_its_published_sustained_clock():
    t4 = load_profile("t4")
    assert t4.sustained_sm_clock_hz == 900e6 and t4.source_kind("sustained_sm_clock_hz") == "published-measurement"
    assert "inference_results_v0.5/issues/20" in t4.sources["sustained-clock"]["reference"]


@pytest.mark.parametrize("gpu, factor", [("v100", 2.0), ("t4", 2.0), ("a100", 2.0), ("p100-pcie-16gb", 1.0),
                                         ("p4", 1.0), ("a10", 1.0), ("l4", 1.0), ("h100", 1.0), ("b200", 1.0)])
def test_fp32_issue_headroom_by_compute_capability(gpu, factor):
    assert transfer_profile(load_profile(gpu)).fp32_issue_factor == factor


def test_fp32_issue_rule_raises_library_gemm_efficiency_to_at_most_one():
    t = transfer_profile(load_profile("v100"))
    assert t.efficiency("gemm", "fp32", 0.4) == 0.8 and t.efficiency("conv", "fp32", 0.7334) == 1.0
    assert t.efficiency("gemm", "fp16", 0.4) == 0.4       # tensor cores: as fitted
    assert t.efficiency("elementwise", "fp32", 0.4) == 0.4 and t.efficiency("rnn", "fp32", 0.2) == 0.2
    assert transfer_profile(load_profile("h100")).efficiency("gemm", "fp32", 0.4) == 0.4
    doc = t.to_json()["fp32_issue"]
    assert doc["factor"] == 2.0 and "128/64 on v100 (sm_70)" in doc["why"]
    assert "fp32 GEMM-like x2 (issue width)" in t.summary()


def test_fp32_issue_rule_is_as_fitted_for_an_unknown_compute_capability():
    import dataclasses

    odd = dataclasses.replace(load_profile("v100"), compute_capability="")
    t = transfer_profile(odd)
    assert t.fp32_issue_factor == 1.0 and "(not given)" in t.fp32_issue_why


def test_read_ceiling_takes_the_h200_ratio_where_the_target_has_none():
    from predictor.machine.profile import load_profile
    from predictor.machine.transfer import transfer_profile
    from predictor.types import MemLevel

    h200 = load_profile("h200")
    ratio = h200.hbm_read_bandwidth_Bps / h200.bandwidth(MemLevel.HBM)  # 4.636 / 3.952 TB/s
    moved = transfer_profile(load_profile("a100")).profile
    assert load_profile("a100").hbm_read_bandwidth_Bps == 0.0
    assert math.isclose(moved.hbm_read_bandwidth_Bps, moved.bandwidth(MemLevel.HBM) * ratio, rel_tol=1e-12)
    assert transfer_profile(h200).profile.hbm_read_bandwidth_Bps == h200.hbm_read_bandwidth_Bps
    # the H100's own ERT read sweep (calibration/data/h100/ert): used as measured
    assert transfer_profile(load_profile("h100")).profile.hbm_read_bandwidth_Bps == 3176963266497.5244
