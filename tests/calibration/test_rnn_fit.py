"""calibration/fit/rnn_fit.py: the recurrent classes and rnn_overlap come back from the committed LSTM/GRU calls."""
import math
from types import SimpleNamespace

import pytest

from calibration.fit.rnn_fit import PARAMS, Sample, call_time, fit_rnn, persistent_lstm, samples
from predictor.fitted import bundled_calibration
from predictor.machine.profile import load_profile
from predictor.timing.features import KernelFeatures


@pytest.fixture(scope="module")
def calls():
    return samples()


def test_samples_leave_out_the_persistent_calls(calls):
    """96 rnn_steps calls (LSTM/GRU x 3 widths x batch 1/32 x 1/2 layers x 4 precisions) less the 3 one-layer fp16
    LSTMs at batch 32 that cuDNN runs persistently; batch 1 is the GEMV class."""
    assert len(calls) == 93
    assert not any(s.op == "lstm" and s.precision == "fp16" and s.batch == 32 and s.layers == 1 for s in calls)
    assert {s.cls for s in calls if s.batch == 1} == {"rnn_gemv"} and {s.cls for s in calls if s.batch == 32} == {"rnn"}
    assert all(len(s.features) == s.layers and all(f.kernels == 65 for f in s.features) for s in calls)


@pytest.mark.parametrize("op,prec,p,expected", [
    ("lstm", "fp16", {"layers": 1, "hidden": 512, "input": 512, "batch": 32}, True),
    ("lstm", "bf16", {"layers": 1, "hidden": 512, "input": 512, "batch": 32}, False),  # cuDNN half only
    ("gru", "fp16", {"layers": 1, "hidden": 512, "input": 512, "batch": 32}, False),
    ("lstm", "fp16", {"layers": 2, "hidden": 512, "input": 512, "batch": 32}, False),
    ("lstm", "fp16", {"layers": 1, "hidden": 512, "input": 512, "batch": 1}, False),
    ("lstm", "fp16", {"layers": 1, "hidden": 500, "input": 512, "batch": 32}, False),
    ("lstm", "fp16", {"layers": 1, "hidden": 512, "input": 512, "batch": 256}, False),
    ("lstm", "fp16", {"layers": 1, "hidden": 512, "input": 512, "batch": 32, "bidirectional": True}, False),
])
def test_persistent_rule(op, prec, p, expected):
    assert persistent_lstm(op, prec, p) is expected


def test_call_time_by_hand():
    """Two layers: each t0 x kernels + max(compute / eff_compute, HBM / eff_memory, L2 / eff_l2) + kernels x gap; the
    second layer's fixed part (t0 and gaps) less the overlap."""
    f = KernelFeatures(kernels=65.0, compute_s=4e-5, gemm_k=0.0, hbm_s=1e-5, l2_s=3e-5, l1_s=1e-6, rows_per_sm=0.0,
                       walk_waves=0.0, walk_bytes_per_sm=0.0)
    s = Sample("lstm", "fp32", 32, 512, 2, 1e-3, "rnn", (f, f))
    prm = {("rnn", "fp32"): {"t0_s": 2e-6, "eff_compute": 0.2, "eff_memory": 0.5, "eff_l2": 0.25}}
    fixed = 65 * 2e-6 + 65 * 1e-6
    body = max(4e-5 / 0.2, 1e-5 / 0.5, 3e-5 / 0.25, 1e-6)
    expected = (fixed + body) + (fixed * (1 - 0.6) + body)
    assert math.isclose(call_time(s, prm, 0.6, 1e-6, 256.0), expected, rel_tol=1e-12)


def test_gemv_call_is_never_slower_than_the_batched_class():
    f = KernelFeatures(kernels=65.0, compute_s=1e-6, gemm_k=0.0, hbm_s=1e-6, l2_s=1e-4, l1_s=0.0, rows_per_sm=0.0,
                       walk_waves=0.0, walk_bytes_per_sm=0.0)
    s = Sample("gru", "tf32", 1, 256, 1, 1e-4, "rnn_gemv", (f,))
    prm = {("rnn_gemv", "tf32"): {"t0_s": 1e-6, "eff_compute": 0.5, "eff_memory": 0.5, "eff_l2": 0.1},
           ("rnn", "tf32"): {"t0_s": 1e-6, "eff_compute": 0.5, "eff_memory": 0.5, "eff_l2": 0.5}}
    assert math.isclose(call_time(s, prm, 0.0, 0.0, 256.0), 65e-6 + 1e-4 / 0.5, rel_tol=1e-12)


def test_bundled_recurrent_classes_are_the_call_fit(calls):
    """The main fit holds rnn, rnn_gemv and rnn_overlap at this fit's values (with its own replay gap); the calls are
    priced within 10% on average."""
    cal = bundled_calibration(load_profile("h200"))
    entry, report = fit_rnn(calls, cal.kernel_gap_s, cal.gemm_k_half, log=lambda *_: None)
    assert report["mape"] < 0.10 and report["samples"] == 93
    assert cal.rnn_overlap == pytest.approx(report["rnn_overlap"], rel=1e-6)
    for cls in ("rnn", "rnn_gemv"):
        for p in ("fp32", "tf32", "fp16", "bf16"):
            prm = cal.params(cls, p)
            for k in PARAMS:
                assert entry[cls][p][k] == pytest.approx(getattr(prm, k), rel=1e-6)
