"""The kernel time model written once (predictor/timing): exact values on floats and on numpy arrays."""
import math

import numpy as np
import pytest

from predictor.fitted import ClassParams
from predictor.timing import (NUMPY_OPS, PARAMS, KernelFeatures, hidden_bytes_share, hidden_kernel_time, kernel_time,
                              param_bounds)
from predictor.timing.params import GEMM_LIKE_MIN_MEMORY, MIN_TENSOR_EFFICIENCY

F = KernelFeatures(kernels=2, compute_s=10e-6, gemm_k=256, hbm_s=4e-6, l2_s=1e-6, l1_s=0.5e-6, rows_per_sm=3,
                   walk_waves=2, walk_bytes_per_sm=1000)
P = ClassParams(t0_s=1e-6, eff_compute=0.5, eff_memory=0.25, row_s=1e-9, block_s=2e-7, eff_l2=0.5)


def test_fixed_and_body_on_floats():
    fixed, body, times = kernel_time(F, P, gemm_k_half=256)
    # compute: 10 us / (0.5 x 256 / (256 + 256)) = 40 us; HBM 4 / 0.25 = 16 us; L2 1 / 0.5 = 2 us; L1 0.5 us
    assert times["compute"] == pytest.approx(40e-6, rel=1e-12)
    assert times["HBM"] == pytest.approx(16e-6, rel=1e-12)
    assert times["L2"] == pytest.approx(2e-6, rel=1e-12)
    assert body == pytest.approx(40e-6, rel=1e-12)
    # fixed: 2 x 1 us + (3 + 1000) x 1 ns + 2 x 0.2 us = 2 + 1.003 + 0.4 = 3.403 us
    assert fixed == pytest.approx(3.403e-6, rel=1e-12)


def test_thread_loop_steps_pay_row_s_each():
    f = KernelFeatures(1, 0.0, 0.0, 4e-6, 0.0, 0.0, 0.0, 0.0, 0.0, loop_steps=500.0)
    fixed, _, _ = kernel_time(f, P, gemm_k_half=256)
    assert fixed == pytest.approx(1e-6 + 500 * 1e-9, rel=1e-12)


def test_no_gemm_no_flops():
    f = KernelFeatures(1, 0.0, 0.0, 4e-6, 0.0, 0.0, 0.0, 0.0, 0.0)
    fixed, body, times = kernel_time(f, P, gemm_k_half=256)
    assert times["compute"] == 0.0 and body == pytest.approx(16e-6) and fixed == pytest.approx(1e-6)


def test_arrays_give_the_floats_answer():
    cols = {k: np.array([getattr(F, k), getattr(F, k) * 2]) for k in F.__dataclass_fields__}
    arr = type("Rows", (), cols)
    fixed, body, _ = kernel_time(arr, P, 256, NUMPY_OPS)
    f1, b1, _ = kernel_time(F, P, 256)
    assert fixed[0] == pytest.approx(f1, rel=1e-12) and body[0] == pytest.approx(b1, rel=1e-12)
    # doubling every feature doubles the fixed cost; the K efficiency changes: 20 us / (0.5 x 512/768) = 60 us
    assert fixed[1] == pytest.approx(2 * f1, rel=1e-12) and body[1] == pytest.approx(60e-6, rel=1e-12)


@pytest.mark.parametrize("count, share", [(0.0, 0.0), (1.0, 0.5), (2.0, 1.0), (3.5, 1.0)])
def test_hidden_share(count, share):
    assert hidden_bytes_share(count) == share
    assert hidden_bytes_share(np.array([count]))[0] == share


def test_hidden_kernel_time():
    # 1 kernel: 1 us + half of 8 us of bytes at 0.5 of HBM = 1 + 8 = 9 us
    assert hidden_kernel_time(1.0, 8e-6, 1e-6, 0.5) == pytest.approx(9e-6)


def test_efficiencies_are_fractions():
    for name in ("eff_compute", "eff_memory", "eff_l2"):
        lo, hi = param_bounds(name)
        assert 0 < lo < hi == 1.0
    assert param_bounds("eff_memory", "conv", "fp16")[0] == GEMM_LIKE_MIN_MEMORY
    assert param_bounds("eff_memory", "elementwise", "fp16")[0] == PARAMS["eff_memory"].lower
    assert param_bounds("eff_compute", "gemm", "bf16")[0] == MIN_TENSOR_EFFICIENCY
    assert param_bounds("eff_compute", "gemm", "fp32")[0] == PARAMS["eff_compute"].lower
    assert all(math.isfinite(p.start) and p.lower <= p.start <= p.upper for p in PARAMS.values())


def test_bundled_calibration_is_physical():
    """Every efficiency of the bundled fit is in (0, 1] and the file says which parameters the data determined."""
    import json
    from importlib import resources

    doc = json.loads(resources.files("predictor").joinpath("data", "calibration_h200.json").read_text())
    for cls, by_p in doc["classes"].items():
        for prec, v in by_p.items():
            for k in ("eff_compute", "eff_memory"):
                assert 0 < v[k] <= 1.0, f"{cls}.{prec}.{k} = {v[k]}"
    report = doc["fit_report"]
    assert report["parameters"] and isinstance(report["undetermined"], list)
    for cls, by_p in report["parameters"].items():
        for prec, ps in by_p.items():
            for name, entry in ps.items():
                assert entry["lower"] <= entry["value"] <= entry["upper"] * (1 + 1e-9)
                if entry["determined"]:
                    assert entry["at_bound"] is None and entry["stderr_rel"] < 0.5
                else:
                    assert f"{cls}.{prec}.{name}" in report["undetermined"]
