"""ERT plateau detection and level naming on synthetic staircases (CPU only)."""
import math

import numpy as np
import pytest

from predictor.measure.ert.plateaus import Plateau, detect_plateaus, name_levels, staircase
from predictor.measure.ert.synthetic import staircase_curve

T = 1e12


def _x(n, start=10):
    return [2.0 ** (start + i) for i in range(n)]


def test_exact_staircase_with_ramp():
    # ramp 1, 2, 4, 8 TB/s; L1 8 x 20; one transition point; L2 10 x 10; transition; HBM 12 x 4
    y = [1, 2, 4, 8] + [20] * 8 + [15] + [10] * 10 + [6] + [4] * 12
    x = _x(len(y))
    ps = detect_plateaus(x, [v * T for v in y])
    assert [(p.bandwidth_Bps, p.n_points) for p in ps] == [(20 * T, 8), (10 * T, 10), (4 * T, 12)]
    # first L1 point is index 4 -> 2**14; last is index 11 -> 2**21
    assert (ps[0].min_bytes, ps[0].max_bytes) == (2.0 ** 14, 2.0 ** 21)
    # L2: indices 13..22; HBM: indices 24..35
    assert (ps[1].min_bytes, ps[1].max_bytes) == (2.0 ** 23, 2.0 ** 32)
    assert (ps[2].min_bytes, ps[2].max_bytes) == (2.0 ** 34, 2.0 ** 45)
    assert [p.name for p in ps] == ["P1", "P2", "P3"]
    st = name_levels(ps)
    assert [p.name for p in st.plateaus] == ["L1", "L2", "HBM"]
    assert st.missing == ()


def test_band_bandwidth_is_the_median_of_noisy_points():
    y = [9.8, 10.2, 9.9, 10.1, 10.0, 10.3]  # sorted: 9.8 9.9 10.0 10.1 10.2 10.3 -> (10.0+10.1)/2
    (p,) = detect_plateaus(_x(6), [v * T for v in y])
    assert p.bandwidth_Bps == pytest.approx(10.05 * T, rel=1e-12)
    assert p.n_points == 6


def test_points_are_sorted_and_bad_points_dropped():
    y = [10, 10, 10, 10, 10, 10]
    x = _x(6)
    ps = detect_plateaus(list(reversed(x)) + [float("nan"), 5.0], [v * T for v in y] + [1 * T, -1.0])
    assert [(p.min_bytes, p.max_bytes, p.n_points) for p in ps] == [(x[0], x[-1], 6)]


def test_single_outlier_inside_a_band_is_skipped():
    y = [10] * 4 + [13] + [10] * 4
    (p,) = detect_plateaus(_x(9), [v * T for v in y])
    assert p.n_points == 8  # the 13 is not counted
    assert (p.min_bytes, p.max_bytes) == (2.0 ** 10, 2.0 ** 18)


def test_band_split_by_two_outliers_is_merged_back():
    y = [10] * 6 + [13, 7] + [10.4] * 6
    ps = detect_plateaus(_x(14), [v * T for v in y])
    # two bands (6 and 6 points) within 15% of each other: one level
    assert len(ps) == 1
    assert ps[0].n_points == 12
    assert ps[0].bandwidth_Bps == pytest.approx(10.2 * T)  # median of 6 x 10 and 6 x 10.4


def test_short_shelves_need_min_points():
    y = [20] * 6 + [10] * 5 + [4] * 6
    x = _x(len(y))
    assert [p.bandwidth_Bps for p in detect_plateaus(x, [v * T for v in y])] == [20 * T, 4 * T]
    ps = detect_plateaus(x, [v * T for v in y], min_points=5)
    assert [p.bandwidth_Bps for p in ps] == [20 * T, 10 * T, 4 * T]


def test_drop_threshold_decides_new_level():
    y = [10] * 6 + [9] * 6  # a 10% drop
    x = _x(12)
    ps = detect_plateaus(x, [v * T for v in y])
    assert len(ps) == 1 and ps[0].n_points == 12
    ps = detect_plateaus(x, [v * T for v in y], drop=0.05)
    assert [(p.bandwidth_Bps, p.n_points) for p in ps] == [(10 * T, 6), (9 * T, 6)]


def test_ramp_plateau_before_the_maximum_is_ignored():
    # a flat launch-bound region at 1 TB/s before the rise must not become a level
    y = [1] * 8 + [3, 6] + [10] * 8 + [4] * 8
    ps = detect_plateaus(_x(len(y)), [v * T for v in y])
    assert [p.bandwidth_Bps for p in ps] == [10 * T, 4 * T]


def test_short_spike_at_the_top_is_ignored():
    y = [2, 5] + [20] * 3 + [10] * 8 + [4] * 8
    ps = detect_plateaus(_x(len(y)), [v * T for v in y])
    assert [(p.bandwidth_Bps, p.n_points) for p in ps] == [(10 * T, 8), (4 * T, 8)]


def test_empty_and_invalid_input():
    assert detect_plateaus([], []) == ()
    with pytest.raises(ValueError):
        detect_plateaus([1.0, 2.0], [1.0])
    with pytest.raises(ValueError):
        detect_plateaus([1.0], [1.0], tolerance=0.0)


def _p(bw_tbs, lo, hi, n=6):
    return Plateau("P", bw_tbs * T, float(lo), float(hi), n)


def test_two_levels_are_l2_and_hbm_and_l1_is_reported_missing():
    st = name_levels([_p(10, 1e6, 4e7), _p(4, 1e8, 4e9)])
    assert [p.name for p in st.plateaus] == ["L2", "HBM"]
    assert dict(st.missing) == {"L1": "fewer than two plateaus before HBM"}
    assert st.level("HBM").bandwidth_Bps == 4 * T
    assert st.level("L1") is None


def test_hbm_needs_twice_the_l2_size_when_known():
    st = name_levels([_p(20, 1e4, 1e6), _p(10, 2e6, 5e7)], l2_bytes=6e7)
    assert [p.name for p in st.plateaus] == ["L1", "L2"]
    assert dict(st.missing) == {"HBM": "the last plateau does not reach 2x the L2 size"}


def test_l1_hint_rejects_a_slow_first_plateau_and_names_shelves():
    # L2 near 10, far-partition shelf 7, HBM 4; the L1 kernel saw 30 TB/s
    ps = [_p(10, 1e6, 3e7), _p(7, 3.5e7, 5e7), _p(4, 1e8, 4e9)]
    st = name_levels(ps, l2_bytes=6e7, l1_bandwidth_Bps=30 * T)
    assert [p.name for p in st.plateaus] == ["L2", "shelf-1", "HBM"]
    assert dict(st.missing) == {"L1": "first plateau below 60% of the L1-kernel level"}
    # a global sweep that does reach L1 (20 >= 0.6 x 30)
    st = name_levels([_p(20, 1e4, 1e6)] + ps, l2_bytes=6e7, l1_bandwidth_Bps=30 * T)
    assert [p.name for p in st.plateaus] == ["L1", "L2", "shelf-1", "HBM"]


def test_l2_is_the_longest_plateau_beside_a_short_hump():
    # partial-L1 hump at 14 TB/s (6 points) before the long L2 plateau (30 points); L1 kernel 30
    ps = [_p(14, 1e5, 1e6, 6), _p(10, 1.2e6, 4e7, 30), _p(4, 1e8, 4e9, 40)]
    st = name_levels(ps, l2_bytes=6e7, l1_bandwidth_Bps=30 * T)
    assert [p.name for p in st.plateaus] == ["shelf-1", "L2", "HBM"]
    assert st.level("L2").bandwidth_Bps == 10 * T


def test_first_is_l1_for_the_block_local_sweep():
    st = name_levels([_p(25, 1e6, 2e7), _p(4, 1e8, 2e9)], l2_bytes=6e7, first_is_l1=True)
    assert [p.name for p in st.plateaus] == ["L1", "HBM"]
    assert dict(st.missing) == {"L2": "no plateau between L1 and HBM"}


def test_no_plateau_at_all():
    st = name_levels([])
    assert st.plateaus == ()
    assert [name for name, _ in st.missing] == ["L1", "L2", "HBM"]


@pytest.mark.parametrize("seed", range(10))
def test_noisy_h200_like_staircase(seed):
    """1% multiplicative noise, ramp-up, smooth transitions: the three levels, always."""
    x = 4096 * 1.1 ** np.arange(146)
    y = staircase_curve(x, [(20 * T, 4e6), (10 * T, 40e6), (4 * T, math.inf)], ramp_bytes=2e4)
    y = y * (1 + 0.01 * np.random.default_rng(seed).standard_normal(x.size))
    st = staircase(x, y, l2_bytes=62914560)
    assert [p.name for p in st.plateaus] == ["L1", "L2", "HBM"]
    for p, want in zip(st.plateaus, (20 * T, 10 * T, 4 * T)):
        assert p.bandwidth_Bps == pytest.approx(want, rel=0.05)
    assert st.level("L2").max_bytes <= 40e6 * 1.1
    assert st.level("HBM").min_bytes >= 40e6
    assert st.level("HBM").max_bytes == x[-1]


def test_staircase_curve_levels():
    x = np.array([1e3, 1e6, 4e7, 6e7, 1e9])
    y = staircase_curve(x, [(10.0, 4e7), (4.0, math.inf)], transition=1.5)
    assert list(y) == [10.0, 10.0, 10.0, 4.0, 4.0]
