"""Tests of the what-if sweep: options, summary table, and (with torch) a tiny CPU dry run."""
import math
from dataclasses import asdict

import pytest

from calibration.networks import gpu_common, whatif, zoo


def test_parse_args(tmp_path):
    try:
        o = whatif.parse_args(["--out", str(tmp_path)])
        assert o.modes == whatif.MODES and o.batches == (1, 32) and o.names == tuple(zoo.names("heldout"))
        o = whatif.parse_args(["--out", str(tmp_path), "--names", "gru,gpt2", "--modes", "amp_bf16",
                               "--batches", "1,8", "--max-seconds", "60"])
        assert o.names == ("gru", "gpt2") and o.modes == ("amp_bf16",) and o.batches == (1, 8)
        assert o.max_seconds == 60
        t = o.timing_options()
        assert t.kernel_rows is False and t.repeats == 3 and t.replays == 50
        with pytest.raises(SystemExit):
            whatif.parse_args(["--out", str(tmp_path), "--modes", "amp,fp8"])
        with pytest.raises(SystemExit):
            whatif.parse_args(["--out", str(tmp_path), "--names", "nope"])
    finally:
        gpu_common.use_device("cuda")


def test_summary_table():
    ok = whatif.WhatIfResult("swin_t", "inductor_fp16", 32, mode="inductor_fp16", reference_time_s=2e-3,
                             reference_source="replay_median", baseline_time_s=3e-3, speedup=1.5,
                             n_kernels_replay=140, compile_s=42.0)
    amp = whatif.WhatIfResult("gru", "amp", 1, mode="amp", reference_time_s=0.5e-3, n_kernels_eager=7)
    bad = whatif.WhatIfResult("gpt2", "amp_bf16", 32, mode="amp_bf16", error="skipped: over budget")
    table = whatif.summary_table([asdict(ok), asdict(amp), asdict(bad)])
    lines = table.splitlines()
    assert "speedup" in lines[0] and "compile_s" in lines[0]
    assert "2.000" in lines[1] and "3.000" in lines[1] and "1.50" in lines[1] and "140" in lines[1]
    assert "42.0" in lines[1]
    assert "0.500" in lines[2] and " 7 " in lines[2]
    assert "over budget" in lines[3] and "3 cases, 1 with errors" in lines[-1]


def test_result_keeps_case_fields():
    r = whatif.WhatIfResult("gru", "amp", 1)
    assert math.isnan(r.speedup) and math.isnan(r.compile_s) and r.reference_source == ""


def test_dry_run_cpu_lstm_amp_bf16(tmp_path):
    pytest.importorskip("torch")
    opts = whatif.parse_args(["--out", str(tmp_path), "--names", "lstm", "--modes", "amp_bf16",
                              "--batches", "2", "--warmup", "1", "--replays", "2", "--repeats", "1",
                              "--eager-iters", "2", "--case-budget-s", "0.01", "--dry-run-cpu"])
    try:
        doc = whatif.run(opts, "test")
    finally:
        gpu_common.use_device("cuda")
    (case,) = doc["cases"]
    assert case["error"] == "" and case["mode"] == "amp_bf16" and case["precision"] == "amp_bf16"
    assert case["eager_median_s"] > 0 and len(case["replay_medians_s"]) == 1
    assert math.isfinite(case["reference_time_s"])
    assert (tmp_path / "whatif.json").exists()
