"""calibration/fit/gemv_fit.py: the gemv class comes back from the committed kernel tables of two GPUs."""
import pytest

from calibration.fit.gemv_fit import _one_row, fit_gemv, samples
from predictor.fitted import bundled_calibration
from predictor.machine.profile import load_profile


@pytest.fixture(scope="module")
def kernel_samples():
    return samples()


def test_one_row_calls_are_read_from_the_profiler_shapes():
    assert _one_row([[1, 2048], [1000, 2048], [1000]]) == (2048, 1000)
    assert _one_row([[1, 1, 512], [512, 512], []]) == (512, 512)
    assert _one_row([[2, 2048], [1000, 2048], [1000]]) is None   # two rows
    assert _one_row([[1, 2048], [1000, 1024]]) is None            # K disagrees: not this call's weight
    assert _one_row([[1, 2048]]) is None


def test_samples_are_training_networks_on_both_gpus(kernel_samples):
    """Only training-split networks' tables, on the H200 and the H100, at fp32 and tf32 (at 16-bit one-row layers are
    the GEMM class's), one-row MatMul features."""
    from calibration.networks import zoo

    assert {s.precision for _, s in kernel_samples} == {"fp32", "tf32"}
    assert all(zoo.NETWORKS[n].split == "train" for n, _ in kernel_samples)
    assert "slanext_wired" in {n for n, _ in kernel_samples}          # an H100 table (spent blind set)
    assert all(s.m == 1 and s.kernels == 1 and s.hbm_s > 0 and s.measured_s > 0 for _, s in kernel_samples)


def test_gemv_is_reproducible_and_held_by_the_main_fit(kernel_samples):
    """The bundled calibration's gemv entry is the kernel fit's; at fp32 the fixed cost is a gemv kernel's (~2 us),
    well under the fp32 GEMM class's."""
    cal = bundled_calibration(load_profile("h200"))
    fitted, report = fit_gemv(kernel_samples, log=lambda *_: None)
    assert set(fitted) == {"fp32", "tf32"}
    for p in ("fp32", "tf32"):
        assert fitted[p]["t0_s"] == pytest.approx(cal.params("gemv", p).t0_s, rel=1e-2)
        assert report[p]["determined"]["t0_s"] and report[p]["determined"]["eff_memory"]
    assert fitted["fp32"]["t0_s"] < 0.6 * cal.params("gemm", "fp32").t0_s
    assert report["fp32"]["mape"] < 0.15 and report["tf32"]["mape"] < 0.15


def test_excluded_networks_leave_the_fit(kernel_samples):
    """Grouped cross-validation leaves a family's kernels out of the held class too."""
    full, _ = fit_gemv(kernel_samples, log=lambda *_: None)
    part, report = fit_gemv(kernel_samples, frozenset({"slanext_wired", "resnet50"}), log=lambda *_: None)
    n_full = sum(1 for _, s in kernel_samples if s.precision == "fp32")
    assert report["fp32"]["samples"] < n_full
    assert part["fp32"]["t0_s"] != full["fp32"]["t0_s"]
