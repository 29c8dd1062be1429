"""The main fit (calibration/fit/fit.py) refits from the committed data: kernel samples and network scopes, the
physical bounds of predictor/timing/params.py, and parameters the data determined coming back.

Tolerances are loose enough for any x86 CPU and numpy/scipy version (least squares stops at a tolerance, not at
bit-identical points): a determined parameter within 5% of the bundled file.
"""
import math

import pytest

from calibration.fit.dataset import load_cases, load_kernels
from calibration.fit.fit import OTHER_GPUS, FitSettings, fit, other_gpu_data, prepare_fit, training_cases
from predictor.fitted import bundled_calibration
from predictor.machine.profile import load_profile
from predictor.timing import param_bounds


@pytest.fixture(scope="module")
def refit():
    profile = load_profile("h200")
    cases = training_cases(load_cases())
    settings = FitSettings(**{k: v for k, v in bundled_calibration(profile).doc["fit_report"]["settings"].items()
                              if k != "micro_families"})
    others = tuple(other_gpu_data(g) for g in OTHER_GPUS) if settings.h100_weight > 0 else ()
    data = prepare_fit(cases, load_kernels(), profile, log=lambda *_: None, other_gpus=others)
    return data, fit(cases, None, profile, log=lambda *_: None, settings=settings, data=data)


def test_samples(refit):
    data, result = refit
    assert result["n_samples"] >= 9000 and result["n_kernel_samples"] >= 1500 and result["n_table_samples"] == 0
    # only training networks' cases: the held-out and blind networks never reach the fit
    from calibration.networks.zoo import NETWORKS

    assert {NETWORKS[n].split for n in data.case_names} == {"train"}


def test_parameters_within_physical_bounds(refit):
    _, result = refit
    for cls, by_p in result["classes"].items():
        for prec, v in by_p.items():
            if prec in ("*",) or cls == "default":
                continue
            for k in ("t0_s", "eff_compute", "eff_memory"):
                lo, hi = param_bounds(k, cls, prec)
                assert lo * (1 - 1e-9) <= v[k] <= hi * (1 + 1e-9), (cls, prec, k, v[k])


def test_determined_parameters_come_back(refit):
    _, result = refit
    bundled = bundled_calibration(load_profile("h200")).doc
    checked = 0
    for cls, by_p in result["report"].items():
        for prec, ps in by_p.items():
            for name, entry in ps.items():
                ref = bundled["fit_report"]["parameters"].get(cls, {}).get(prec, {}).get(name)
                if entry["determined"] and ref and ref["determined"]:
                    assert entry["value"] == pytest.approx(ref["value"], rel=0.05), (cls, prec, name)
                    checked += 1
    assert checked >= 30
    assert math.isfinite(result["train_mape"]) and result["train_mape"] <= 0.14  # 13.3% over 55 networks since 2026-12-04
