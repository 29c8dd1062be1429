"""ERT summary and profile building on the committed H200 sweep data (no GPU)."""
import json
from pathlib import Path

import pytest

from predictor.measure.ert.profile_writer import build_profile
from predictor.measure.ert.summary import summarise
from predictor.machine.profile import load_profile, parse_profile

RAW = Path(__file__).resolve().parents[2] / "calibration" / "data" / "h200" / "ert" / "h200_ert_raw.json"


@pytest.fixture(scope="module")
def raw():
    return json.loads(RAW.read_text())


def _levels(raw, canonical, l1):
    s = summarise({**raw, "config": {**raw["config"], "canonical_series": canonical, "l1_series": l1}})
    return s.get("levels", s)


def test_levels_of_the_bundled_profile(raw):
    lv = _levels(raw, "copy_fp32x4", "read_fp32x4")
    assert 28e12 < lv["L1"]["bandwidth_Bps"] < 31e12
    assert 8.5e12 < lv["L2"]["bandwidth_Bps"] < 9.3e12
    assert 3.8e12 < lv["HBM"]["bandwidth_Bps"] < 4.1e12
    # L2 plateau ends before the 60 MiB L2 is full; HBM holds from ~128 MiB to the 4 GiB top of the sweep
    assert lv["L2"]["max_bytes"] < 62914560 < lv["HBM"]["min_bytes"]


def test_ert_scalar_kernel_underreports_hbm(raw):
    lv = _levels(raw, "rmw_fp32", "l1_read_fp32x4")
    assert lv["HBM"]["bandwidth_Bps"] < 3.0e12  # why the bundled profile uses the float4 copy sweep


def test_bundled_profile_matches_committed_data(raw):
    p = load_profile("h200")
    lv = _levels(raw, "copy_fp32x4", "read_fp32x4")
    assert p.bandwidth_Bps[next(k for k in p.bandwidth_Bps if k.value == "HBM")] == pytest.approx(
        lv["HBM"]["bandwidth_Bps"])
    assert p.source_kind("bandwidth_Bps.HBM") == "ert" and p.source_kind("peak_flops_per_s.bf16.tensor") == "ert"
    assert 7.0e14 < p.peak(*[k for k in p.peak_flops_per_s if k[0].value == "bf16" and k[1].value == "tensor"][0]) < 9.9e14


def test_profile_writer_output_validates(raw):
    doc = build_profile(raw, {}, name="h200", raw_data="h200_ert_raw.json",
                        fallback_profile=json.loads(
                            (RAW.parents[4] / "predictor" / "machine" / "profiles" / "h200-datasheet.json").read_text()))
    prof = parse_profile(doc, "rebuilt")
    assert prof.sm_count == 132 and prof.kernel_gap_s < prof.launch_overhead_s
