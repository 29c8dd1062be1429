"""The fit's ceiling probes (calibration/fit/fit.py probe_ceilings) and the bidirectional-RNN overlap fit."""
import math

import numpy as np
import pytest

from calibration.fit.fit import PROBE_EFFICIENCIES, probe_ceilings


def _cost_min_at(j: int, value: float):
    """A cost whose only minimum in parameter j is at log(value), flat (zero gradient) above 0.5."""
    def cost(theta):
        x = math.exp(theta[j])
        return 1.0 if x > 0.5 else (math.log(x) - math.log(value)) ** 2
    return cost


def test_probe_moves_a_flat_efficiency_down():
    theta = np.log(np.array([1e-6, 0.7, 0.7]))  # one group: t0, eff_compute, eff_memory
    lo, hi = np.log(np.array([1e-7, 0.005, 0.005])), np.log(np.array([1e-4, 1.0, 1.0]))
    out = probe_ceilings(theta, lo, hi, 1, _cost_min_at(1, 0.03))
    assert math.exp(out[1]) == pytest.approx(0.03) and out[2] == theta[2] and out[0] == theta[0]


def test_probe_keeps_bounds_and_a_better_start():
    theta = np.log(np.array([1e-6, 0.7, 0.7]))
    lo, hi = np.log(np.array([1e-7, 0.2, 0.005])), np.log(np.array([1e-4, 1.0, 1.0]))
    out = probe_ceilings(theta, lo, hi, 1, _cost_min_at(1, 0.2))  # 0.1 and below are under eff_compute's bound
    assert math.exp(out[1]) == pytest.approx(0.3) and min(PROBE_EFFICIENCIES) < 0.2
    flat = probe_ceilings(theta, lo, hi, 1, lambda th: 0.0)  # nothing better anywhere: unchanged
    assert np.array_equal(flat, theta)


def test_rnn_bidir_overlap_from_the_committed_calls():
    """48 one-layer bidirectional calls of run 7 (2 cells x 3 widths x 2 batches x 4 precisions)."""
    from calibration.fit.rnn_bidir_fit import fit_rnn_bidir_overlap
    from predictor.fitted import bundled_calibration
    from predictor.machine.profile import load_profile

    profile = load_profile("h200")
    cal = bundled_calibration(profile)
    res = fit_rnn_bidir_overlap(dict(cal.doc), profile, log=lambda *_: None)
    assert res["samples"] == 48 and 0.0 <= res["value"] <= 0.95
    assert res["value"] == pytest.approx(cal.rnn_bidir_overlap, rel=1e-6)


def test_fine_grid_finds_a_narrow_valley_the_coarse_grid_steps_over():
    """An element-rate-bound class: the compute ceiling binds only below 0.02, and 0.01 is already too slow."""
    from calibration.fit.fit import PROBE_EFFICIENCIES_FINE

    def cost(theta):
        x = math.exp(theta[1])
        return 1.0 if x > 0.02 else 10.0 * (math.log(x) - math.log(0.015)) ** 2

    theta = np.log(np.array([1e-6, 0.7, 0.7]))
    lo, hi = np.log(np.array([1e-7, 0.005, 0.005])), np.log(np.array([1e-4, 1.0, 1.0]))
    assert np.array_equal(probe_ceilings(theta, lo, hi, 1, cost), theta)
    fine = probe_ceilings(theta, lo, hi, 1, cost, PROBE_EFFICIENCIES_FINE)
    assert math.exp(fine[1]) == pytest.approx(0.015)


def test_pair_probe_finds_a_joint_move_no_single_move_finds():
    """Compute at the element rate ties the memory term, so lowering eff_compute alone changes nothing; raising
    eff_memory alone makes the class too fast; both together fit."""
    def cost(theta):
        c, m = math.exp(theta[1]), math.exp(theta[2])
        t = max(0.015 / c if c < 0.5 else 0.0, 0.2 / m)  # the class's time: compute binds below 0.5
        other = 1.0 if m < 0.5 else 0.0  # a second GPU's cases want the memory term out of the way
        return (math.log(t) - 0.0) ** 2 + other

    theta = np.log(np.array([1e-6, 0.7, 0.2]))
    lo, hi = np.log(np.array([1e-7, 0.005, 0.005])), np.log(np.array([1e-4, 1.0, 1.0]))
    assert np.array_equal(probe_ceilings(theta, lo, hi, 1, cost), theta)
    out = probe_ceilings(theta, lo, hi, 1, cost, pairs=True)
    assert math.exp(out[1]) == pytest.approx(0.015) and math.exp(out[2]) >= 0.6


def test_bundled_16bit_softmax_is_priced_at_its_element_rate():
    """The pair probe (FitSettings.probe_pairs, on) moves the 16-bit softmax class to a compute (element-rate) limit
    with a higher memory efficiency: the H200 networks' softmax_warp_forward runs ~529 G elements/s at 16 bits, about
    the fp32 kernel's rate, so its time is not its bytes at a low bandwidth (eff_memory 0.26-0.27 before)."""
    from calibration.fit.fit import FitSettings
    from predictor.fitted import bundled_calibration
    from predictor.machine.profile import load_profile

    assert FitSettings().probe_pairs == 1.0
    softmax = bundled_calibration(load_profile("h200")).classes["softmax"]
    for p in ("fp16", "bf16"):
        assert softmax[p].eff_compute < 0.1 and softmax[p].eff_memory > 0.4
