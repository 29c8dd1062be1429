"""Thin drawing of a sweep chart (`predictor.plots.sweep`): time and throughput against batch size.

Every coordinate comes from the frozen `SweepChart`; matplotlib is imported only when a chart is drawn.
"""
from __future__ import annotations

from .draw import _plt, check_plot_path, plain_log_ticks
from .sweep import SweepChart


def draw_sweep(chart: SweepChart, path: str | None = None):
    """Two panels, log-log: time per forward (left) and samples/s (right) against batch size."""
    plt = _plt()
    from matplotlib.ticker import FixedLocator, NullLocator

    fig, (axt, axr) = plt.subplots(1, 2, figsize=(13, 5.6))
    fig.subplots_adjust(left=0.07, right=0.80, bottom=0.14, top=0.88, wspace=0.25)
    for ax, attr, ylabel, ylim in ((axt, "time_s", "predicted time per forward (s)", chart.time_ylim),
                                   (axr, "throughput_per_s", "throughput (samples / s)", chart.throughput_ylim)):
        ax.set_xscale("log")
        ax.set_yscale("log")
        plain_log_ticks(ax)
        ax.set_xlim(*chart.xlim)
        ax.set_ylim(*ylim)
        ax.set_xlabel("batch size")
        ax.set_ylabel(ylabel)
        ax.grid(True, which="major", alpha=0.25)
        if chart.batches:
            ax.xaxis.set_major_locator(FixedLocator(list(chart.batches)))
            ax.xaxis.set_minor_locator(NullLocator())
            ax.set_xticklabels([str(b) for b in chart.batches])
        for ln in chart.lines:
            ax.plot([p.batch for p in ln.points], [getattr(p, attr) for p in ln.points], color=ln.color,
                    ls=ln.linestyle, marker=ln.marker, lw=1.5, markersize=5, label=ln.label)
    axt.set_title("time", fontsize=10)
    axr.set_title("throughput", fontsize=10)
    fig.suptitle(chart.title, fontsize=11)
    if chart.lines:
        handles, labels = axt.get_legend_handles_labels()
        fig.legend(handles, labels, title="GPU precision", loc="upper left", bbox_to_anchor=(0.815, 0.88),
                   fontsize=8, title_fontsize=9, frameon=False)
    if chart.omitted:
        note = f"not predicted: {len(chart.omitted)} setting{'s' if len(chart.omitted) != 1 else ''} (" + \
            "; ".join(o.split(":", 1)[0] for o in chart.omitted[:6]) + (", ..." if len(chart.omitted) > 6 else "") + ")"
        fig.text(0.07, 0.02, note, fontsize=7.5, color="0.35")
    if path:
        fig.savefig(path, dpi=110)
        plt.close(fig)
    return fig


def save_sweep_chart(chart: SweepChart, path: str) -> str:
    from ..output import write_file
    from ..types import PredictorError
    from . import MAX_CHART_VALUE

    check_plot_path(path)
    for ln in chart.lines:
        for pt in ln.points:
            for what, v in (("time", pt.time_s), ("throughput", pt.throughput_per_s)):
                if not (0.0 <= float(v) <= MAX_CHART_VALUE):  # NaN fails both
                    raise PredictorError(f"cannot chart {ln.label} batch {pt.batch}: {what} is {float(v):.3g}, out of "
                                         f"the range a chart can show (0..{MAX_CHART_VALUE:.0e}): the model's sizes "
                                         "overflow")
    write_file(path, lambda tmp: draw_sweep(chart, tmp))  # atomically (with the report, in the CLI)
    return path
