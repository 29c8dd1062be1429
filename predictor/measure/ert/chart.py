"""Charts of an ERT run (matplotlib imported lazily, Agg backend): PNG and SVG of
(a) bandwidth vs working set with the detected plateaus, (b) the empirical roofline."""
from __future__ import annotations

import math
from pathlib import Path

from .summary import summarise

_COLORS = {"L1": "tab:green", "L2": "tab:blue", "HBM": "tab:red"}


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _spread(values: list[float], min_gap: float) -> list[float]:
    """Label y positions (log10 space): sorted, pushed apart by at least ``min_gap``."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    pos = [0.0] * len(values)
    last = -math.inf
    for i in order:
        pos[i] = max(values[i], last + min_gap)
        last = pos[i]
    return pos


def bandwidth_chart(raw: dict, summary: dict, plt):
    fig, ax = plt.subplots(figsize=(10, 6))
    for name, series in (raw.get("bandwidth", {}) or {}).items():
        if not isinstance(series, dict):
            continue
        pts = [p for p in series.get("points") or [] if p.get("bandwidth_Bps")]
        if not pts:
            continue
        ax.plot([p["working_set_bytes"] for p in pts], [p["bandwidth_Bps"] / 1e12 for p in pts],
                marker=".", markersize=3, linewidth=1,
                label=name + (" (block-local; x = all blocks' slices)"
                              if series.get("scope") == "block-local" else ""))
    for name, lv in summary["levels"].items():
        y = lv["bandwidth_Bps"] / 1e12
        ax.hlines(y, lv["min_bytes"], lv["max_bytes"], colors=_COLORS.get(name, "k"), linewidth=3,
                  alpha=0.6)
        ax.annotate(f"{name} {y:.2f} TB/s", (math.sqrt(lv["min_bytes"] * lv["max_bytes"]), y),
                    textcoords="offset points", xytext=(0, 6), ha="center",
                    color=_COLORS.get(name, "k"), fontsize=9, fontweight="bold")
    ax.set_xscale("log")
    ax.set_xlabel("working set (bytes)")
    ax.set_ylabel("bandwidth (TB/s)")
    gpu = (raw.get("provenance", {}) or {}).get("gpu", "")
    ax.set_title(f"ERT bandwidth vs working set {gpu}".strip())
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="upper right")
    fig.tight_layout()
    return fig


def _ceilings(summary: dict) -> list[tuple[str, float]]:
    out = []
    for prec, rec in summary.get("compute_peaks", {}).items():
        if rec.get("cuda"):
            out.append((f"{prec} CUDA-core", rec["cuda"]))
    for prec, rec in summary.get("tensor_peaks", {}).items():
        out.append((f"{prec} tensor", rec["flops_per_s"]))
    return out


def roofline_chart(raw: dict, summary: dict, plt):
    fig, ax = plt.subplots(figsize=(11, 7.5))
    ceilings = _ceilings(summary)
    roofs = [(n, lv["bandwidth_Bps"]) for n, lv in summary["levels"].items()]
    x_min, x_max = 1e-2, 1e4
    top = max([c for _, c in ceilings], default=1e15)
    low = min([bw * x_min for _, bw in roofs], default=top / 1e4)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(x_min, x_max * 40)
    ax.set_ylim(low / 1e9 / 2, top / 1e9 * 2.5)
    fig.canvas.draw()  # fixes the transforms used for the label angles
    for name, bw in roofs:
        x_end = min(x_max, top / bw)
        color = _COLORS.get(name, "k")
        ax.plot([x_min, x_end], [bw * x_min / 1e9, top / 1e9], color=color, linewidth=2)
        (x0, y0), (x1, y1) = ax.transData.transform([(x_min, bw * x_min / 1e9),
                                                     (x_end, bw * x_end / 1e9)])
        angle = math.degrees(math.atan2(y1 - y0, x1 - x0))
        xl = x_min * 3
        ax.annotate(f"{name} {bw / 1e12:.2f} TB/s", (xl, bw * xl / 1e9), textcoords="offset points",
                    xytext=(0, 5), color=color, fontsize=9, rotation=angle,
                    rotation_mode="anchor", fontweight="bold")
    fastest = max([bw for _, bw in roofs], default=None)
    label_y = _spread([math.log10(c / 1e9) for _, c in ceilings], 0.1)
    for (name, c), ly in zip(ceilings, label_y):
        x0 = c / fastest if fastest else x_min
        style = "--" if "CUDA" in name else "-"
        ax.plot([x0, x_max], [c / 1e9, c / 1e9], linestyle=style, color="0.3", linewidth=1.2)
        ax.annotate(f"{name} {c / 1e12:.1f} TFLOP/s", (x_max, c / 1e9),
                    xytext=(x_max * 1.3, 10 ** ly), textcoords="data", fontsize=8, va="center",
                    arrowprops={"arrowstyle": "-", "color": "0.6", "linewidth": 0.5})
    for sweep in raw.get("compute", []) or []:
        pts = sweep.get("points") or []
        if sweep.get("op") != "fma" or not pts:
            continue
        ax.plot([p["ai_flops_per_byte"] for p in pts], [p["flops_per_s"] / 1e9 for p in pts],
                marker="o", markersize=3, linewidth=0.8, alpha=0.6,
                label=f"ERT sweep {sweep['precision']} FMA")
    ax.set_xlabel("arithmetic intensity (FLOP/byte)")
    ax.set_ylabel("attainable GFLOP/s")
    gpu = (raw.get("provenance", {}) or {}).get("gpu", "")
    ax.set_title(f"Empirical roofline {gpu}".strip())
    ax.grid(True, which="both", alpha=0.25)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    return fig


def write_charts(raw: dict, out_prefix, summary: dict | None = None) -> list[Path]:
    """Writes <prefix>_bandwidth.{png,svg} and <prefix>_roofline.{png,svg}; returns the paths."""
    plt = _pyplot()
    summ = summary if summary is not None else summarise(raw)
    prefix = Path(out_prefix)
    prefix.parent.mkdir(parents=True, exist_ok=True)
    written = []
    for kind, make in (("bandwidth", bandwidth_chart), ("roofline", roofline_chart)):
        fig = make(raw, summ, plt)
        try:
            for ext in ("png", "svg"):
                path = prefix.with_name(f"{prefix.name}_{kind}.{ext}")
                fig.savefig(path, dpi=130)
                written.append(path)
        finally:
            plt.close(fig)
    return written
