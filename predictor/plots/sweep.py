"""Chart data of a sweep: predicted time and throughput against batch size. Pure; no matplotlib.

One line per (GPU, precision) in the sweep's order, its points the settings that were predicted, by
batch size ascending: (batch, time) on the time panel, (batch, samples/s) on the throughput panel,
both log-log. One colour per GPU, one line style and marker per precision. Settings without a point
(not predicted, or no batch size to place) are listed in ``omitted``; a line with no point is left out.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from .data import _bounds

GPU_COLORS = ("#4e79a7", "#e15759", "#59a14f", "#f28e2b", "#b07aa1", "#76b7b2", "#edc948", "#9c755f")
PRECISION_STYLES = (("-", "o"), ("--", "s"), (":", "^"), ("-.", "D"), ((0, (5, 1)), "v"), ((0, (1, 3)), "P"))


@dataclass(frozen=True)
class SweepPoint:
    batch: int
    time_s: float
    throughput_per_s: float


@dataclass(frozen=True)
class SweepLine:
    label: str                 # "h200 fp16"
    gpu: str
    precision: str
    color: str                 # by GPU
    linestyle: object          # by precision (a matplotlib line style)
    marker: str                # by precision
    points: tuple[SweepPoint, ...]   # batch ascending


@dataclass(frozen=True)
class SweepChart:
    title: str
    lines: tuple[SweepLine, ...]
    batches: tuple[int, ...]            # x ticks: every batch size with a point, ascending
    xlim: tuple[float, float]
    time_ylim: tuple[float, float]
    throughput_ylim: tuple[float, float]
    omitted: tuple[str, ...]            # "v100 fp8 batch 1: <reason>"


def _xlim(batches: Sequence[int]) -> tuple[float, float]:
    if not batches:
        return (0.5, 2.0)
    lo, hi = min(batches), max(batches)
    # a little room either side of the outer points, in log space (at least a factor 2 in all)
    pad = max(1.25, math.sqrt(2.0 * lo / hi))
    return (lo / pad, hi * pad)


def sweep_chart(rows: Sequence, title: str = "") -> SweepChart:
    """Lines of the sweep's rows (``predictor.sweep.SweepRow`` or alike: gpu, precision, batch,
    total_time_s, throughput_per_s, error)."""
    gpus = list(dict.fromkeys(r.gpu for r in rows))
    precs = list(dict.fromkeys(r.precision for r in rows))
    points: dict[tuple[str, str], list[SweepPoint]] = {}
    omitted: list[str] = []
    for r in rows:
        b = r.batch
        label = f"{r.gpu} {r.precision} batch {b if b is not None else '-'}"
        if r.error is not None:
            omitted.append(f"{label}: {r.error}")
        elif b is None or not r.total_time_s or r.total_time_s <= 0 or not r.throughput_per_s:
            omitted.append(f"{label}: no batch size or time to place")
        else:
            points.setdefault((r.gpu, r.precision), []).append(SweepPoint(b, r.total_time_s, r.throughput_per_s))
    lines = []
    for g in gpus:
        for p in precs:
            pts = points.get((g, p))
            if not pts:
                continue
            ls, marker = PRECISION_STYLES[precs.index(p) % len(PRECISION_STYLES)]
            lines.append(SweepLine(f"{g} {p}", g, p, GPU_COLORS[gpus.index(g) % len(GPU_COLORS)], ls, marker,
                                   tuple(sorted(pts, key=lambda q: q.batch))))
    batches = tuple(sorted({q.batch for ln in lines for q in ln.points}))
    times = [q.time_s for ln in lines for q in ln.points]
    rates = [q.throughput_per_s for ln in lines for q in ln.points]
    return SweepChart(title, tuple(lines), batches, _xlim(batches), _bounds(times, pad=1.5), _bounds(rates, pad=1.5),
                      tuple(omitted))
