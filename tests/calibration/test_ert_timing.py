"""ERT timing helpers with a fake CUDA clock (CPU only)."""
from types import SimpleNamespace

import pytest

from predictor.measure.ert.timing import (MAX_TRIALS, Timing, geometric_counts, grid_for, next_trials,
                                    time_trials)


class _FakeGpu:
    """Events read a simulated GPU clock; each run(trials) advances it."""

    def __init__(self, per_trial_s, overhead_s):
        self.now = 0.0
        self.per_trial_s, self.overhead_s = per_trial_s, overhead_s
        self.launches = []
        gpu = self

        class Event:
            def record(self, stream=None):
                self.t = gpu.now

            def synchronize(self):
                pass

        self.cp = SimpleNamespace(cuda=SimpleNamespace(
            Event=Event, get_elapsed_time=lambda s, e: (e.t - s.t) * 1e3))

    def run(self, trials):
        self.launches.append(trials)
        self.now += self.overhead_s + trials * self.per_trial_s


def test_time_trials_doubles_to_the_minimum_time():
    gpu = _FakeGpu(per_trial_s=1e-6, overhead_s=5e-6)
    t = time_trials(gpu.cp, gpu.run, min_time_s=1e-3, repeats=3)
    # t(1) = 6 us -> factor 166.7 -> x256 -> 256 trials = 261 us -> factor 3.8 -> x4 -> 1024
    assert gpu.launches == [1, 256, 1024, 1024, 1024]
    assert t.trials == 1024
    assert t.times_s == pytest.approx((1029e-6,) * 3)


def test_time_trials_long_single_trial_needs_no_doubling():
    gpu = _FakeGpu(per_trial_s=3e-3, overhead_s=0.0)
    t = time_trials(gpu.cp, gpu.run, min_time_s=1e-3, repeats=2)
    assert gpu.launches == [1, 1]
    assert t.best_s == pytest.approx(3e-3)


def test_next_trials_at_least_doubles_and_caps():
    assert next_trials(1, 1e-3, 1e-3) == 2  # reached: still the ERT doubling
    assert next_trials(4, 1e-6, 1e-3) == 4 * 1024  # factor 1000 -> 2**10
    assert next_trials(MAX_TRIALS // 2, 1e-9, 1.0) == MAX_TRIALS


def test_timing_best_and_median():
    t = Timing(trials=8, times_s=(3.0, 1.0, 2.0, 4.0))
    assert t.best_s == 1.0
    assert t.median_s == 2.5


def test_geometric_counts():
    # 4096 B x 2**k up to 65536 B, 4-byte items: 1024, 2048, 4096, 8192, 16384 items
    assert geometric_counts(4096, 65536, 2.0, 4) == [1024, 2048, 4096, 8192, 16384]
    # rounding duplicates dropped: 1, 1.5->2, 2.25->2 (dup), 3.375->3, 5.06->5
    assert geometric_counts(1, 6, 1.5, 1) == [1, 2, 3, 5]
    with pytest.raises(ValueError):
        geometric_counts(1, 6, 1.0, 1)


def test_grid_for():
    assert grid_for(1, 256, 132, 8) == 1
    assert grid_for(257, 256, 132, 8) == 2
    assert grid_for(10**9, 256, 132, 8) == 1056  # 132 SMs x 8 resident blocks
