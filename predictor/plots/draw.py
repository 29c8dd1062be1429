"""Thin drawing of the chart data (`predictor.plots.data`) with matplotlib's Agg backend.

Nothing here computes a position: every coordinate comes from the frozen chart dataclasses, which the
tests check. matplotlib is imported inside the functions (``predict`` without ``--plot`` never loads it).
"""
from __future__ import annotations

import math
import os
from typing import Sequence

from ..types import PredictorError
from .data import LEVEL_MARKERS, RooflineChart, TimeChart, class_color

FORMATS = (".png", ".svg")
# first series filled, second hollow, third (a training step's optimizer) filled pale with a dark edge
_SERIES_STYLE = ({"filled": True, "alpha": 0.75}, {"filled": False, "alpha": 0.9}, {"filled": "pale", "alpha": 0.35})
MANY_OPS = 150          # from this many ops in a series, lines between an op's points fade (readable at 400 ops)


def time_path(path: str) -> str:
    """'out/r.png' -> 'out/r-time.png': where the time-based chart of ``--plot`` goes."""
    root, ext = os.path.splitext(path)
    return f"{root}-time{ext}"


def check_plot_path(path: str) -> str:
    ext = os.path.splitext(path)[1].lower()
    if ext not in FORMATS:
        raise PredictorError(f"--plot {path}: the file name must end in .png or .svg")
    d = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(d):
        raise PredictorError(f"--plot {path}: no such directory {d}")
    return ext


class _Figures:
    """pyplot's ``figure``/``subplots``/``close`` without importing pyplot (its import is most of a chart's
    start-up): Figures on the Agg canvas."""

    def __init__(self):
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        self._figure, self._canvas = Figure, FigureCanvasAgg

    def figure(self, figsize=None):
        fig = self._figure(figsize=figsize)
        self._canvas(fig)
        return fig

    def subplots(self, nrows=1, ncols=1, figsize=None, **kw):
        fig = self.figure(figsize)
        return fig, fig.subplots(nrows, ncols, **kw)

    def close(self, fig) -> None:  # nothing registered with pyplot: the figure is freed with its last reference
        pass


def _plt():
    try:
        return _Figures()
    except ImportError:  # pragma: no cover - matplotlib is a dependency
        raise PredictorError("charts need matplotlib (pip install matplotlib)") from None


_SUPERSCRIPT = str.maketrans("-0123456789", "\u207b\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079")


def decade_label(v: float, _pos=None) -> str:
    """'10\u00b3' for 1000, '10\u207b\u2076' for 1e-6: log-axis tick labels as plain text (matplotlib's default
    writes them in math text, whose parser is most of a chart's drawing time); '' off the decades."""
    if not v > 0 or not math.isfinite(v):
        return ""
    e = math.log10(v)
    k = round(e)
    if abs(e - k) > 1e-9:
        return ""
    return "1" if k == 0 else "10" if k == 1 else "10" + str(k).translate(_SUPERSCRIPT)


def plain_log_ticks(ax, x: bool = True, y: bool = True) -> None:
    """Plain-text decade labels (decade_label), and unlabelled minor ticks at 2 and 5 of each decade only (each
    tick is an artist: eight per decade were a third of a chart's drawing time) on the log axes of ``ax``."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    for on, axis in ((x, ax.xaxis), (y, ax.yaxis)):
        if on:
            axis.set_major_formatter(FuncFormatter(decade_label))
            axis.set_minor_locator(LogLocator(base=10.0, subs=(2.0, 5.0)))
            axis.set_minor_formatter(NullFormatter())


def _scatter_kw(series_index: int, color, area) -> dict:
    st = _SERIES_STYLE[min(series_index, len(_SERIES_STYLE) - 1)]
    if st["filled"] == "pale":
        return {"s": area, "c": color, "alpha": st["alpha"], "edgecolors": "0.15", "linewidths": 0.6}
    if st["filled"]:
        return {"s": area, "c": color, "alpha": st["alpha"], "edgecolors": "white", "linewidths": 0.4}
    return {"s": area, "facecolors": "none", "edgecolors": color, "alpha": st["alpha"], "linewidths": 1.2}


def _angle(ax, x0, y0, x1, y1) -> float:
    a = ax.transData.transform((x0, y0))
    b = ax.transData.transform((x1, y1))
    return math.degrees(math.atan2(b[1] - a[1], b[0] - a[0]))


def _legends(fig, ax_anchor, classes: Sequence[str], series: Sequence[str], keys, extra_handles=(), *,
             x: float = 0.745):
    """Outside the axes, stacked top down at figure x: op classes, the other handles and series, the top-ops key."""
    from matplotlib.lines import Line2D

    renderer = fig.canvas.get_renderer()
    y = 0.93

    def below(artist) -> float:
        box = artist.get_window_extent(renderer).transformed(fig.transFigure.inverted())
        return box.y0 - 0.025

    handles = [Line2D([], [], marker="o", ls="", color=class_color(c), label=c, markersize=7) for c in classes]
    leg = fig.legend(handles=handles, title="op class", loc="upper left", bbox_to_anchor=(x, y),
                     fontsize=8, title_fontsize=9, frameon=False, ncol=2)
    fig.add_artist(leg)
    y = below(leg)
    handles2 = list(extra_handles)
    for i, s in enumerate(series):
        st = _SERIES_STYLE[min(i, len(_SERIES_STYLE) - 1)]
        face = "0.4" if st["filled"] is True else "0.8" if st["filled"] == "pale" else "none"
        handles2.append(Line2D([], [], marker="o", ls="", markerfacecolor=face,
                               markeredgecolor="0.15" if st["filled"] == "pale" else "0.4", color="0.4", label=s,
                               markersize=7))
    if handles2:
        leg2 = fig.legend(handles=handles2, loc="upper left", bbox_to_anchor=(x, y), fontsize=8, frameon=False)
        fig.add_artist(leg2)
        y = below(leg2)
    if keys:
        text = "top ops by time\n" + "\n".join(f"{k.label}  {k.text}" for k in keys)
        fig.text(x + 0.005, y, text, fontsize=7.5, va="top", ha="left", family="monospace")


def _label(ax, text, anchor, offset) -> None:
    """An op's number beside its point; one placed far from it (a crowded chart) gets a leader line."""
    far = math.hypot(*offset) > 16
    ax.annotate(text, anchor, xytext=offset, textcoords="offset points", fontsize=8, fontweight="bold", zorder=7,
                bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "0.6", "lw": 0.5, "alpha": 0.9},
                arrowprops={"arrowstyle": "-", "color": "0.35", "lw": 0.6, "shrinkA": 0, "shrinkB": 2} if far else None)


def draw_roofline(chart: RooflineChart, path: str | None = None):
    """The hierarchical roofline figure; saved to `path` when given. Returns the figure."""
    plt = _plt()
    from matplotlib.collections import LineCollection
    from matplotlib.lines import Line2D

    fig = plt.figure(figsize=(13, 7))
    ax = fig.add_axes((0.07, 0.09, 0.64, 0.82))
    ax.set_xscale("log")
    ax.set_yscale("log")
    plain_log_ticks(ax)
    ax.set_xlim(*chart.xlim)
    ax.set_ylim(*chart.ylim)
    ax.set_xlabel("arithmetic intensity (FLOP / byte at L1, L2, HBM)")
    ax.set_ylabel("attainable FLOP/s")
    ax.set_title(chart.title, fontsize=11)
    ax.grid(True, which="major", alpha=0.25)
    comp = [c for c in chart.ceilings if c.kind == "compute"]
    mem = [c for c in chart.ceilings if c.kind == "memory"]
    top = max(c.value for c in comp)
    x0, x1 = chart.xlim
    prev = None
    for i, c in enumerate(comp):
        start = c.value / max(m.value for m in mem)
        ax.plot([start, x1], [c.value, c.value], color="0.25", lw=1.4 if i == 0 else 1.0,
                ls="-" if i == 0 else "--", zorder=1)
        # a ceiling within 35% of the one above it gets its label under the line
        below = prev is not None and prev / c.value < 1.35
        ax.text(x1 / 1.15, c.value / 1.07 if below else c.value * 1.07, c.label, ha="right",
                va="top" if below else "bottom", fontsize=8, color="0.2")
        prev = c.value
    for m, color in zip(mem, ("#2c7fb8", "#41ab5d", "#d95f0e")):
        xe = top / m.value
        ax.plot([x0, xe], [m.value * x0, top], color=color, lw=1.4, zorder=1)
        # label along the roof, near its lower left end, inside the axes
        lx = max(x0 * 1.6, chart.ylim[0] * 3 / m.value)
        if lx * m.value < top / 3:
            ax.text(lx, m.value * lx * 1.25, m.label, rotation=_angle(ax, lx, m.value * lx, lx * 10, m.value * lx * 10),
                    rotation_mode="anchor", fontsize=8, color=color, ha="left", va="bottom")
    series_index = {s: i for i, s in enumerate(chart.series)}
    arrowed = {a.name for a in chart.arrows}
    for i, s in enumerate(chart.series):
        pts = [p for p in chart.points if p.series == s]
        many = len(pts) >= MANY_OPS
        # with two series the second's joining lines only for the linked (top) ops: the chart stays readable
        joined = [p for p in pts if len(p.intensity) > 1 and (i == 0 or p.name in arrowed or len(chart.series) > 2)]
        segs = [[(x, p.flops_per_s) for x in sorted(p.intensity.values())] for p in joined]
        ax.add_collection(LineCollection(segs, colors=[p.color for p in joined], linewidths=0.5 if many else 0.7,
                                         alpha=(0.25 if many else 0.45) if i == 0 else 0.6,
                                         linestyles="-" if i == 0 else ":", zorder=2))
        for lv, marker in LEVEL_MARKERS.items():
            sel = [p for p in pts if lv in p.intensity]
            if sel:
                ax.scatter([p.intensity[lv] for p in sel], [p.flops_per_s for p in sel], marker=marker, zorder=3,
                           **_scatter_kw(i, [p.color for p in sel], [p.area for p in sel]))
    for n in chart.networks:
        i = series_index[n.series]
        xs = sorted(n.intensity.values())
        ax.plot(xs, [n.flops_per_s] * len(xs), color="black", lw=1.2, ls="--" if i == 0 else ":", zorder=4)
        ax.scatter(xs, [n.flops_per_s] * len(xs), marker="*", s=220, zorder=5,
                   facecolors="black" if i == 0 else "white", edgecolors="black", linewidths=1.0)
    for a in chart.arrows:
        ax.annotate("", xy=a.end, xytext=a.start, zorder=6,
                    arrowprops={"arrowstyle": "->", "color": "black" if a.name == "network" else "0.35",
                                "lw": 1.0, "shrinkA": 3, "shrinkB": 3})
    for p in chart.points:
        if p.label:
            anchor = next((p.intensity[lv], p.flops_per_s) for lv in ("HBM", "L2", "L1") if lv in p.intensity)
            _label(ax, p.label, anchor, p.label_offset)
    classes = sorted({p.op_class for p in chart.points})
    level_handles = [Line2D([], [], marker=m, ls="", color="0.4", label=f"at {lv}", markersize=7)
                     for lv, m in LEVEL_MARKERS.items()]
    level_handles.append(Line2D([], [], marker="*", ls="--", color="black", label="network", markersize=10))
    _legends(fig, ax, classes, chart.series if len(chart.series) > 1 else (), chart.keys, level_handles)
    note = "marker area: share of time; one op = three points (L1, L2, HBM) at its achieved FLOP/s"
    if any(chart.omitted.values()):
        note += "; not shown (no FLOPs): " + ", ".join(f"{v} {k}" for k, v in chart.omitted.items())
    fig.text(0.07, 0.015, note, fontsize=7.5, color="0.35")
    if path:
        fig.savefig(path, dpi=110)
        plt.close(fig)
    return fig


def draw_time(chart: TimeChart, path: str | None = None):
    """The time-based roofline (left) and time vs FLOPs / time vs HBM bytes (right)."""
    plt = _plt()
    import numpy as np
    from matplotlib.collections import LineCollection
    from matplotlib.lines import Line2D
    from matplotlib.patches import Rectangle

    fig = plt.figure(figsize=(17, 7.5))
    ax = fig.add_axes((0.05, 0.09, 0.40, 0.78))
    axf = fig.add_axes((0.525, 0.57, 0.15, 0.30))
    axb = fig.add_axes((0.525, 0.09, 0.15, 0.30))
    for a in (ax, axf, axb):
        a.set_xscale("log")
        a.set_yscale("log")
        plain_log_ticks(a)
        a.grid(True, which="major", alpha=0.25)
    ax.set_xlim(*chart.xlim)
    ax.set_ylim(*chart.ylim)
    ax.set_xlabel("bytes moved at HBM")
    ax.set_ylabel("FLOPs")
    fig.suptitle(chart.title, fontsize=11, x=0.36, y=0.985)
    bw, peak = chart.bandwidth, chart.peak
    sec_x = ax.secondary_xaxis("top", functions=(lambda b: np.maximum(b, 1e-30) / bw * 1e6,
                                                 lambda t: np.maximum(t, 1e-30) * bw / 1e6))
    sec_x.set_xlabel(f"time at HBM bandwidth, bytes / {bw / 1e12:.3g} TB/s (us)", fontsize=9)
    sec_y = ax.secondary_yaxis("right", functions=(lambda f: np.maximum(f, 1e-30) / peak * 1e6,
                                                   lambda t: np.maximum(t, 1e-30) * peak / 1e6))
    sec_y.set_ylabel(f"time at peak, FLOPs / {peak / 1e12:.3g} TFLOP/s (us)", fontsize=9)
    # minor ticks only on the main axes (each log tick is an artist: drawing time)
    from matplotlib.ticker import NullLocator

    for a in (sec_x.xaxis, sec_y.yaxis, axf.xaxis, axf.yaxis, axb.xaxis, axb.yaxis):
        a.set_minor_locator(NullLocator())
    x0, x1 = chart.xlim
    groups: list[list] = []
    for d in sorted(chart.diagonals, key=lambda d: -d.balance):
        if groups and groups[-1][0].balance / d.balance < 1.35:
            groups[-1].append(d)
        else:
            groups.append([d])
    from matplotlib.patches import Patch

    extra = []   # what the left panel's lines and boxes are: in the legend outside the data, not on it
    for gi, group in enumerate(groups):
        ls = "--" if gi == 0 else ":"
        for d in group:
            ax.plot([x0, x1], [d.balance * x0, d.balance * x1], color="0.35", lw=1.0, ls=ls, zorder=1)
        d = group[0]
        names = [g.label.split(" balance")[0] for g in group]
        units = {n.split(" ", 1)[-1] for n in names}
        joined = (" = ".join(n.split(" ", 1)[0] for n in names) + " " + units.pop()) if len(units) == 1 \
            else " = ".join(names)
        label = d.label if len(group) == 1 else f"{joined} balance ~{d.balance:.0f} FLOP/B"
        extra.append(Line2D([], [], color="0.35", lw=1.0, ls=ls, label=label))
    for box, shade in zip(chart.launch_boxes, ("0.93", "0.82")):
        ax.add_patch(Rectangle((chart.xlim[0], chart.ylim[0]), box.bytes - chart.xlim[0], box.flops - chart.ylim[0],
                               facecolor=shade, edgecolor="0.55", lw=0.8, zorder=0))
        extra.append(Patch(facecolor=shade, edgecolor="0.55", lw=0.8,
                           label=f"{box.label}: {box.invocations} kernel x {box.overhead_s * 1e6:.2g} us"))
    box = chart.launch_boxes[0]
    series_index = {s: i for i, s in enumerate(chart.series)}
    arrowed = {a.name for a in chart.arrows}
    for i, s in enumerate(chart.series):
        pts = [p for p in chart.points if p.series == s]
        if not pts:
            continue
        many = len(pts) >= MANY_OPS
        # segments to the vertex: every op of the first series (and of a training step's phases); of a second
        # series (measured, or "after") only the linked top ops, so two series of 400 ops stay readable
        seg = [p for p in pts if i == 0 or len(chart.series) > 2 or p.name in arrowed]
        ax.add_collection(LineCollection([[(p.bytes, p.flops), p.vertex] for p in seg], colors=[p.color for p in seg],
                                         linewidths=0.5 if many else 0.8, alpha=(0.3 if many else 0.5) if i == 0
                                         else 0.35, linestyles="-" if i == 0 else ":", zorder=2))
        ax.scatter([p.bytes for p in pts], [p.flops for p in pts], zorder=3,
                   **_scatter_kw(i, [p.color for p in pts], [p.area for p in pts]))
        for side, marker in ((True, "_"), (False, "|")):
            sel = [p for p in seg if p.compute_side == side]
            if sel:
                ax.scatter([p.vertex[0] for p in sel], [p.vertex[1] for p in sel], marker=marker, s=25,
                           c=[p.color for p in sel], alpha=0.6, zorder=2)
    for a in chart.arrows:
        ax.annotate("", xy=a.end, xytext=a.start, zorder=6,
                    arrowprops={"arrowstyle": "->", "color": "0.3", "lw": 1.0, "shrinkA": 3, "shrinkB": 3})
    for p in chart.points:
        if p.label:
            _label(ax, p.label, (p.bytes, p.flops), p.label_offset)
    # time vs FLOPs, time vs bytes
    tp = chart.time_points
    for i, s in enumerate(chart.series):
        pts = [p for p in tp if p.series == s]
        for a, attr in ((axf, "flops"), (axb, "bytes")):
            sel = [p for p in pts if getattr(p, attr) > 0]
            if sel:
                a.scatter([getattr(p, attr) for p in sel], [p.time_s for p in sel],
                          **_scatter_kw(i, [p.color for p in sel], [max(8.0, p.area / 3) for p in sel]))
    times = [p.time_s for p in tp] or [1e-6]
    tlo = 10.0 ** math.floor(math.log10(min(min(times), *(b.overhead_s for b in chart.launch_boxes)) / 1.5))
    thi = 10.0 ** math.ceil(math.log10(max(times) * 1.5))
    flo = [p.flops for p in tp if p.flops > 0] or [1.0]
    blo = [p.bytes for p in tp if p.bytes > 0] or [1.0]
    fx = np.logspace(math.floor(math.log10(min(flo))), math.ceil(math.log10(max(flo))), 50)
    bx = np.logspace(math.floor(math.log10(min(blo))), math.ceil(math.log10(max(blo))), 50)
    for c, ls in zip([c for c in chart.ceilings if c.kind == "compute"], ("-", "--", ":", "-.")):
        axf.plot(fx, fx / c.value, color="0.3", lw=0.9, ls=ls, label=f"FLOPs / {c.label}")
    axb.plot(bx, bx / bw, color="#d95f0e", lw=0.9, label=f"bytes / HBM {bw / 1e12:.3g} TB/s")
    for a in (axf, axb):
        for b, ls in zip(chart.launch_boxes, (":", "-.")):
            a.axhline(b.overhead_s, color="0.5", lw=0.8, ls=ls, label=f"{b.label} {b.overhead_s * 1e6:.2g} us")
        a.set_ylim(tlo, thi)
        a.set_ylabel("time (s)")
        a.legend(fontsize=6.5, loc="upper left", bbox_to_anchor=(1.02, 1.0), frameon=False, borderaxespad=0.0)
    axf.set_xlim(fx[0], fx[-1])
    axb.set_xlim(bx[0], bx[-1])
    axf.set_xlabel("FLOPs")
    axb.set_xlabel("bytes at HBM")
    axf.set_title("time vs FLOPs", fontsize=9)
    axb.set_title("time vs HBM bytes", fontsize=9)
    classes = sorted({p.op_class for p in tp})
    extra.insert(0, Line2D([], [], color="0.4", lw=0.8, label="op -> its vertex at time T (above ideal)"))
    _legends(fig, ax, classes, chart.series if len(chart.series) > 1 else (), chart.keys, extra, x=0.81)
    note = "marker area: share of time"
    if any(chart.omitted.values()):
        note += "; left panel omits ops without FLOPs or HBM bytes: " + ", ".join(
            f"{v} {k}" for k, v in chart.omitted.items())
    fig.text(0.055, 0.015, note, fontsize=7.5, color="0.35")
    if path:
        fig.savefig(path, dpi=110)
        plt.close(fig)
    return fig


def save_charts(roofline: RooflineChart, timed: TimeChart, path: str) -> tuple[str, str]:
    """Write the hierarchical chart to `path` and the time-based one beside it (``-time`` suffix)."""
    from ..output import staged, write_file

    check_plot_path(path)
    second = time_path(path)
    with staged():  # both drawn to temporaries first: a failure leaves neither (nor, in the CLI, the report)
        write_file(path, lambda tmp: draw_roofline(roofline, tmp))
        write_file(second, lambda tmp: draw_time(timed, tmp))
    return path, second
