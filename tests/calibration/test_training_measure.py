"""Tests of calibration.training.measure: options, summary table, and a CPU dry run of a tiny case."""
import json
import math

import pytest

from calibration.networks import gpu_common, zoo
from calibration.training import measure


def test_parse_args_defaults(tmp_path):
    o = measure.parse_args(["--out", str(tmp_path)])
    assert o.names == measure.DEFAULT_NAMES and all(n in zoo.NETWORKS for n in o.names)
    assert o.precisions == ("fp32", "tf32", "amp", "amp_bf16") and o.batches == ()
    assert o.optimizer == "adamw" and o.warmup == 3 and (o.min_steps, o.max_steps) == (5, 20)
    assert gpu_common.DEVICE == "cuda"


def test_parse_args_overrides(tmp_path):
    o = measure.parse_args(["--out", str(tmp_path), "--names", "gpt2,lstm", "--precisions", "amp_bf16",
                            "--batches", "8,32", "--optimizer", "sgd", "--max-seconds", "200", "--dry-run-cpu"])
    try:
        assert o.names == ("gpt2", "lstm") and o.precisions == ("amp_bf16",) and o.batches == (8, 32)
        assert o.optimizer == "sgd" and o.max_seconds == 200 and gpu_common.DEVICE == "cpu"
    finally:
        gpu_common.use_device("cuda")
    for bad in (["--precisions", "fp16"], ["--optimizer", "lamb"], ["--names", "nope"]):
        with pytest.raises(SystemExit):
            measure.parse_args(["--out", str(tmp_path), *bad])


def test_default_batches():
    nets = zoo.NETWORKS
    assert measure.default_batches(nets["resnet50"]) == (8, 32)
    assert measure.default_batches(nets["deeplabv3_resnet50"]) == (2, 8)
    assert measure.default_batches(nets["bert_base"]) == (8, 32)
    assert measure.default_batches(nets["gru"]) == (8, 32)
    opts = measure.TrainingOptions(out_dir="x", batches=(4,))
    assert measure.case_batches(nets["resnet50"], opts) == (4,)


def test_summary_table():
    ok = {"network": "resnet50", "precision": "amp", "batch": 32, "error": "", "step_median_s": 0.05,
          "forward_median_s": 0.015, "backward_median_s": 0.03, "optimizer_median_s": 0.005,
          "peak_allocated_bytes": 3 * 2 ** 30, "n_kernels_forward": 170, "n_kernels_backward": 320,
          "n_kernels_optimizer": 12}
    bad = {"network": "gpt2", "precision": "fp32", "batch": 32, "error": "[timing] OutOfMemoryError: boom"}
    lines = measure.summary_table([ok, bad]).splitlines()
    assert lines[0].split()[:4] == ["network", "prec", "batch", "step_ms"]
    assert lines[1].split() == ["resnet50", "amp", "32", "50.000", "15.000", "30.000", "5.000", "3.00",
                                "170/320/12"]
    assert "ERR" in lines[2] and "OutOfMemoryError" in lines[2]
    assert lines[3] == "2 cases, 1 with errors"
    nan_peak = dict(ok, peak_allocated_bytes=math.nan)
    assert "nan" in measure.summary_line(nan_peak)


def test_phase_at():
    class Op:
        class time_range:
            start = 5.0

    intervals = [(0.0, 4.0, "phase::forward"), (4.0, 9.0, "phase::backward")]
    assert measure._phase_at(Op, intervals) == "phase::backward"
    assert measure._phase_at(None, intervals) is None


def test_phase_kernels_by_gpu_start():
    """A kernel belongs to the phase whose (synchronized) CPU interval holds its GPU start."""

    class TR:
        def __init__(self, a, b):
            self.start, self.end = a, b

        def elapsed_us(self):
            return self.end - self.start

    class Ev:
        def __init__(self, name, a, b, device=False):
            from torch.autograd import DeviceType

            self.name, self.time_range = name, TR(a, b)
            self.device_type = DeviceType.CUDA if device else DeviceType.CPU
            self.linked_correlation_id, self.id, self.cpu_parent = (0, 0, None)

    class Prof:
        def events(self):
            return [Ev("phase::forward", 0, 10), Ev("phase::backward", 10, 30), Ev("phase::optimizer", 30, 40),
                    Ev("k_fwd", 2, 5, True), Ev("k_bwd1", 11, 15, True), Ev("k_bwd2", 15, 22, True),
                    Ev("Memset (Device)", 31, 32, True), Ev("k_opt", 33, 39, True), Ev("k_late", 50, 51, True)]

    pytest.importorskip("torch")
    out = measure.phase_kernels(Prof())
    assert out["forward"] == (1, 3) and out["backward"] == (2, 11) and out["optimizer"] == (1, 6)
    assert out["memops"] == (1, 1) and out["unattributed"] == (1, 1)


def test_cpu_dry_run(tmp_path, monkeypatch):
    pytest.importorskip("torch")
    lstm = zoo.NETWORKS["lstm"]
    tiny = zoo.NetworkSpec("tiny_lstm", "rnn", "custom", "train", zoo._rnn("lstm", 8, 16, 1, 4), "sequence",
                           (6, 8))
    monkeypatch.setitem(zoo.NETWORKS, "tiny_lstm", tiny)
    out = tmp_path / "out"
    try:
        rc = measure.main(["--out", str(out), "--names", "tiny_lstm", "--batches", "2", "--precisions",
                           "fp32,amp_bf16", "--warmup", "1", "--min-steps", "2", "--max-steps", "3",
                           "--dry-run-cpu"])
    finally:
        gpu_common.use_device("cuda")
    assert rc == 0 and lstm is zoo.NETWORKS["lstm"]
    doc = json.loads((out / "training.json").read_text())
    assert doc["environment"]["torch"] and doc["options"]["names"] == ["tiny_lstm"]
    cases = doc["cases"]
    assert [(c["precision"], c["batch"]) for c in cases] == [("fp32", 2), ("amp_bf16", 2)]
    for c in cases:
        assert c["error"] == "" and c["profile_error"] == "", c
        assert 2 <= c["n_steps"] <= 3 and c["output_shape"] == [2, 6, 4]
        for name in ("forward", "backward", "optimizer", "step"):
            assert c[f"{name}_median_s"] > 0
        assert c["step_p10_s"] <= c["step_median_s"] <= c["step_p90_s"]
        assert c["step_median_s"] == pytest.approx(c["forward_median_s"] + c["backward_median_s"]
                                                   + c["optimizer_median_s"], rel=0.5)
        for p in measure.PHASES:
            assert f"n_kernels_{p}" in c and f"kernel_sum_{p}_s" in c
        assert math.isnan(c["peak_allocated_bytes"]) and c["n_params"] > 0
        assert c["param_bytes"] == 4 * c["n_params"] and c["optimizer_state_bytes"] > 0
        assert math.isfinite(c["final_loss"])
        assert c["graph_error"] == "" and c["step_graph_median_s"] > 0 and c["n_graph_replays"] >= 3
    assert cases[0]["optimizer_kwargs"] == {"lr": 1e-4, "fused": False}
    assert cases[1]["autocast_dtype"] == "bfloat16" and not cases[1]["grad_scaler"]


def test_forward_kernel_tables_are_committed_for_train_and_heldout_networks():
    """calibration/training/forward_kernels.py's tables: train() and eval() forwards of every default network at fp32
    and tf32, batch 32, each with kernel rows; the fit reads only the training-split ones."""
    import json

    from calibration.fit.train_fit import FORWARD_KERNELS
    from calibration.training.forward_kernels import DEFAULT_NAMES

    doc = json.loads(FORWARD_KERNELS.read_text())
    keys = {(c["network"], c["precision"], c["mode"]) for c in doc["cases"] if c.get("rows")}
    assert keys == {(n, p, m) for n in DEFAULT_NAMES.split(",") for p in ("fp32", "tf32") for m in ("train", "inference")}
    assert doc["environment"]["gpu_name"].startswith("NVIDIA H200")
