"""The scaling chart: scaling efficiency and throughput against GPU count (log scale), one line per series
(fully synchronous DP, the hybrid scheme, other settings a what-if compares), like the scaling figures of
the large training papers. Matplotlib is imported only when a chart is drawn."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ..types import PredictorError
from .scaling import Scaling

COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf", "#7f7f7f")


@dataclass(frozen=True)
class Series:
    label: str
    gpus: tuple[int, ...]
    efficiency: tuple[float, ...]
    throughput_per_s: tuple[float, ...]
    dashed: bool = False


def series_of(sc: Scaling, label: str | None = None) -> list[Series]:
    """The synchronous series of a sweep, and its hybrid series when it has one."""
    lab = label or f"synchronous {sc.config.strategy.upper()}"
    out = [Series(lab, tuple(r.gpus for r in sc.rows), tuple(r.efficiency for r in sc.rows),
                  tuple(r.throughput_per_s for r in sc.rows))]
    hyb = [r for r in sc.rows if r.hybrid]
    if hyb:
        out.append(Series(f"hybrid: sync groups of {sc.hybrid_group} GPUs, async between",
                          tuple(r.gpus for r in hyb), tuple(r.hybrid_efficiency for r in hyb),
                          tuple(r.hybrid_throughput_per_s for r in hyb), dashed=True))
    return out


def draw(series: Sequence[Series], title: str, path: str, marks: Sequence[tuple[int, float, str]] = ()) -> str:
    """Two panels over GPU count (log x): efficiency in % (left) and throughput in samples/s (right, log).
    ``marks``: published points (GPUs, efficiency, label) drawn as stars on the efficiency panel."""
    from ..plots.draw import _plt, check_plot_path

    check_plot_path(path)
    plt = _plt()
    fig, (axe, axt) = plt.subplots(1, 2, figsize=(13, 5.4))
    fig.subplots_adjust(left=0.06, right=0.98, bottom=0.2, top=0.88, wspace=0.22)
    xmax = max((max(s.gpus) for s in series if s.gpus), default=8)
    for i, s in enumerate(series):
        c = COLORS[i % len(COLORS)]
        ls = "--" if s.dashed else "-"
        axe.plot(s.gpus, [100 * e for e in s.efficiency], ls, color=c, marker="o", ms=4, lw=1.6, label=s.label)
        axt.plot(s.gpus, s.throughput_per_s, ls, color=c, marker="o", ms=4, lw=1.6, label=s.label)
    ideal = [g for s in series for g in s.gpus]
    if series and series[0].gpus:
        base = series[0].throughput_per_s[0] / series[0].gpus[0]
        xs = sorted(set(ideal))
        axt.plot(xs, [base * x for x in xs], ":", color="0.5", lw=1, label="linear from the first point")
    for g, e, lab in marks:
        axe.plot([g], [100 * e], "*", color="k", ms=12, zorder=5)
        axe.annotate(lab, (g, 100 * e), textcoords="offset points", xytext=(-10, 6), ha="right", fontsize=8.5)
    from matplotlib.ticker import FuncFormatter

    for ax in (axe, axt):
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:,.0f}" if v >= 1 else f"{v:g}"))
        ax.set_xlim(0.8, xmax * 1.3)
        ax.set_xlabel("GPUs")
        ax.grid(True, which="major", alpha=0.3)
    lo = min([100 * min(s.efficiency) for s in series if s.efficiency] + [100 * e for _, e, _ in marks] + [90.0])
    axe.set_ylim(max(0.0, lo - 5), 101)
    axe.axhline(90, color="0.6", lw=0.8, ls=":")
    axe.set_ylabel("scaling efficiency (%), weak scaling")
    axt.set_yscale("log")
    axt.set_ylabel("throughput (samples / s, all GPUs)")
    axe.set_title("efficiency", fontsize=10)
    axt.set_title("throughput", fontsize=10)
    fig.suptitle(title, fontsize=11)
    handles, labels = axt.get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(3, len(labels)), fontsize=8.5, frameon=False,
               bbox_to_anchor=(0.5, 0.02))
    try:
        fig.savefig(path, dpi=110)
    except OSError as e:
        raise PredictorError(f"cannot write {path}: {e.strerror or e}") from None
    finally:
        plt.close(fig)
    return path


def save_scaling_chart(sc: Scaling, path: str, extra: Sequence[Series] = ()) -> str:
    title = (f"{sc.model} ({sc.precision}, batch {sc.batch}/GPU) on {sc.system.name}: predicted data-parallel "
             f"scaling")
    return draw(list(series_of(sc)) + list(extra), title, path)


__all__ = ["Series", "series_of", "draw", "save_scaling_chart"]
