"""Tests of the pure parts of the timing protocol (no GPU; torch-dependent parts are skipped)."""
import gzip
import math

import pytest

from calibration.networks import gpu_common, timing, zoo


def test_percentiles():
    xs = [5.0, 1.0, 3.0, 2.0, 4.0]
    st = gpu_common.summarize(xs)
    assert st["median_s"] == 3.0 and st["n"] == 5
    assert st["p10_s"] == pytest.approx(1.4) and st["p90_s"] == pytest.approx(4.6)
    assert math.isnan(gpu_common.percentile([], 50))


def test_budget():
    assert not gpu_common.Budget(0).over() and gpu_common.Budget(0).left_s() == math.inf
    assert gpu_common.Budget(1e-9, start=1.0).over()


def test_compare_programs():
    names = ["k_a"] * 50 + ["k_b"] * 50
    assert timing.compare_programs(names, list(names)) == (False, "")
    assert timing.compare_programs(names, names[:-1])[0] is False          # 1 % count difference
    differs, why = timing.compare_programs(names, names[:90])
    assert differs and "count" in why
    differs, why = timing.compare_programs(names, names[:-1] + ["k_c"])
    assert differs and "k_c" in why
    assert timing.compare_programs([], names)[0]


def test_reference_time_rules():
    r = timing.TimingCaseResult("n", "fp16", 1, replay_median_s=1e-3, kernel_sum_eager_s=0.9e-3,
                          n_kernels_eager=100, program_differs=False)
    timing.reference_time(r)
    assert r.reference_time_s == 1e-3 and r.reference_source == "replay_median"
    r.program_differs = True
    timing.reference_time(r)
    assert r.reference_time_s == pytest.approx(0.9e-3 + 100 * 0.45e-6)
    assert r.reference_source == "eager_kernel_sum+launch"
    empty = timing.TimingCaseResult("n", "fp16", 1, replay_median_s=1e-3, kernel_sum_eager_s=0.0,
                              n_kernels_eager=0, program_differs=True)
    timing.reference_time(empty)           # no kernel list (profiler trouble): fall back to the replay
    assert empty.reference_time_s == 1e-3 and empty.reference_source == "replay_median_unverified"


def test_parse_args(tmp_path):
    o = timing.parse_args(["--out", str(tmp_path)])
    assert o.precisions == ("fp32", "tf32", "fp16", "bf16") and o.batches == (1, 32)
    assert o.replays >= 50 and o.repeats == 3 and o.eager_iters >= 30
    assert o.names == tuple(zoo.names())
    o = timing.parse_args(["--out", str(tmp_path), "--names", "gpt2", "--precisions", "bf16",
                           "--batches", "1,8", "--max-seconds", "60"])
    assert o.names == ("gpt2",) and o.precisions == ("bf16",) and o.batches == (1, 8) and o.max_seconds == 60
    with pytest.raises(SystemExit):
        timing.parse_args(["--out", str(tmp_path), "--precisions", "fp8"])


def test_kernel_csv_appends(tmp_path):
    path = tmp_path / "kernels.csv.gz"
    row = dict(network="n", precision="fp16", batch=1, kernel_idx=0, kernel_name="k, with comma",
               duration_us=1.5, start_us=0.0, module_path="layer1.0.conv1", aten_op="aten::conv2d",
               leaf_op="aten::cudnn_convolution", input_shapes="[[1,3,4,4]]", source="eager")
    timing.write_kernel_rows(path, [row])
    timing.write_kernel_rows(path, [dict(row, kernel_idx=1)])
    import csv

    with gzip.open(path, "rt") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 2 and rows[1]["kernel_idx"] == "1" and rows[0]["kernel_name"] == "k, with comma"
    assert tuple(rows[0]) == timing.KERNEL_COLUMNS


def test_summary_table():
    from dataclasses import asdict

    ok = timing.TimingCaseResult("resnet50", "fp16", 1, replay_medians_s=[1e-3, 1.01e-3, 1.02e-3],
                           reference_time_s=1.01e-3, eager_median_s=2e-3, n_kernels_eager=120,
                           program_differs=False)
    bad = timing.TimingCaseResult("resnet50", "fp16", 32, error="[warmup] OutOfMemoryError: CUDA out of memory")
    table = timing.summary_table([asdict(ok), asdict(bad)], (1, 32))
    assert "resnet50" in table and "1.010" in table and "ERR" in table and "1 with errors" in table


def test_dry_run_cpu_small_lstm(tmp_path):
    pytest.importorskip("torch")
    opts = timing.parse_args(["--out", str(tmp_path), "--names", "lstm", "--precisions", "fp32",
                              "--batches", "1", "--replays", "3", "--min-replays", "2", "--repeats", "2",
                              "--eager-iters", "3", "--case-budget-s", "0.05", "--dry-run-cpu"])
    try:
        doc = timing.run(opts, "test")
    finally:
        gpu_common.use_device("cuda")
    (case,) = doc["cases"]
    assert case["error"] == "" and len(case["replay_medians_s"]) == 2 and case["eager_median_s"] > 0
    assert (tmp_path / "timing.json").exists()


def test_sweep_cases_keeps_errors_and_writes_after_each_case(tmp_path):
    """calibration.networks.timing.sweep_cases (amp_kernels.py, training/forward_kernels.py): a failing case is
    recorded with its key and error, the sweep goes on, and the JSON on disk holds every case and finished_utc."""
    import json

    from calibration.networks.timing import sweep_cases

    def boom():
        raise RuntimeError("no GPU")

    path = tmp_path / "k.json"
    jobs = [({"network": "a", "mode": "x"}, lambda: {"network": "a", "mode": "x", "n_kernels": 3}),
            ({"network": "b", "mode": "y"}, boom)]
    doc = sweep_cases(path, {"cases": []}, jobs)
    assert doc["cases"][1] == {"network": "b", "mode": "y", "error": "RuntimeError: no GPU"}
    on_disk = json.loads(path.read_text())
    assert [c["network"] for c in on_disk["cases"]] == ["a", "b"] and "finished_utc" in on_disk


def test_a_network_killed_midway_keeps_its_finished_precisions(tmp_path, monkeypatch):
    """timing.run writes timing.json after every precision of a network: a process its timeout kills keeps them
    (MobileNetV5 at 768x768 lost every case that way)."""
    import json

    pytest.importorskip("torch")
    opts = timing.parse_args(["--out", str(tmp_path), "--names", "lstm", "--precisions", "fp32,tf32",
                              "--batches", "1", "--replays", "3", "--min-replays", "2", "--repeats", "2",
                              "--eager-iters", "3", "--case-budget-s", "0.05", "--dry-run-cpu"])
    real = timing.prepare_module

    def killed_at_tf32(base, precision):
        if precision == "tf32":
            raise SystemExit("killed")  # not an Exception: nothing in the sweep catches it, as with a SIGKILL
        return real(base, precision)

    monkeypatch.setattr(timing, "prepare_module", killed_at_tf32)
    try:
        with pytest.raises(SystemExit):
            timing.run(opts, "test")
    finally:
        gpu_common.use_device("cuda")
    on_disk = json.loads((tmp_path / "timing.json").read_text())
    assert [(c["precision"], c["error"]) for c in on_disk["cases"]] == [("fp32", "")]
