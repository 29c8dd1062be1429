"""Timing with CUDA events, the ERT trial-doubling rule, and launch-grid sizing.

Event timing brackets one kernel launch on the current stream. It includes the host-side launch
latency of that one launch (a few microseconds when the GPU was idle), which is why every
measurement runs for at least ``min_time_s`` (milliseconds): the error stays below ~0.5%.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Callable

MAX_TRIALS = 1 << 30


@dataclass(frozen=True)
class Timing:
    """Times of repeated runs at one trial count: best (min) and median, in seconds."""

    trials: int
    times_s: tuple[float, ...]

    @property
    def best_s(self) -> float:
        return min(self.times_s)

    @property
    def median_s(self) -> float:
        s = sorted(self.times_s)
        m = len(s) // 2
        return s[m] if len(s) % 2 else 0.5 * (s[m - 1] + s[m])


def event_time_s(cp, launch: Callable[[], None]) -> float:
    """Seconds between two events recorded around ``launch()`` on the current stream."""
    start = cp.cuda.Event()
    end = cp.cuda.Event()
    start.record()
    launch()
    end.record()
    end.synchronize()
    return cp.cuda.get_elapsed_time(start, end) * 1e-3


def next_trials(trials: int, time_s: float, min_time_s: float) -> int:
    """ERT doubling, with a jump: the smallest power-of-two multiple (>= 2x) expected to reach
    ``min_time_s`` given the last time. Never exceeds MAX_TRIALS."""
    factor = min_time_s / max(time_s, 1e-9)
    step = 2 ** max(1, math.ceil(math.log2(max(factor, 1.0))))
    return min(MAX_TRIALS, trials * step)


def time_trials(cp, run: Callable[[int], None], *, min_time_s: float, repeats: int,
                max_trials: int = MAX_TRIALS) -> Timing:
    """Grow ``trials`` (powers of two) until one launch of ``run(trials)`` takes >= min_time_s,
    then time ``repeats`` launches in all at that trial count (the calibrating launch included)."""
    trials = 1
    t = event_time_s(cp, lambda: run(trials))
    while t < min_time_s and trials < max_trials:
        trials = min(max_trials, next_trials(trials, t, min_time_s))
        t = event_time_s(cp, lambda: run(trials))
    times = [t] + [event_time_s(cp, lambda: run(trials)) for _ in range(max(0, repeats - 1))]
    return Timing(trials=trials, times_s=tuple(times))


def resident_blocks_per_sm(cp, kernel, threads: int, fallback: int) -> int:
    """Blocks of ``threads`` that fit on one SM at once (the occupancy API), or ``fallback``."""
    try:
        try:
            driver = cp.cuda.driver
            fn = driver.occupancyMaxActiveBlocksPerMultiprocessor
        except AttributeError:
            from cupy_backends.cuda.api import driver
            fn = driver.occupancyMaxActiveBlocksPerMultiprocessor
        n = int(fn(kernel.kernel.ptr, threads, 0))
        return n if n > 0 else fallback
    except Exception:
        return fallback


def grid_for(n_items: int, threads: int, sm_count: int, blocks_per_sm: int) -> int:
    """One resident wave at most (a grid-stride loop does the rest), and no more blocks than the
    data needs (one item per thread)."""
    need = max(1, -(-n_items // threads))
    return max(1, min(sm_count * max(1, blocks_per_sm), need))


class Deadline:
    """A stage's time budget on the wall clock."""

    def __init__(self, budget_s: float | None):
        self.budget_s = budget_s
        self._start = time.monotonic()

    def passed(self) -> bool:
        return self.budget_s is not None and time.monotonic() - self._start > self.budget_s

    def elapsed_s(self) -> float:
        return time.monotonic() - self._start


def geometric_counts(min_bytes: float, max_bytes: float, growth: float,
                     bytes_per_item: int) -> list[int]:
    """Item counts whose byte sizes grow geometrically by ``growth`` from min_bytes to max_bytes
    (both included when reachable); duplicates after rounding are dropped."""
    if growth <= 1.0 or min_bytes <= 0 or max_bytes < min_bytes or bytes_per_item < 1:
        raise ValueError("need growth > 1, 0 < min_bytes <= max_bytes, bytes_per_item >= 1")
    out: list[int] = []
    b = float(min_bytes)
    while b <= max_bytes * (1.0 + 1e-9):
        n = max(1, int(round(b / bytes_per_item)))
        if not out or n > out[-1]:
            out.append(n)
        b *= growth
    return out
