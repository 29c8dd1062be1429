"""``--report FILE.html``: one self-contained HTML page of a result (predictor/api.py's Prediction, Comparison,
SweepResult or ValidationResult).

Everything is inline: CSS, a small script (table sorting, hover details), charts as inline SVG drawn here from
the chart data of predictor/plots/data.py (the same positions as ``--plot``). No network, no CDN, no external
URL: the page opens from a file, an e-mail or a ticket. Without JavaScript the page still shows every table and
chart; the script adds sorting and the hover box, and writes ``<div id="report-ready">`` once it has run
without error (the browser test looks for it).
"""
from __future__ import annotations

import html
import json
import math
import os
from typing import Any, Iterable, Sequence

from .types import MemLevel, PredictorError

READY_ID = "report-ready"


def check_path(path: str) -> None:
    if not path.lower().endswith((".html", ".htm")):
        raise PredictorError(f"--report {path}: the file name must end in .html")
    d = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(d):
        raise PredictorError(f"--report {path}: no such directory {d}")


def write(page: str, path: str) -> str:
    check_path(path)
    tmp = f"{path}.tmp{os.getpid()}"
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(page)
        os.replace(tmp, path)
    except OSError as e:
        raise PredictorError(f"cannot write {path}: {e.strerror or e}") from None
    return path


def page_for(result) -> str:
    """The page of an API result (predictor/api.py): each result class names its page function (``html_page``)."""
    page = _PAGES.get(getattr(result, "html_page", None))
    if page is None:
        raise PredictorError(f"no HTML report for {type(result).__name__}")
    return page(result)


# ------------------------------------------------------------------------------------------ text helpers
def esc(x: Any) -> str:
    return html.escape(str(x), quote=True)


def si(x: float | None, unit: str = "") -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "-"
    for scale, prefix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(x) >= scale:
            return f"{x / scale:.3g} {prefix}{unit}"
    return f"{x:.3g} {unit}".rstrip()


def t_text(t: float | None) -> str:
    if t is None:
        return "-"
    if abs(t) >= 1:
        return f"{t:.3f} s"
    if abs(t) >= 1e-3:
        return f"{t * 1e3:.3f} ms"
    return f"{t * 1e6:.2f} us"


def _finite(x):
    """JSON for the page: non-finite numbers become null (JSON.parse rejects NaN)."""
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if isinstance(x, dict):
        return {str(k): _finite(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_finite(v) for v in x]
    return x


def data_script(obj: Any) -> str:
    text = json.dumps(_finite(obj), separators=(",", ":"), allow_nan=False).replace("</", "<\\/")
    return f'<script id="report-data" type="application/json">{text}</script>'


def table(headers: Sequence[str], rows: Iterable[Sequence[tuple[str, Any]]], cls: str = "sortable",
          numeric: Sequence[bool] | None = None, row_attrs: Iterable[str] | None = None) -> str:
    """A table; each cell is (text shown, sort value). ``numeric`` right-aligns columns."""
    numeric = numeric or [False] * len(headers)
    out = [f'<table class="{cls}"><thead><tr>']
    out += [f'<th class="{"num" if n else ""}">{esc(h)}</th>' for h, n in zip(headers, numeric)]
    out.append("</tr></thead><tbody>")
    attrs = iter(row_attrs or ())
    for row in rows:
        a = next(attrs, "")
        out.append(f"<tr{a}>")
        for (text, val), n in zip(row, numeric):
            v = "" if val is None else f' data-v="{esc(val)}"'
            out.append(f'<td class="{"num" if n else ""}"{v}>{esc(text)}</td>')
        out.append("</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def kv_table(pairs: Sequence[tuple[str, str]]) -> str:
    return '<table class="kv">' + "".join(f"<tr><th>{esc(k)}</th><td>{esc(v)}</td></tr>" for k, v in pairs) + \
        "</table>"


# ------------------------------------------------------------------------------------------ SVG
class LogAxes:
    """Maps log-log data coordinates to an SVG box (left, top, width, height) inside a W x H drawing."""

    def __init__(self, xlim, ylim, box=(70, 30, 560, 380)):
        self.xlim, self.ylim, self.box = xlim, ylim, box
        self.lx = (math.log10(xlim[0]), math.log10(xlim[1]))
        self.ly = (math.log10(ylim[0]), math.log10(ylim[1]))

    def x(self, v: float) -> float:
        left, _, w, _ = self.box
        return left + (math.log10(max(v, 1e-300)) - self.lx[0]) / (self.lx[1] - self.lx[0]) * w

    def y(self, v: float) -> float:
        _, top, _, h = self.box
        return top + h - (math.log10(max(v, 1e-300)) - self.ly[0]) / (self.ly[1] - self.ly[0]) * h

    def inside(self, x: float, y: float) -> bool:
        return self.xlim[0] <= x <= self.xlim[1] and self.ylim[0] <= y <= self.ylim[1]

    def frame(self, xlabel: str, ylabel: str) -> str:
        left, top, w, h = self.box
        out = [f'<rect x="{left}" y="{top}" width="{w}" height="{h}" class="frame"/>']
        for d in range(math.ceil(self.lx[0]), math.floor(self.lx[1]) + 1):
            px = self.x(10.0 ** d)
            out.append(f'<line x1="{px:.1f}" y1="{top}" x2="{px:.1f}" y2="{top + h}" class="grid"/>'
                       f'<text x="{px:.1f}" y="{top + h + 14}" class="tick" text-anchor="middle">1e{d}</text>')
        for d in range(math.ceil(self.ly[0]), math.floor(self.ly[1]) + 1):
            py = self.y(10.0 ** d)
            out.append(f'<line x1="{left}" y1="{py:.1f}" x2="{left + w}" y2="{py:.1f}" class="grid"/>'
                       f'<text x="{left - 4}" y="{py + 3:.1f}" class="tick" text-anchor="end">1e{d}</text>')
        out.append(f'<text x="{left + w / 2}" y="{top + h + 32}" class="axis" text-anchor="middle">{esc(xlabel)}</text>')
        out.append(f'<text x="14" y="{top + h / 2}" class="axis" text-anchor="middle" '
                   f'transform="rotate(-90 14 {top + h / 2})">{esc(ylabel)}</text>')
        return "".join(out)

    def clip_line(self, x0, y0, x1, y1, n: int = 2) -> tuple[float, float, float, float] | None:
        """A straight line on log axes, clipped to the box (by sampling along it)."""
        pts = []
        for i in range(201):
            f = i / 200
            x = 10 ** (math.log10(x0) + f * (math.log10(x1) - math.log10(x0)))
            y = 10 ** (math.log10(y0) + f * (math.log10(y1) - math.log10(y0)))
            if self.inside(x, y):
                pts.append((x, y))
        if len(pts) < 2:
            return None
        (a, b), (c, d) = pts[0], pts[-1]
        return self.x(a), self.y(b), self.x(c), self.y(d)


def _legend(classes: Sequence[str], x: float, y: float) -> str:
    from .plots.data import class_color

    out = [f'<text x="{x}" y="{y}" class="legend-title">op class</text>']
    for i, c in enumerate(classes):
        yy = y + 16 + 15 * i
        out.append(f'<circle cx="{x + 5}" cy="{yy - 4}" r="5" fill="{class_color(c)}"/>'
                   f'<text x="{x + 15}" y="{yy}" class="legend">{esc(c)}</text>')
    return "".join(out)


W, H = 820, 450


def roofline_svg(chart, op_index: dict[tuple[str, str], int]) -> str:
    """The hierarchical roofline (predictor.plots.data.RooflineChart) as inline SVG; each op a group with
    ``data-op`` (its index in the page's op list) that the script's hover box reads."""
    ax = LogAxes(chart.xlim, chart.ylim)
    out = [f'<svg class="chart" viewBox="0 0 {W} {H}" role="img" aria-label="hierarchical roofline">',
           f'<text x="{W / 2 - 60}" y="16" class="title" text-anchor="middle">{esc(chart.title)}</text>',
           ax.frame("arithmetic intensity (FLOP / byte at L1, L2, HBM)", "attainable FLOP/s")]
    comp = [c for c in chart.ceilings if c.kind == "compute"]
    mem = [c for c in chart.ceilings if c.kind == "memory"]
    top = max(c.value for c in comp)
    bwmax = max(m.value for m in mem)
    merged: list[list] = []   # ceilings within 2% share one label
    for c in comp:
        if merged and merged[-1][0].value / c.value < 1.02:
            merged[-1].append(c)
        else:
            merged.append([c])
    prev = None
    for i, group in enumerate(merged):
        c = group[0]
        seg = ax.clip_line(c.value / bwmax, c.value, chart.xlim[1], c.value)
        if seg:
            label = c.label if len(group) == 1 else " = ".join(g.label.rsplit(" ", 2)[0] for g in group) + \
                " " + " ".join(c.label.rsplit(" ", 2)[1:])
            below = prev is not None and prev / c.value < 1.6   # close to the one above: label under the line
            out.append(f'<line x1="{seg[0]:.1f}" y1="{seg[1]:.1f}" x2="{seg[2]:.1f}" y2="{seg[3]:.1f}" '
                       f'class="ceiling{"" if i == 0 else " dashed"}"/>'
                       f'<text x="{seg[2] - 4:.1f}" y="{seg[1] + (11 if below else -3):.1f}" class="clabel" '
                       f'text-anchor="end">{esc(label)}</text>')
        prev = c.value
    roofs = tuple(zip(mem, ("#2c7fb8", "#41ab5d", "#d95f0e")))
    for m, color in roofs:
        seg = ax.clip_line(chart.xlim[0], m.value * chart.xlim[0], top / m.value, top)
        if seg:
            out.append(f'<line x1="{seg[0]:.1f}" y1="{seg[1]:.1f}" x2="{seg[2]:.1f}" y2="{seg[3]:.1f}" '
                       f'stroke="{color}" class="roof"><title>{esc(m.label)}</title></line>')
    shapes = {"L1": "tri", "L2": "sq", "HBM": "dot"}
    arrowed = {a.name for a in chart.arrows}
    for p in sorted(chart.points, key=lambda p: -p.area):
        i = op_index.get((p.series, p.name))
        xs = sorted(p.intensity.items(), key=lambda kv: kv[1])
        style = _series_style(chart.series, p.series)
        hollow = style == "hollow"
        g = [f'<g class="op {style}" data-op="{"" if i is None else i}">']
        # a second series (measured, "after") joins its points only for the linked top ops: readable at 400 ops
        if len(xs) > 1 and (style != "hollow" or len(chart.series) > 2 or p.name in arrowed):
            pts = " ".join(f"{ax.x(v):.1f},{ax.y(p.flops_per_s):.1f}" for _, v in xs)
            g.append(f'<polyline points="{pts}" stroke="{p.color}" class="link"/>')
        r = max(2.5, min(11.0, math.sqrt(p.area) / 2))
        for lv, v in xs:
            cx, cy = ax.x(v), ax.y(p.flops_per_s)
            fill = "none" if hollow else p.color
            if shapes[lv] == "dot":
                g.append(f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="{r:.1f}" fill="{fill}" stroke="{p.color}"/>')
            elif shapes[lv] == "sq":
                s = r * 0.8
                g.append(f'<rect x="{cx - s:.1f}" y="{cy - s:.1f}" width="{2 * s:.1f}" height="{2 * s:.1f}" '
                         f'fill="{fill}" stroke="{p.color}"/>')
            else:
                s = r * 0.9
                g.append(f'<polygon points="{cx:.1f},{cy - s:.1f} {cx - s:.1f},{cy + s:.1f} {cx + s:.1f},{cy + s:.1f}" '
                         f'fill="{fill}" stroke="{p.color}"/>')
        g.append("</g>")
        out.append("".join(g))
    for a in chart.arrows:
        if ax.inside(*a.start) and ax.inside(*a.end):
            out.append(f'<line x1="{ax.x(a.start[0]):.1f}" y1="{ax.y(a.start[1]):.1f}" x2="{ax.x(a.end[0]):.1f}" '
                       f'y2="{ax.y(a.end[1]):.1f}" class="arrow" marker-end="url(#head)"/>')
    for n in chart.networks:
        for v in n.intensity.values():
            out.append(f'<text x="{ax.x(v):.1f}" y="{ax.y(n.flops_per_s) + 5:.1f}" class="star" '
                       f'text-anchor="middle">&#9733;</text>')
    classes = sorted({p.op_class for p in chart.points})
    out.append(_legend(classes, 650, 50))
    ly = 60 + 15 * len(classes)
    for k, (m, color) in enumerate(roofs):
        yy = ly + 10 + 15 * k
        out.append(f'<line x1="650" y1="{yy - 4}" x2="662" y2="{yy - 4}" stroke="{color}" stroke-width="2"/>'
                   f'<text x="667" y="{yy}" class="legend">{esc(m.label)}</text>')
    ly += 15 * len(roofs) + 4
    out.append(f'<text x="650" y="{ly + 10}" class="legend">&#9650; L1  &#9632; L2  &#9679; HBM</text>'
               f'<text x="650" y="{ly + 26}" class="legend">&#9733; network</text>'
               f'<text x="650" y="{ly + 42}" class="legend">size: share of time</text>')
    out.append(_series_legend(chart.series, 650, ly + 58))
    out.append(_ARROW_DEF + "</svg>")
    return "".join(out)


SERIES_STYLES = ("filled", "hollow", "light")


def _series_style(series: Sequence[str], name: str) -> str:
    i = series.index(name) if name in series else 0
    return SERIES_STYLES[min(i, len(SERIES_STYLES) - 1)]


def _series_legend(series: Sequence[str], x: float, y: float) -> str:
    if len(series) < 2:
        return ""
    return "".join(f'<text x="{x}" y="{y + 16 * i}" class="legend">{st}: {esc(name)}</text>'
                   for i, (name, st) in enumerate(zip(series, SERIES_STYLES)))


_ARROW_DEF = ('<defs><marker id="head" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="6" markerHeight="6" '
              'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#444"/></marker></defs>')


def time_svg(chart, op_index: dict[tuple[str, str], int]) -> str:
    """The time-based roofline (predictor.plots.data.TimeChart): each op at (HBM bytes, FLOPs) with a segment to
    its vertex on the roofline of its time; balance diagonals and the launch-overhead boxes."""
    ax = LogAxes(chart.xlim, chart.ylim)
    out = [f'<svg class="chart" viewBox="0 0 {W} {H}" role="img" aria-label="time-based roofline">',
           f'<text x="{W / 2 - 60}" y="16" class="title" text-anchor="middle">{esc(chart.title)}</text>',
           ax.frame("bytes moved at HBM", "FLOPs")]
    for b, shade in zip(chart.launch_boxes, ("#eeeeee", "#d6d6d6")):
        x1, y1 = ax.x(min(b.bytes, chart.xlim[1])), ax.y(min(b.flops, chart.ylim[1]))
        left, top, w, h = ax.box
        out.append(f'<rect x="{left}" y="{y1:.1f}" width="{max(x1 - left, 0):.1f}" height="{max(top + h - y1, 0):.1f}" '
                   f'fill="{shade}" stroke="#999" stroke-width="0.6"><title>{esc(b.label)}: what one kernel could do '
                   f'in {b.overhead_s * 1e6:.2g} us</title></rect>')
    seen = set()
    for d in sorted(chart.diagonals, key=lambda d: -d.balance):
        key = round(math.log10(d.balance), 1)
        seg = ax.clip_line(chart.xlim[0], d.balance * chart.xlim[0], chart.xlim[1], d.balance * chart.xlim[1])
        if seg:
            out.append(f'<line x1="{seg[0]:.1f}" y1="{seg[1]:.1f}" x2="{seg[2]:.1f}" y2="{seg[3]:.1f}" class="diag">'
                       f'<title>{esc(d.label)}</title></line>')
            if key not in seen:
                out.append(f'<text x="{seg[2] - 4:.1f}" y="{seg[3] + 12:.1f}" class="clabel" text-anchor="end">'
                           f'{d.balance:.0f} FLOP/B</text>')
            seen.add(key)
    arrowed = {a.name for a in chart.arrows}
    for p in sorted(chart.points, key=lambda p: -p.area):
        i = op_index.get((p.series, p.name))
        style = _series_style(chart.series, p.series)
        hollow = style == "hollow"
        r = max(2.5, min(11.0, math.sqrt(p.area) / 2))
        x0, y0 = ax.x(p.bytes), ax.y(p.flops)
        vx, vy = ax.x(p.vertex[0]), ax.y(p.vertex[1])
        seg = style != "hollow" or len(chart.series) > 2 or p.name in arrowed
        out.append(f'<g class="op {style}" data-op="{"" if i is None else i}">'
                   + (f'<line x1="{x0:.1f}" y1="{y0:.1f}" x2="{vx:.1f}" y2="{vy:.1f}" stroke="{p.color}" class="link"/>'
                      if seg else "") +
                   f'<circle cx="{x0:.1f}" cy="{y0:.1f}" r="{r:.1f}" fill="{"none" if hollow else p.color}" '
                   f'stroke="{p.color}"/></g>')
    for a in chart.arrows:
        if ax.inside(*a.start) and ax.inside(*a.end):
            out.append(f'<line x1="{ax.x(a.start[0]):.1f}" y1="{ax.y(a.start[1]):.1f}" x2="{ax.x(a.end[0]):.1f}" '
                       f'y2="{ax.y(a.end[1]):.1f}" class="arrow" marker-end="url(#head)"/>')
    classes = sorted({p.op_class for p in chart.points})
    out.append(_legend(classes, 650, 50))
    ly = 60 + 15 * len(classes)
    out.append(f'<text x="650" y="{ly + 10}" class="legend">line: op -> its vertex</text>'
               f'<text x="650" y="{ly + 26}" class="legend">at time T (above ideal)</text>'
               f'<text x="650" y="{ly + 42}" class="legend">grey boxes: launch overhead</text>'
               f'<text x="650" y="{ly + 58}" class="legend">dashed: machine balance</text>')
    out.append(_series_legend(chart.series, 650, ly + 76))
    out.append(_ARROW_DEF + "</svg>")
    return "".join(out)


def bars_svg(labels: Sequence[str], values: Sequence[float | None], unit: str, title: str) -> str:
    """Horizontal bars (a sweep's throughput per setting); a missing value is drawn as 'n/a'."""
    n = len(labels)
    h = 40 + 18 * n
    vmax = max([v for v in values if v] or [1.0])
    out = [f'<svg class="chart" viewBox="0 0 {W} {h}" role="img" aria-label="{esc(title)}">',
           f'<text x="10" y="16" class="title">{esc(title)}</text>']
    for i, (lab, v) in enumerate(zip(labels, values)):
        y = 28 + 18 * i
        out.append(f'<text x="230" y="{y + 12}" class="tick" text-anchor="end">{esc(lab)}</text>')
        if v:
            w = 480 * v / vmax
            out.append(f'<rect x="236" y="{y}" width="{w:.1f}" height="14" fill="#4e79a7"><title>{esc(lab)}: '
                       f'{esc(si(v, unit))}</title></rect><text x="{240 + w:.1f}" y="{y + 11}" class="tick">'
                       f'{esc(si(v, unit))}</text>')
        else:
            out.append(f'<text x="240" y="{y + 11}" class="tick">n/a</text>')
    out.append("</svg>")
    return "".join(out)


def scatter_svg(pairs: Sequence[tuple[float, float, str, int]], title: str, xlabel: str, ylabel: str,
                classes: Sequence[str] = ()) -> str:
    """Predicted (y) vs measured (x) on log axes with the line y = x; pairs (x, y, colour, op index)."""
    vals = [v for x, y, _, _ in pairs for v in (x, y) if v > 0]
    if not vals:
        return ""
    lo, hi = 10 ** math.floor(math.log10(min(vals))), 10 ** math.ceil(math.log10(max(vals)))
    ax = LogAxes((lo, hi), (lo, hi))
    out = [f'<svg class="chart" viewBox="0 0 {W} {H}" role="img" aria-label="{esc(title)}">',
           f'<text x="{W / 2 - 60}" y="16" class="title" text-anchor="middle">{esc(title)}</text>',
           ax.frame(xlabel, ylabel),
           f'<line x1="{ax.x(lo):.1f}" y1="{ax.y(lo):.1f}" x2="{ax.x(hi):.1f}" y2="{ax.y(hi):.1f}" class="diag"/>']
    for x, y, color, i in pairs:
        if x > 0 and y > 0:
            out.append(f'<g class="op" data-op="{i}"><circle cx="{ax.x(x):.1f}" cy="{ax.y(y):.1f}" r="4" '
                       f'fill="{color}" stroke="white" stroke-width="0.5"/></g>')
    if classes:
        out.append(_legend(classes, 650, 50))
    out.append(f'<text x="650" y="{70 + 15 * len(classes)}" class="legend">dashed: predicted = measured</text>')
    out.append("</svg>")
    return "".join(out)


# ------------------------------------------------------------------------------------------ page
CSS = """
body{font:14px/1.4 system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:24px;color:#222;max-width:1400px}
h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:28px 0 8px;border-bottom:1px solid #ddd}
.sub{color:#666;margin-bottom:12px}
table{border-collapse:collapse;font-size:12.5px;margin:6px 0}
th,td{padding:3px 8px;border-bottom:1px solid #eee;text-align:left;white-space:nowrap}
td:last-child{white-space:normal;min-width:120px;max-width:480px}
th.num,td.num{text-align:right;font-variant-numeric:tabular-nums}
table.sortable th{cursor:pointer;background:#f6f6f6;position:sticky;top:0}
table.sortable th:hover{background:#e8eef7}
th.asc::after{content:" \\25B2"}th.desc::after{content:" \\25BC"}
table.kv th{background:none;font-weight:600;color:#555}
tr.hl td{background:#fff3c4}
.wrap{max-height:560px;overflow:auto;border:1px solid #ddd}
.charts{display:flex;flex-wrap:wrap;gap:12px}
svg.chart{width:820px;max-width:100%;height:auto;border:1px solid #ddd;background:#fff}
svg .frame{fill:none;stroke:#888}svg .grid{stroke:#eee}svg .tick{font-size:10px;fill:#555}
svg .axis{font-size:12px;fill:#333}svg .title{font-size:12px;font-weight:600;fill:#222}
svg .ceiling{stroke:#444;stroke-width:1.3}svg .dashed{stroke-dasharray:5 3}
svg .roof{stroke-width:1.4}svg .clabel{font-size:10px;fill:#333}
svg .diag{stroke:#777;stroke-dasharray:5 3}
svg .link{stroke-width:0.8;opacity:.5;fill:none}
svg .op{opacity:.8;cursor:pointer}svg .op.light circle,svg .op.light rect,svg .op.light polygon{fill-opacity:.25;stroke-dasharray:2 1}svg .op:hover,svg .op.hl{opacity:1;stroke:#000;stroke-width:1.5}
svg .arrow{stroke:#444;stroke-width:1}svg .star{font-size:16px;fill:#000}
svg .legend{font-size:11px;fill:#333}svg .legend-title{font-size:11px;font-weight:600}
#tip{position:fixed;pointer-events:none;background:#fffef4;border:1px solid #999;padding:6px 8px;font-size:12px;
display:none;box-shadow:0 2px 6px rgba(0,0,0,.2);max-width:420px;white-space:pre}
.note{color:#666;font-size:12px}
"""

JS = r"""
(function(){
  var data = JSON.parse(document.getElementById('report-data').textContent);
  var ops = data.ops || [];
  var tip = document.getElementById('tip');
  function fmt(v){ if(v===null||v===undefined) return '-'; if(typeof v!=='number') return String(v);
    var a=Math.abs(v); if(a===0) return '0'; if(a>=1e4||a<1e-3) return v.toExponential(3); return v.toPrecision(4); }
  function show(e, i){
    var o = ops[i]; if(!o){ return; }
    var lines = []; for (var k in o){ if(Object.prototype.hasOwnProperty.call(o,k)) lines.push(k+': '+fmt(o[k])); }
    tip.textContent = lines.join('\n'); tip.style.display = 'block';
    tip.style.left = Math.min(e.clientX + 14, window.innerWidth - 440) + 'px';
    tip.style.top = Math.min(e.clientY + 14, window.innerHeight - 20 - tip.offsetHeight) + 'px';
    var rows = document.querySelectorAll('tr[data-op="'+i+'"]');
    for (var r=0;r<rows.length;r++) rows[r].classList.add('hl');
  }
  function hide(){ tip.style.display='none';
    var rows=document.querySelectorAll('tr.hl'); for(var r=0;r<rows.length;r++) rows[r].classList.remove('hl'); }
  var groups = document.querySelectorAll('svg .op');
  for (var g=0; g<groups.length; g++){
    (function(el){ var i = el.getAttribute('data-op'); if(i==='') return;
      el.addEventListener('mousemove', function(e){ show(e, +i); });
      el.addEventListener('mouseleave', hide); })(groups[g]);
  }
  var trs = document.querySelectorAll('tr[data-op]');
  for (var t=0; t<trs.length; t++){
    (function(tr){ tr.addEventListener('mouseenter', function(){
        var gs=document.querySelectorAll('svg .op[data-op="'+tr.getAttribute('data-op')+'"]');
        for(var k=0;k<gs.length;k++) gs[k].classList.add('hl'); });
      tr.addEventListener('mouseleave', function(){
        var gs=document.querySelectorAll('svg .op.hl'); for(var k=0;k<gs.length;k++) gs[k].classList.remove('hl'); });
    })(trs[t]);
  }
  var tables = document.querySelectorAll('table.sortable');
  for (var n=0; n<tables.length; n++){
    (function(tb){
      var ths = tb.querySelectorAll('thead th');
      for (var c=0; c<ths.length; c++){
        (function(th, col){ th.addEventListener('click', function(){
          var body = tb.tBodies[0]; var rows = Array.prototype.slice.call(body.rows);
          var asc = !th.classList.contains('asc');
          for (var k=0;k<ths.length;k++) ths[k].classList.remove('asc','desc');
          th.classList.add(asc ? 'asc' : 'desc');
          rows.sort(function(a, b){
            var x = a.cells[col], y = b.cells[col];
            var vx = x.hasAttribute('data-v') ? x.getAttribute('data-v') : x.textContent;
            var vy = y.hasAttribute('data-v') ? y.getAttribute('data-v') : y.textContent;
            var nx = parseFloat(vx), ny = parseFloat(vy);
            var r = (!isNaN(nx) && !isNaN(ny)) ? nx - ny : String(vx).localeCompare(String(vy));
            return asc ? r : -r; });
          for (var k=0;k<rows.length;k++) body.appendChild(rows[k]);
        }); })(ths[c], c);
      }
    })(tables[n]);
  }
  var ok = document.createElement('div'); ok.id = 'report-ready'; ok.setAttribute('data-ops', String(ops.length));
  ok.style.display = 'none'; document.body.appendChild(ok);
})();
"""


def page(title: str, subtitle: str, sections: Sequence[tuple[str, str]], data: Any) -> str:
    from . import __version__

    body = "".join(f"<h2>{esc(h)}</h2>{content}" for h, content in sections)
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{esc(title)}</title>'
            f'<meta name="generator" content="gpu-roofline-predictor {esc(__version__)}">'
            f"<style>{CSS}</style></head><body><h1>{esc(title)}</h1><div class=\"sub\">{esc(subtitle)}</div>"
            f'{body}<div id="tip"></div>{data_script(data)}<script>{JS}</script></body></html>\n')


# ------------------------------------------------------------------------------------------ per result
def _op_record(o, pred, phase: str | None = None) -> dict[str, Any]:
    from .graph.opclass import op_class
    from .opinfo import shape_text
    from .table import intensity

    info = pred.op_info.get(o.cost.name) if getattr(pred, "op_info", None) else None
    r = {"name": o.cost.name, "type": o.cost.op_type, "class": op_class(o.cost.op_type)}
    if phase:
        r["phase"] = phase
    r.update({"output": shape_text(info.output_shape) if info else "-", "params": info.params if info else None,
              "time_s": o.time_s, "share": o.time_s / pred.total_time_s if pred.total_time_s > 0 else 0.0,
              "flops": o.cost.total_flops, "kernels": o.cost.kernels,
              **{f"{lv.value}_bytes": o.cost.bytes.get(lv, 0.0) for lv in MemLevel},
              **{f"AI_{lv.value}": intensity(o, lv) for lv in MemLevel},
              "ceiling_fraction": o.efficiency if o.time_s > 0 else None, "bound": o.bound.value})
    return r


def _op_table(records: Sequence[dict[str, Any]]) -> str:
    has_phase = any("phase" in r for r in records)
    cols = ["op", "type", "class"] + (["phase"] if has_phase else []) + [
        "output", "params", "time", "share", "FLOPs", "kernels", "L1 B", "L2 B", "HBM B", "AI L1", "AI L2", "AI HBM",
        "%ceil", "bound"]
    numeric = [c not in ("op", "type", "class", "phase", "output", "bound") for c in cols]
    rows = []
    for r in records:
        ai = [r[f"AI_{lv}"] for lv in ("L1", "L2", "HBM")]
        row = [(r["name"], None), (r["type"], None), (r["class"], None)]
        if has_phase:
            row.append((r.get("phase", ""), None))
        row += [(r["output"], None), (si(r["params"]) if r["params"] else "-", r["params"] or 0),
                (t_text(r["time_s"]), r["time_s"]), (f"{r['share']:.1%}", r["share"]),
                (si(r["flops"]), r["flops"]), (str(r["kernels"]), r["kernels"])]
        row += [(si(r[f"{lv}_bytes"]), r[f"{lv}_bytes"]) for lv in ("L1", "L2", "HBM")]
        row += [(si(a) if a is not None else "-", -1 if a is None else a) for a in ai]
        cf = r["ceiling_fraction"]
        row += [(f"{cf:.0%}" if cf is not None else "-", -1 if cf is None else cf), (r["bound"], None)]
        rows.append(row)
    attrs = (f' data-op="{i}"' for i in range(len(records)))
    return (f'<div class="wrap">{table(cols, rows, numeric=numeric, row_attrs=attrs)}</div>'
            '<p class="note">Click a column to sort. AI: arithmetic intensity, FLOPs per byte at that level; '
            '%ceil: fraction of the bounding ceiling reached; params: elements of the op\'s float weights.</p>')


def _class_table(pred) -> str:
    from .table import class_rows

    rows = [[(r.op_class, None), (t_text(r.time_s), r.time_s), (f"{r.share:.1%}", r.share), (str(r.ops), r.ops),
             (str(r.kernels), r.kernels), (si(r.flops), r.flops), (si(r.hbm_bytes, "B"), r.hbm_bytes)]
            for r in class_rows(pred)]
    return table(["op class", "time", "share", "ops", "kernels", "FLOPs", "HBM bytes"], rows,
                 numeric=[False] + [True] * 6)


def _summary_pairs(pred, profile) -> list[tuple[str, str]]:
    mix = ", ".join(f"{k} {v:.0%}" for k, v in sorted(pred.bound_mix().items(), key=lambda kv: -kv[1]))
    pairs = [("GPU", f"{profile.full_name} ({profile.name})"), ("precision", pred.precision),
             ("batch", str(pred.batch)), ("calibration", pred.calibration),
             ("predicted time", f"{t_text(pred.total_time_s)} ({pred.kernels} kernels, {len(pred.ops)} ops)")]
    if pred.eager_time_s is not None:
        pairs.append(("eager time", f"{t_text(pred.eager_time_s)} (op by op without a CUDA graph)"))
    if pred.batch and pred.total_time_s > 0:
        pairs.append(("throughput", f"{pred.batch / pred.total_time_s:,.0f} samples/s"))
    pairs += [("FLOPs", si(pred.total_flops, "FLOP")),
              ("bytes", ", ".join(f"{lv.value} {si(pred.total_bytes(lv), 'B')}" for lv in MemLevel)),
              ("bound mix", mix),
              ("unsupported ops", ", ".join(f"{k} x{v}" for k, v in sorted(pred.unsupported.items())) or "none")]
    if getattr(pred, "optimizations", ()):
        pairs.append(("optimize", ",".join(pred.optimizations)))
    return pairs


def _charts(series, profile, precision, title: str, op_index) -> str:
    from .plots.data import roofline_chart, time_chart

    if not any(s.ops for s in series):
        return '<p class="note">no op with a time to chart</p>'
    rc = roofline_chart(series, profile, precision, title=title)
    tc = time_chart(series, profile, precision, title=title)
    return (f'<div class="charts">{roofline_svg(rc, op_index)}{time_svg(tc, op_index)}</div>'
            '<p class="note">Hover a point for the op\'s numbers (its row in the table lights up). Hierarchical '
            'roofline: each op three points (L1, L2, HBM intensity) at its achieved FLOP/s. Time-based roofline: '
            'each op at (HBM bytes, FLOPs), its segment reaching the roofline of its predicted time.</p>')


def _train_sections(pred, profile) -> list[tuple[str, str]]:
    from .train.report import capacity_text

    rows = [[(p.name, None), (t_text(p.time_s), p.time_s),
             (f"{p.time_s / pred.total_time_s:.1%}" if pred.total_time_s else "-", p.time_s),
             (t_text(p.eager_time_s), p.eager_time_s or 0), (str(p.kernels), p.kernels), (si(p.flops), p.flops),
             (si(p.bytes.get(MemLevel.HBM, 0.0), "B"), p.bytes.get(MemLevel.HBM, 0.0))] for p in pred.phases]
    out = [("Training step phases", table(["phase", "time", "share", "eager", "kernels", "FLOPs", "HBM bytes"], rows,
                                          numeric=[False] + [True] * 6))]
    m = pred.memory
    if m is not None:
        comp = [[(k, None), (si(v, "B"), v)] for k, v in m.components.items() if v]
        out.append(("Memory", kv_table([
            ("peak", f"{m.peak_bytes / 1e9:.3f} GB at {m.peak_at}"),
            ("fits", ("fits" if m.fits else "does NOT fit") + " in " + capacity_text(m, profile)),
            ("largest batch", str(m.max_batch) if m.max_batch is not None else "-")]) + _memory_bar(m) +
            "<p>live at the peak:</p>" + table(["kind", "bytes"], comp, numeric=[False, True])))
    return out


def _memory_bar(m) -> str:
    colors = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7")
    parts = [(k, v) for k, v in m.components.items() if v > 0]
    total = max(m.usable_bytes, m.peak_bytes) or 1.0
    x = 10.0
    out = [f'<svg class="chart" viewBox="0 0 {W} 70" role="img" aria-label="memory at the peak">']
    for (k, v), c in zip(parts, colors * 4):
        w = 780 * v / total
        out.append(f'<rect x="{x:.1f}" y="10" width="{max(w, 0.5):.1f}" height="24" fill="{c}"><title>{esc(k)}: '
                   f'{esc(si(v, "B"))}</title></rect>')
        x += w
    out.append(f'<rect x="10" y="10" width="780" height="24" fill="none" stroke="#444"/>'
               f'<text x="10" y="52" class="tick">peak {esc(si(m.peak_bytes, "B"))} of {esc(si(m.usable_bytes, "B"))} '
               f'usable (hover a segment for its kind)</text></svg>')
    return "".join(out)


def prediction_page(r) -> str:
    from .plots.data import series_from_prediction

    pred, profile = r.raw, r.profile
    phases = getattr(pred, "op_phases", ()) or ()
    # the table's order: by time, largest first (graph order among equals)
    order = sorted(range(len(pred.ops)), key=lambda i: -pred.ops[i].time_s)
    records = [_op_record(pred.ops[i], pred, phases[i] if phases else None) for i in order]
    mode = getattr(pred, "mode", "infer")
    index: dict[tuple[str, str], int] = {}
    if mode == "train":
        from .train.plots import phase_series

        series = phase_series(pred, profile)
        for row, i in enumerate(order):
            index.setdefault((phases[i], pred.ops[i].cost.name), row)
        what = "training step"
    else:
        series = [series_from_prediction(pred, profile)]
        for row, i in enumerate(order):
            index.setdefault(("predicted", pred.ops[i].cost.name), row)
        what = "inference"
    title = f"{pred.model} {pred.precision} batch {pred.batch} on {profile.name}"
    sections = [("Summary", kv_table(_summary_pairs(pred, profile))), ("Time per op class", _class_table(pred))]
    if mode == "train":
        sections += _train_sections(pred, profile)
    sections += [("Roofline charts", _charts(series, profile, pred.precision, title, index)),
                 (f"Ops ({len(records)}, by time; click a column to sort)", _op_table(records))]
    return page(f"{pred.model}: predicted {what}", f"{title}, calibration {pred.calibration}", sections,
                {"kind": "prediction", "ops": records})


def comparison_page(c) -> str:
    from .plots.data import series_from_prediction

    raw = c.raw
    d = c.to_dict()
    la, lb = raw.a.label, raw.b.label
    pa, pb = raw.a.prediction, raw.b.prediction
    totals = [[("time", None), (t_text(pa.total_time_s), pa.total_time_s), (t_text(pb.total_time_s), pb.total_time_s),
               (f"{pb.total_time_s / pa.total_time_s:.2f}" if pa.total_time_s else "-", None)],
              [("FLOPs", None), (si(pa.total_flops), pa.total_flops), (si(pb.total_flops), pb.total_flops),
               (f"{pb.total_flops / pa.total_flops:.2f}" if pa.total_flops else "-", None)]]
    for lv in MemLevel:
        a, b = pa.total_bytes(lv), pb.total_bytes(lv)
        totals.append([(f"{lv.value} bytes", None), (si(a, "B"), a), (si(b, "B"), b), (f"{b / a:.2f}" if a else "-", None)])
    totals.append([("kernels", None), (str(pa.kernels), pa.kernels), (str(pb.kernels), pb.kernels),
                   (f"{pb.kernels / pa.kernels:.2f}" if pa.kernels else "-", None)])
    classes = [[(k, None), (t_text(e["a_time_s"]), e["a_time_s"]), (t_text(e["b_time_s"]), e["b_time_s"]),
                (t_text(e["saved_s"]), e["saved_s"])] for k, e in raw.by_class().items()]
    records, rows = [], []
    for m in raw.matches:
        records.append({"name": m.name, "type": m.op_type, f"{la} time_s": m.a.time_s if m.a else None,
                        f"{lb} time_s": m.b.time_s if m.b else None, "saved_s": m.saved_s,
                        f"{la} bound": m.a.bound.value if m.a else None, f"{lb} bound": m.b.bound.value if m.b else None})
        rows.append([(m.name, None), (m.op_type, None), (t_text(m.a.time_s if m.a else None), m.a.time_s if m.a else -1),
                     (t_text(m.b.time_s if m.b else None), m.b.time_s if m.b else -1), (t_text(m.saved_s), m.saved_s),
                     (f"{m.a.bound.value if m.a else '-'} -> {m.b.bound.value if m.b else '-'}", None)])
    sa, sb = series_from_prediction(pa, raw.a.profile, la), series_from_prediction(pb, raw.b.profile, lb)
    index = {(s, m.name): i for i, m in enumerate(raw.matches) for s in (la, lb)}
    sp = d["speedup"]
    sections = [("Summary", kv_table([("A", f"{la}: {pa.model}, {raw.a.profile.name}, {pa.precision}, batch {pa.batch}"),
                                      ("B", f"{lb}: {pb.model}, {raw.b.profile.name}, {pb.precision}, batch {pb.batch}"),
                                      ("speedup A/B", f"{sp:.2f}x" if sp else "-"),
                                      ("saved", t_text(d["saved_s"])),
                                      ("ops", f"matched {d['matched_ops']}, only in A {d['only_a']}, "
                                              f"only in B {d['only_b']}")])),
                ("Totals", table(["", la, lb, "B / A"], totals, cls="plain", numeric=[False, True, True, True])),
                ("Time per op class", table(["op class", la, lb, "saved"], classes,
                                            numeric=[False, True, True, True])),
                ("Roofline charts (A filled -> B hollow)",
                 _charts([sa, sb], raw.a.profile, (pa.precision, pb.precision), f"{pa.model}: {la} -> {lb}", index)),
                (f"Ops ({len(rows)})", '<div class="wrap">' + table(
                    ["op", "type", la, lb, "saved", "bound A -> B"], rows,
                    numeric=[False, False, True, True, True, False],
                    row_attrs=(f' data-op="{i}"' for i in range(len(rows)))) + "</div>")]
    return page(f"compare {pa.model}: {la} vs {lb}", f"B relative to A, ceilings of {raw.a.profile.name}", sections,
                {"kind": "comparison", "ops": records})


def sweep_page(s) -> str:
    from .sweep import mix_text

    raw = s.raw
    base = raw.rows[raw.baseline] if raw.baseline is not None else None
    rows, records = [], []
    for r in raw.rows:
        records.append({"setting": r.label, "time_s": r.total_time_s, "throughput_per_s": r.throughput_per_s,
                        "speedup_per_sample": r.speedup_per_sample, "error": r.error})
        rows.append([(r.gpu, None), (r.precision, None), (str(r.batch), r.batch or 0),
                     (t_text(r.total_time_s), r.total_time_s if r.ok else -1),
                     (t_text(r.eager_time_s), r.eager_time_s or -1),
                     (si(r.throughput_per_s, "/s"), r.throughput_per_s or -1),
                     (f"{r.speedup_per_sample:.2f}x" if r.speedup_per_sample else "-", r.speedup_per_sample or -1),
                     (mix_text(r.bound_mix) if r.ok else "-", None), (str(r.kernels or "-"), r.kernels or 0),
                     (f"n/a: {r.error}" if r.error else r.note, None)])
    bars = bars_svg([r.label for r in raw.rows], [r.throughput_per_s for r in raw.rows], "samples/s",
                    "throughput per setting (samples / s)")
    sections = [("Summary", kv_table([("model", raw.model), ("settings", f"{len(raw.rows)}, {raw.succeeded} predicted"),
                                      ("baseline", base.label if base else "-"),
                                      ("speedup", "throughput of the setting / throughput of the baseline")])),
                ("Throughput", bars),
                ("Settings", table(["gpu", "precision", "batch", "time", "eager", "throughput", "speedup",
                                    "C/L1/L2/HBM/lat %", "kernels", "note"], rows,
                                   numeric=[False, False, True, True, True, True, True, False, True, False]))]
    return page(f"sweep of {raw.model}", f"{len(raw.rows)} settings", sections, {"kind": "sweep", "ops": records})


def validation_page(v) -> str:
    from .plots.data import class_color
    from .validate import rel_error, summary

    raw = v.raw
    pn, mn = raw.predicted.network, raw.measured.network
    records, rows, pairs = [], [], []
    seen_classes: set[str] = set()
    ranked = sorted(raw.rows, key=lambda r: -max(r.measured.time_s if r.measured else 0.0,
                                                 r.predicted.time_s if r.predicted else 0.0))
    index = {}
    for i, r in enumerate(ranked):
        index[("predicted", r.name)] = index[("measured", r.name)] = i
        p, m = r.predicted, r.measured
        err = rel_error(p.time_s if p else None, m.time_s if m else None)
        records.append({"name": r.name, "type": r.op_type, "predicted_time_s": p.time_s if p else None,
                        "measured_time_s": m.time_s if m else None, "error": err,
                        "predicted_bound": p.bound if p else None, "measured_bound": m.bound if m else None})
        rows.append([(r.name, None), (r.op_type, None), (t_text(p.time_s if p else None), p.time_s if p else -1),
                     (t_text(m.time_s if m else None), m.time_s if m else -1),
                     (f"{err:+.0%}" if err is not None else "-", err if err is not None else -1e9),
                     (f"{p.bound if p else '-'}/{m.bound if m else '-'}", None)])
        if p and m:
            from .graph.opclass import op_class

            pairs.append((m.time_s, p.time_s, class_color(op_class(r.op_type)), i))
            seen_classes.add(op_class(r.op_type))
    s = summary(raw)
    med = s["op_time_abs_error_median"]
    sections = [("Summary", kv_table([
        ("network time", f"predicted {t_text(pn.time_s)}, measured {t_text(mn.time_s)} "
                         f"({(rel_error(pn.time_s, mn.time_s) or 0):+.0%})"),
        ("ops compared", str(s["ops_compared"])),
        ("median |time error|", "-" if med is None else f"{med:.0%}"),
        ("measured", f"{raw.ncu_path} ({raw.kernels} kernels, {raw.attributed} attributed)")])),
        ("Predicted vs measured time per op", scatter_svg(pairs, "predicted vs measured time per op (s)",
                                                         "measured time (s)", "predicted time (s)", sorted(seen_classes))),
        ("Roofline charts (predicted filled -> measured hollow)",
         _charts([raw.predicted, raw.measured], v.profile, raw.prediction.precision,
                 f"{raw.prediction.model}: predicted -> measured", index)),
        (f"Ops ({len(rows)})", '<div class="wrap">' + table(
            ["op", "type", "predicted", "measured", "error", "bound pred/meas"], rows,
            numeric=[False, False, True, True, True, False],
            row_attrs=(f' data-op="{i}"' for i in range(len(rows)))) + "</div>")]
    p = raw.prediction
    return page(f"validate {p.model}", f"{p.precision} batch {p.batch} on {v.profile.name}", sections,
                {"kind": "validation", "ops": records})


_PAGES = {"prediction": prediction_page, "comparison": comparison_page, "sweep": sweep_page,
          "validation": validation_page}
