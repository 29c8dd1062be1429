"""Calibrating a GPU we do not ship: the ERT profile from raw data loads, and the quick calibration's arithmetic."""
import json
import shutil
from pathlib import Path

import pytest

from predictor.cli import main
from predictor.machine.profile import load_profile
from predictor.types import MemLevel

REPO = Path(__file__).resolve().parents[2]
RAW = REPO / "calibration" / "data" / "h200" / "ert" / "h200_ert_raw.json"
BENCH = REPO / "calibration" / "data" / "h200" / "microbench" / "microbench.csv"


def test_profile_from_raw_with_default_options_loads_and_reproduces_the_bundled_ceilings(tmp_path, capsys):
    raw = tmp_path / "raw.json"
    shutil.copy(RAW, raw)
    out = tmp_path / "P.json"
    assert main(["calibrate", "ert", "--from-raw", str(raw), "--out", str(out), "--no-charts"]) == 0
    assert "HBM      3.95 TB/s" in capsys.readouterr().out        # the copy series, not rmw's 2.70
    assert main([str(REPO / "examples" / "resnet50.onnx"), "--gpu", str(out), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["gpu"]["name"] == "P" and doc["transfer"]["ceilings"] == {}     # measured ceilings: none scaled
    mine, bundled = load_profile(str(out)), load_profile("h200")
    for lv in MemLevel:
        assert mine.bandwidth(lv) == pytest.approx(bundled.bandwidth(lv), rel=0.02), lv
    assert set(mine.peak_flops_per_s) == set(bundled.peak_flops_per_s)
    for key, v in bundled.peak_flops_per_s.items():
        assert mine.peak_flops_per_s[key] == pytest.approx(v, rel=0.02), key
    assert (mine.sm_count, mine.l2_bytes, mine.sm_clock_hz) == (132, 62914560, 1.98e9)   # 1980 MHz seen by nvidia-smi
    assert mine.source_kind("sm_clock_hz") == "measured" and mine.memory_bytes == 150109880320
    assert mine.launch_overhead_s == pytest.approx(bundled.launch_overhead_s, rel=0.02)


def test_an_explicit_series_is_kept(tmp_path, capsys):
    raw = tmp_path / "raw.json"
    shutil.copy(RAW, raw)
    out = tmp_path / "R.json"
    assert main(["calibrate", "ert", "--from-raw", str(raw), "--out", str(out), "--no-charts",
                 "--bandwidth-series", "rmw_fp32"]) == 0
    assert "HBM      2.70 TB/s" in capsys.readouterr().out   # ERT's scalar read-modify-write series, as asked
    assert load_profile(str(out)).bandwidth(MemLevel.HBM) == pytest.approx(2.70e12, rel=0.01)


def test_calibrate_help_exits_0(capfd):  # the lab's kernel subset runs as its own process: capture the fds
    assert main(["calibrate", "--help"]) == 0
    assert "predict calibrate" in capfd.readouterr().out
    assert main(["calibrate"]) == 2


def test_calibrate_without_a_gpu_says_so(tmp_path, capfd):
    try:  # CuPy is not installed in CI
        import cupy  # noqa: F401
        pytest.skip("CuPy present")
    except ImportError:
        pass
    assert main(["calibrate", "--out", str(tmp_path / "q")]) == 2
    err = capfd.readouterr().err
    assert err.startswith("error: CuPy is not importable") and err.count("\n") == 1


def test_quick_calibration_on_the_h200s_own_data_changes_nothing(tmp_path, capsys):
    out = tmp_path / "q"
    assert main(["calibrate", "--out", str(out), "--name", "mine", "--from-ert", str(RAW),
                 "--from-microbench", str(BENCH)]) == 0
    doc = json.loads((out / "calibration_mine.json").read_text())
    assert doc["gpu"] == "mine" and doc["quick_calibration"]["scaled"]
    assert all(v["factor"] == 1.0 for v in doc["quick_calibration"]["scaled"].values())
    capsys.readouterr()
    model = str(REPO / "examples" / "resnet50.onnx")
    assert main([model, "--gpu", str(out / "mine.json"), "--calibration", str(out / "calibration_mine.json"),
                 "--format", "json"]) == 0
    mine = json.loads(capsys.readouterr().out)["total_time_s"]
    assert main([model, "--gpu", "h200", "--format", "json"]) == 0
    assert mine == pytest.approx(json.loads(capsys.readouterr().out)["total_time_s"], rel=1e-9)


def test_scaled_calibration_divides_efficiencies_by_the_relative_ratio():
    from calibration.quick_calibrate import scaled_calibration

    doc = {"gpu": "h200", "kernel_gap_s": 1e-6,
           "classes": {"default": {"*": {"t0_s": 1e-6, "eff_compute": 0.8, "eff_memory": 0.9}},
                       "conv": {"fp16": {"t0_s": 2e-6, "eff_compute": 0.6, "eff_memory": 0.5}}}}
    ratios = {("conv", "fp16"): [3.0, 4.0, 5.0], ("gemm", "fp32"): [100.0]}
    out = scaled_calibration(doc, ratios, "new", "test", reference={("conv", "fp16"): [2.0]})
    conv = out["classes"]["conv"]["fp16"]
    assert conv["eff_compute"] == pytest.approx(0.6 / 2.0)       # median 4 over the reference's 2
    assert conv["eff_memory"] == pytest.approx(0.5 / 2.0) and conv["t0_s"] == 2e-6
    gemm = out["classes"]["gemm"]["fp32"]                          # no class entry: from default, clamped at 4
    assert gemm["eff_compute"] == pytest.approx(0.8 / 4.0) and out["quick_calibration"]["scaled"]["gemm.fp32"][
        "factor"] == 4.0
    assert doc["classes"]["conv"]["fp16"]["eff_compute"] == 0.6    # the input is not changed
