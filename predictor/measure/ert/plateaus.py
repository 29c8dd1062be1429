"""ERT-summary-style bandwidth plateau detection (pure numpy, runs anywhere).

Input: points (working_set_bytes, bandwidth_Bps) from one bandwidth sweep.
Method (the ERT summary rules, made robust to a ramp-up and to noise):

1. Sort by working set; drop non-finite or non-positive points.
2. Skip the ramp-up: tiny working sets are launch/latency bound and have LOW bandwidth, so the
   staircase starts at the first point within ``tolerance`` of the sweep's maximum (a robust
   maximum: that of the 3-point running median, so a single glitch cannot move the start).
3. Scan left to right building bands: a point joins the current band when it lies within
   +-``tolerance`` of the band's running median; up to ``max_outliers`` consecutive points that
   deviate are skipped (not counted) when the point after them returns to the band.
4. Bands of at least ``min_points`` points are plateaus; transition points between them are dropped.
5. Neighbouring plateaus whose levels differ by less than ``drop`` are one level (merged): a new
   level needs a bandwidth change of at least ``drop`` (15% by default).

A plateau's bandwidth is the median of its points (a sustained level, not the single best point).
Ignores: anything before the maximum's neighbourhood (the ramp), and shelves shorter than
``min_points``.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Sequence

import numpy as np

LEVEL_NAMES = ("L1", "L2", "HBM")


@dataclass(frozen=True)
class Plateau:
    """One bandwidth level: median bandwidth over a working-set range [min_bytes, max_bytes]."""

    name: str
    bandwidth_Bps: float
    min_bytes: float
    max_bytes: float
    n_points: int

    def to_dict(self) -> dict:
        return {"name": self.name, "bandwidth_Bps": self.bandwidth_Bps, "min_bytes": self.min_bytes,
                "max_bytes": self.max_bytes, "n_points": self.n_points}


@dataclass(frozen=True)
class Staircase:
    """Plateaus of one sweep, named; ``missing`` maps each level not found to the reason."""

    plateaus: tuple[Plateau, ...]
    missing: tuple[tuple[str, str], ...] = ()

    def level(self, name: str) -> Plateau | None:
        for p in self.plateaus:
            if p.name == name:
                return p
        return None

    def to_dict(self) -> dict:
        return {"plateaus": [p.to_dict() for p in self.plateaus], "missing": dict(self.missing)}


def _clean(working_set_bytes: Sequence[float], bandwidth_Bps: Sequence[float]):
    x = np.asarray(working_set_bytes, dtype=float)
    y = np.asarray(bandwidth_Bps, dtype=float)
    if x.shape != y.shape:
        raise ValueError(f"{x.size} working sets but {y.size} bandwidths")
    keep = np.isfinite(x) & np.isfinite(y) & (x > 0) & (y > 0)
    x, y = x[keep], y[keep]
    order = np.argsort(x, kind="stable")
    return x[order], y[order]


def _within(value: float, median: float, tolerance: float) -> bool:
    return abs(value - median) <= tolerance * median


def _bands(y: np.ndarray, start: int, tolerance: float, max_outliers: int) -> list[list[int]]:
    bands: list[list[int]] = []
    cur = [start]
    i = start + 1
    n = y.size
    while i < n:
        med = float(np.median(y[cur]))
        if _within(float(y[i]), med, tolerance):
            cur.append(i)
            i += 1
            continue
        back = None
        if len(cur) >= 2:  # only an established band may skip an outlier
            for j in range(i + 1, min(n, i + 1 + max_outliers)):
                if _within(float(y[j]), med, tolerance):
                    back = j
                    break
        if back is not None:
            i = back
            continue
        bands.append(cur)
        cur = [i]
        i += 1
    bands.append(cur)
    return bands


def detect_plateaus(working_set_bytes: Sequence[float], bandwidth_Bps: Sequence[float], *,
                    tolerance: float = 0.05, min_points: int = 6, drop: float = 0.15,
                    max_outliers: int = 1) -> tuple[Plateau, ...]:
    """Plateaus of a bandwidth-vs-working-set sweep, ordered by working set, named P1, P2, ...

    See the module docstring for the rules. Returns () when no band reaches ``min_points``.
    """
    if not 0 < tolerance < 1 or not 0 < drop < 1 or min_points < 1 or max_outliers < 0:
        raise ValueError("need 0 < tolerance < 1, 0 < drop < 1, min_points >= 1, max_outliers >= 0")
    x, y = _clean(working_set_bytes, bandwidth_Bps)
    if y.size == 0:
        return ()
    # robust maximum (median of 3 neighbours), so one upward glitch cannot hide the top level
    smooth = np.array([np.median(y[max(0, i - 1):i + 2]) for i in range(y.size)])
    start = int(np.argmax(y >= (1.0 - tolerance) * float(smooth.max())))
    kept = [b for b in _bands(y, start, tolerance, max_outliers) if len(b) >= min_points]
    merged: list[list[int]] = []
    for band in kept:
        if merged:
            prev = float(np.median(y[merged[-1]]))
            if abs(float(np.median(y[band])) / prev - 1.0) < drop:
                merged[-1] = merged[-1] + band
                continue
        merged.append(band)
    return tuple(
        Plateau(name=f"P{k + 1}", bandwidth_Bps=float(np.median(y[b])), min_bytes=float(x[b[0]]),
                max_bytes=float(x[b[-1]]), n_points=len(b))
        for k, b in enumerate(merged))


def name_levels(plateaus: Sequence[Plateau], *, l2_bytes: float | None = None,
                l1_bandwidth_Bps: float | None = None, l1_match: float = 0.6,
                first_is_l1: bool = False) -> Staircase:
    """Name plateaus L1 / L2 / HBM (other plateaus become ``shelf-1``, ``shelf-2``, ...).

    - HBM: the last plateau; when ``l2_bytes`` is given, only if it reaches at least 2x the L2 size
      (a sweep that stops inside L2 has no HBM level).
    - L1: only the first plateau can be L1, and only when at least two plateaus precede HBM (the
      ERT convention: levels in order). With ``l1_bandwidth_Bps`` (the block-local L1 kernel's
      level) it must also reach ``l1_match`` x that bandwidth. ``first_is_l1`` (for the L1 kernel's
      own sweep) names the first plateau L1 whenever one precedes HBM.
    - L2: of the other plateaus before HBM, the longest (most points; the first on a tie): L2
      spans from the end of L1 to the L2 size, so a short hump (partial L1 hits) or a short
      shelf (far L2 partition) beside it does not take its name.
    """
    ps = list(plateaus)
    if not ps:
        reason = "no plateau found in the sweep"
        return Staircase((), tuple((n, reason) for n in LEVEL_NAMES))
    last = len(ps) - 1
    if l2_bytes:
        hbm = last if ps[last].max_bytes >= 2.0 * l2_bytes else None
    else:
        hbm = last
    rest = list(range(hbm if hbm is not None else len(ps)))
    l1 = None
    if first_is_l1 and rest:
        l1 = rest[0]
    elif len(rest) >= 2 and (not l1_bandwidth_Bps
                             or ps[rest[0]].bandwidth_Bps >= l1_match * l1_bandwidth_Bps):
        l1 = rest[0]
    after = [i for i in rest if l1 is None or i > l1]
    l2 = max(after, key=lambda i: (ps[i].n_points, -i)) if after else None
    names = {}
    if l1 is not None:
        names[l1] = "L1"
    if l2 is not None:
        names[l2] = "L2"
    if hbm is not None:
        names[hbm] = "HBM"
    shelf = 0
    out = []
    for i, p in enumerate(ps):
        name = names.get(i)
        if name is None:
            shelf += 1
            name = f"shelf-{shelf}"
        out.append(replace(p, name=name))
    missing = []
    if l1 is None:
        if len(rest) < 2:
            missing.append(("L1", "fewer than two plateaus before HBM"))
        else:
            missing.append(("L1", f"first plateau below {l1_match:.0%} of the L1-kernel level"))
    if l2 is None:
        missing.append(("L2", "no plateau between L1 and HBM"))
    if hbm is None:
        missing.append(("HBM", "the last plateau does not reach 2x the L2 size"))
    return Staircase(tuple(out), tuple(missing))


def staircase(working_set_bytes: Sequence[float], bandwidth_Bps: Sequence[float], *,
              l2_bytes: float | None = None, l1_bandwidth_Bps: float | None = None,
              l1_match: float = 0.6, first_is_l1: bool = False, tolerance: float = 0.05,
              min_points: int = 6, drop: float = 0.15, max_outliers: int = 1) -> Staircase:
    """detect_plateaus then name_levels, in one call."""
    ps = detect_plateaus(working_set_bytes, bandwidth_Bps, tolerance=tolerance,
                         min_points=min_points, drop=drop, max_outliers=max_outliers)
    return name_levels(ps, l2_bytes=l2_bytes, l1_bandwidth_Bps=l1_bandwidth_Bps,
                       l1_match=l1_match, first_is_l1=first_is_l1)
