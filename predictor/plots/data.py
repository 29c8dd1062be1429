"""Chart data: pure functions from ops (predicted or measured) to frozen dataclasses. No matplotlib.

Two charts, each built from one or two `Series` (predicted; predicted and measured; before and after):

* `roofline_chart`: the hierarchical roofline. Log-log axes of arithmetic intensity (FLOP/byte) and
  attainable FLOP/s; the GPU's compute ceilings (every (precision, unit) the series use, CUDA-core and
  tensor) and its L1/L2/HBM bandwidth roofs. Each op is three points, its intensity at L1, L2 and HBM
  (FLOPs / bytes at that level), all at its achieved FLOP/s (FLOPs / time), joined by a line; one colour
  per op class (`predictor.graph.opclass.op_class`), marker area by share of the series' time. The top
  ops by time get a number (their name is in the key), and each series has a network point (totals).
* `time_chart`: the time-based roofline. Each op at (bytes moved at HBM, FLOPs) on log axes, the
  machine-balance diagonal (FLOPs = bytes x peak / BW) of every compute ceiling, and a segment from the op
  to its vertex on the roofline of its time T: FLOPs = T x peak when the op lies above its balance
  diagonal (compute side), bytes = T x BW below it. The segment's length in decades is log10(T / ideal
  time): time above the ideal. The launch-overhead box holds what one kernel invocation could do in the
  launch overhead (bytes < inv x overhead x BW, FLOPs < inv x overhead x peak), for the eager launch overhead
  and for the per-kernel gap of a CUDA-graph replay (the reference runtime of the predicted time). Panels of time vs FLOPs
  and time vs HBM bytes carry the same points with the lines time = FLOPs / peak and time = bytes / BW.

With two series, arrows go from each of the top ops of the first series to the same op (by name) in the
second: at its HBM point on the hierarchical chart, point to point on the time chart.
Ops without FLOPs (copies, views) cannot sit on a FLOP/s axis: they are counted in ``omitted``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Iterable, Mapping, Sequence

from ..graph.opclass import CLASSES, op_class
from ..machine.profile import MachineProfile
from ..types import MemLevel, NetworkPrediction, Precision, Unit

LEVELS = ("L1", "L2", "HBM")
TOP_LABELS = 6          # ops labelled per chart (the first series' top ops by time)
TOP_ARROWS = TOP_LABELS  # ops linked by arrows between two series: the labelled ones
# one colour per op class (colour-blind friendly Tableau 10, then two extra)
CLASS_COLORS: Mapping[str, str] = MappingProxyType(dict(zip(CLASSES, (
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f",
    "#bab0ac", "#17becf"))))
LEVEL_MARKERS: Mapping[str, str] = MappingProxyType({"L1": "^", "L2": "s", "HBM": "o"})
MIN_AREA, MAX_AREA = 10.0, 420.0


def class_color(cls: str) -> str:
    return CLASS_COLORS.get(cls, "#555555")


def marker_area(share: float) -> float:
    """Marker area (points^2) proportional to the share of time, clipped to stay visible and bounded."""
    return min(MAX_AREA, MIN_AREA + 2000.0 * max(share, 0.0))


# ------------------------------------------------------------------------------------------ inputs
@dataclass(frozen=True)
class OpSample:
    """One op as the charts see it: work, bytes per level, time (predicted or measured)."""

    name: str
    op_type: str
    flops: float
    bytes: Mapping[str, float]        # "L1", "L2", "HBM" -> bytes
    time_s: float
    kernels: int = 1
    bound: str = ""
    compute_time_s: float = 0.0       # FLOPs over the peaks of their own (precision, unit): ideal compute time
    flops_by_unit: Mapping[tuple[str, str], float] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def op_class(self) -> str:
        return op_class(self.op_type)


@dataclass(frozen=True)
class Series:
    """A set of ops with a network-level sample (totals, which may include kernels no op owns)."""

    label: str
    ops: tuple[OpSample, ...]
    network: OpSample


def compute_time_of(flops_by_unit: Mapping[tuple[str, str], float], profile: MachineProfile) -> float:
    """Ideal compute time of FLOPs by (precision, unit) on the profile's ceilings (unknown keys skipped)."""
    t = 0.0
    for (p, u), f in flops_by_unit.items():
        try:
            peak = profile.peak(Precision(p), Unit(u))
        except ValueError:
            peak = None
        if peak and f:
            t += f / peak
    return t


def series_from_prediction(pred: NetworkPrediction, profile: MachineProfile, label: str = "predicted") -> Series:
    """The ops of a prediction that launch kernels (time > 0), and its network totals."""
    ops = []
    by_unit_total: dict[tuple[str, str], float] = {}
    for o in pred.ops:
        if o.time_s <= 0:
            continue
        by_unit: dict[tuple[str, str], float] = {}
        for f in o.cost.flops:
            key = (f.precision.value, f.unit.value)
            by_unit[key] = by_unit.get(key, 0.0) + f.flops
            by_unit_total[key] = by_unit_total.get(key, 0.0) + f.flops
        ops.append(OpSample(
            name=o.cost.name, op_type=o.cost.op_type, flops=o.cost.total_flops,
            bytes=MappingProxyType({lv.value: float(o.cost.bytes.get(lv, 0.0)) for lv in MemLevel}),
            time_s=o.time_s, kernels=o.cost.kernels + len(o.extra_kernels), bound=o.bound.value,
            compute_time_s=compute_time_of(by_unit, profile), flops_by_unit=MappingProxyType(by_unit)))
    network = OpSample(
        name="network", op_type="network", flops=pred.total_flops,
        bytes=MappingProxyType({lv.value: pred.total_bytes(lv) for lv in MemLevel}), time_s=pred.total_time_s,
        kernels=sum(o.kernels for o in ops), bound=max(pred.bound_mix().items(), key=lambda kv: kv[1],
                                                       default=("", 0))[0],
        compute_time_s=compute_time_of(by_unit_total, profile), flops_by_unit=MappingProxyType(by_unit_total))
    return Series(label, tuple(ops), network)


def top_ops(series: Series, k: int) -> tuple[OpSample, ...]:
    """The k ops with the largest time (ties by name, so the choice is deterministic)."""
    return tuple(sorted(series.ops, key=lambda o: (-o.time_s, o.name))[:k])


def short_name(name: str, width: int = 38) -> str:
    """'/layer4/layer4.0/conv2/Conv' -> 'layer4.0/conv2/Conv'; long names keep their end."""
    parts = [p for p in name.split("/") if p]
    # TorchScript scopes repeat the parent ('/layer4/layer4.0/...'): drop a part that prefixes the next
    kept = [p for i, p in enumerate(parts) if not (i + 1 < len(parts) and parts[i + 1].startswith(p + "."))]
    s = "/".join(kept) or name
    return s if len(s) <= width else "..." + s[-(width - 3):]


# ------------------------------------------------------------------------------------------ shared
@dataclass(frozen=True)
class Ceiling:
    key: str           # "fp16/tensor" or "HBM"
    kind: str          # "compute" (FLOP/s) or "memory" (B/s)
    value: float
    label: str         # "fp16 tensor 766 TFLOP/s"


@dataclass(frozen=True)
class LabelKey:
    label: str         # the number drawn beside the point
    text: str          # what the key says: name, type, share of time


@dataclass(frozen=True)
class Arrow:
    name: str
    start: tuple[float, float]
    end: tuple[float, float]


def _si(x: float, unit: str) -> str:
    for scale, prefix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(x) >= scale:
            return f"{x / scale:.3g} {prefix}{unit}"
    return f"{x:.3g} {unit}"


def _precisions(precision: str | Sequence[str]) -> tuple[str, ...]:
    return (precision,) if isinstance(precision, str) else tuple(precision)


def compute_ceilings(profile: MachineProfile, precision: str | Sequence[str], series: Sequence[Series] = (),
                     min_share: float = 0.01) -> tuple[Ceiling, ...]:
    """Every compute ceiling of the precision(s) in use: CUDA-core and tensor of each policy's matmul and
    vector precisions, plus any (precision, unit) carrying >= min_share of a series' FLOPs. Highest first."""
    from ..precision import policy

    keys = set()
    for name in _precisions(precision):
        pol = policy(name)
        keys |= {pol.matmul, pol.vector, (pol.matmul[0], Unit.CUDA), (pol.matmul[0], Unit.TENSOR),
                 (pol.vector[0], Unit.CUDA)}
    for s in series:
        total = sum(s.network.flops_by_unit.values()) or 1.0
        for (p, u), f in s.network.flops_by_unit.items():
            if f / total >= min_share:
                try:
                    keys.add((Precision(p), Unit(u)))
                except ValueError:
                    pass
    out = []
    for p, u in keys:
        v = profile.peak(p, u)
        if v:
            out.append(Ceiling(f"{p.value}/{u.value}", "compute", v,
                               f"{p.value} {'tensor' if u is Unit.TENSOR else 'CUDA cores'} {_si(v, 'FLOP/s')}"))
    return tuple(sorted(out, key=lambda c: (-c.value, c.key)))


def memory_ceilings(profile: MachineProfile) -> tuple[Ceiling, ...]:
    return tuple(Ceiling(lv.value, "memory", profile.bandwidth(lv), f"{lv.value} {_si(profile.bandwidth(lv), 'B/s')}")
                 for lv in MemLevel)


def primary_peak(profile: MachineProfile, precision: str | Sequence[str]) -> float:
    """The peak of the (first) precision's matmul path (tensor cores where the policy uses them)."""
    from ..precision import policy

    pol = policy(_precisions(precision)[0])
    return profile.peak(*pol.matmul) or profile.peak(Precision.FP32, Unit.CUDA)


def _bounds(values: Iterable[float], pad: float = 2.0) -> tuple[float, float]:
    vals = [v for v in values if v > 0 and math.isfinite(v)]
    if not vals:
        return (1.0, 10.0)
    lo, hi = min(vals) / pad, max(vals) * pad
    # whole decades: readable ticks
    return (10.0 ** math.floor(math.log10(lo)), 10.0 ** math.ceil(math.log10(hi)))  # floats: an int above 2**63 is no axis limit


def place_labels(positions: Sequence[tuple[float, float]], xlim: tuple[float, float], ylim: tuple[float, float],
                 size: tuple[float, float] = (560.0, 380.0),
                 avoid: Sequence[tuple[float, float]] = ()) -> tuple[tuple[float, float], ...]:
    """Offsets (points) for labels at log-axis `positions` so that no two labels overlap, nor cover another
    labelled point or an `avoid` point (network markers): greedy over eight directions around each point,
    in an axes box of `size` points. Pure; same input, same output."""
    near = ((7, 7), (7, -13), (-15, 7), (-15, -13), (11, -3), (-19, -3), (-4, 11), (-4, -17))
    # then farther out, twelve directions on rings of 24, 38 and 54 points (drawn with a leader line)
    far = tuple((round(r * math.cos(math.radians(a))) - 4, round(r * math.sin(math.radians(a))) - 3)
                for r in (24, 38, 54) for a in range(15, 360, 30))
    cands = near + far
    import numpy as np

    lx = (math.log10(xlim[0]), math.log10(xlim[1]))
    ly = (math.log10(ylim[0]), math.log10(ylim[1]))

    def to_pt(pts):
        arr = np.array([(x, y) for x, y in pts], dtype=float).reshape(-1, 2)
        arr = np.log10(np.maximum(arr, 1e-300))
        return np.column_stack(((arr[:, 0] - lx[0]) / (lx[1] - lx[0]) * size[0],
                                (arr[:, 1] - ly[0]) / (ly[1] - ly[0]) * size[1]))

    anchors = to_pt(positions)
    others = np.vstack([anchors, to_pt(avoid)]) if len(avoid) else anchors
    placed: list[tuple[float, float]] = []
    out = []
    for ax, ay in anchors:
        keep = (others[:, 0] != ax) | (others[:, 1] != ay)
        ox, oy = others[keep, 0], others[keep, 1]
        best, best_d = cands[0], -1.0
        for dx, dy in cands:
            cx, cy = ax + dx, ay + dy
            # distance to the nearest label already placed and to every other point's anchor
            d = min([math.hypot(cx - px, cy - py) for px, py in placed] +
                    ([float(np.hypot(ox - cx, oy - cy).min()) + 4.0] if len(ox) else []) + [1e9])
            if d >= 12.0:
                best = (dx, dy)
                break
            if d > best_d:
                best, best_d = (dx, dy), d
        placed.append((float(ax + best[0]), float(ay + best[1])))
        out.append((float(best[0]), float(best[1])))
    return tuple(out)


def _key_text(o: OpSample, total: float) -> str:
    share = o.time_s / total if total > 0 else 0.0
    name = short_name(o.name, 34)
    if not name.endswith(o.op_type):
        name += f" ({o.op_type})"
    return f"{name}  {share:.1%}"


# ------------------------------------------------------------------------------------------ hierarchical
@dataclass(frozen=True)
class RooflinePoint:
    series: str
    name: str
    op_type: str
    op_class: str
    color: str
    flops_per_s: float                     # achieved: FLOPs / time
    intensity: Mapping[str, float]         # level -> FLOP/byte (levels with bytes > 0)
    share: float                           # of the series' time
    area: float
    label: str = ""                        # "" unless among the top ops
    label_offset: tuple[float, float] = (0.0, 0.0)


@dataclass(frozen=True)
class RooflineChart:
    title: str
    series: tuple[str, ...]
    ceilings: tuple[Ceiling, ...]          # compute first, then memory (L1, L2, HBM)
    points: tuple[RooflinePoint, ...]
    networks: tuple[RooflinePoint, ...]    # one per series
    arrows: tuple[Arrow, ...]
    keys: tuple[LabelKey, ...]
    xlim: tuple[float, float]
    ylim: tuple[float, float]
    omitted: Mapping[str, int]             # series -> ops without FLOPs (not placeable)


def roofline_point(o: OpSample, series: str, total_time: float) -> RooflinePoint | None:
    if o.flops <= 0 or o.time_s <= 0:
        return None
    share = o.time_s / total_time if total_time > 0 else 0.0
    inten = {lv: o.flops / b for lv in LEVELS if (b := o.bytes.get(lv, 0.0)) > 0}
    return RooflinePoint(series, o.name, o.op_type, o.op_class if o.op_type != "network" else "network",
                         class_color(o.op_class) if o.op_type != "network" else "#000000",
                         o.flops / o.time_s, MappingProxyType(inten), share, marker_area(share))


def label_anchor(p: RooflinePoint) -> tuple[float, float] | None:
    """Where an op's label and arrow attach: its HBM point (else L2, else L1)."""
    for lv in ("HBM", "L2", "L1"):
        if lv in p.intensity:
            return (p.intensity[lv], p.flops_per_s)
    return None


def roofline_chart(series: Sequence[Series], profile: MachineProfile, precision: str | Sequence[str], title: str = "",
                   top: int = TOP_LABELS, arrows: int = TOP_ARROWS) -> RooflineChart:
    ceilings = compute_ceilings(profile, precision, series) + memory_ceilings(profile)
    points: list[RooflinePoint] = []
    networks: list[RooflinePoint] = []
    omitted: dict[str, int] = {}
    for s in series:
        total = s.network.time_s or sum(o.time_s for o in s.ops)
        for o in s.ops:
            p = roofline_point(o, s.label, total)
            if p is None:
                omitted[s.label] = omitted.get(s.label, 0) + 1
            else:
                points.append(p)
        n = roofline_point(s.network, s.label, total)
        if n is not None:
            networks.append(n)
    xs = [x for p in points + networks for x in p.intensity.values()]
    peaks = [c.value for c in ceilings if c.kind == "compute"]
    bws = [c.value for c in ceilings if c.kind == "memory"]
    balances = [pk / bw for pk in peaks for bw in bws]
    xlim = _bounds(xs + [max(balances) * 3, min(balances) / 3] if balances else xs)
    ylim = _bounds([p.flops_per_s for p in points + networks] + [max(peaks) * 1.5], pad=1.5)
    # labels: the first series' top ops (numbers; the key names them)
    first = series[0] if series else None
    by_name = {(p.series, p.name): p for p in points}
    keys: list[LabelKey] = []
    labelled: list[RooflinePoint] = []
    if first is not None:
        total = first.network.time_s or 1.0
        for o in top_ops(first, len(first.ops)):
            p = by_name.get((first.label, o.name))
            if p is None or label_anchor(p) is None:
                continue
            labelled.append(p)
            keys.append(LabelKey(str(len(labelled)), _key_text(o, total)))
            if len(labelled) == top:
                break
    # labels keep clear of the network markers and of every op's anchor (crowded charts push them outwards)
    offsets = place_labels([label_anchor(p) for p in labelled], xlim, ylim,
                           avoid=[(x, n.flops_per_s) for n in networks for x in n.intensity.values()]
                           + [a for p in points if (a := label_anchor(p)) is not None])
    relabel = {(p.series, p.name): (k.label, off) for p, k, off in zip(labelled, keys, offsets)}
    points = [_with_label(p, relabel.get((p.series, p.name))) for p in points]
    links = _arrows(series, {(p.series, p.name): label_anchor(p) for p in points}, arrows)
    if len(networks) == 2:
        a, b = label_anchor(networks[0]), label_anchor(networks[1])
        if a and b:
            links.append(Arrow("network", a, b))
    return RooflineChart(title, tuple(s.label for s in series), ceilings, tuple(points), tuple(networks),
                         tuple(links), tuple(keys), xlim, ylim, MappingProxyType(omitted))


def _with_label(p, lab):
    if lab is None:
        return p
    from dataclasses import replace

    return replace(p, label=lab[0], label_offset=lab[1])


def _arrows(series: Sequence[Series], anchor: Mapping[tuple[str, str], tuple[float, float] | None],
            k: int) -> list[Arrow]:
    if len(series) < 2:
        return []
    a, b = series[0], series[1]
    out = []
    for o in top_ops(a, len(a.ops)):
        s, e = anchor.get((a.label, o.name)), anchor.get((b.label, o.name))
        if s is None or e is None:
            continue
        out.append(Arrow(o.name, s, e))
        if len(out) == k:
            break
    return out


# ------------------------------------------------------------------------------------------ time-based
@dataclass(frozen=True)
class TimePoint:
    series: str
    name: str
    op_type: str
    op_class: str
    color: str
    bytes: float                # at HBM
    flops: float
    time_s: float
    peak_flops_per_s: float     # the op's own compute ceiling: FLOPs / ideal compute time
    vertex: tuple[float, float]  # (bytes, FLOPs) on the roofline of time T
    compute_side: bool          # above its balance diagonal: the segment is vertical
    ideal_time_s: float         # max(FLOPs / peak, bytes / BW)
    share: float
    area: float
    label: str = ""
    label_offset: tuple[float, float] = (0.0, 0.0)


@dataclass(frozen=True)
class LaunchBox:
    label: str
    invocations: int
    overhead_s: float
    bytes: float                # invocations x overhead x BW
    flops: float                # invocations x overhead x peak


@dataclass(frozen=True)
class Diagonal:
    label: str
    balance: float              # FLOP/byte: FLOPs = balance x bytes


@dataclass(frozen=True)
class TimeChart:
    title: str
    series: tuple[str, ...]
    bandwidth: float            # HBM B/s
    peak: float                 # primary compute ceiling (secondary y axis reads FLOPs / peak)
    ceilings: tuple[Ceiling, ...]
    diagonals: tuple[Diagonal, ...]
    launch_boxes: tuple[LaunchBox, ...]     # eager launch, and the per-kernel gap of a CUDA-graph replay
    points: tuple[TimePoint, ...]           # ops with FLOPs and HBM bytes (the roofline panel)
    time_points: tuple[TimePoint, ...]      # ops with a time: the time vs FLOPs / bytes panels
    arrows: tuple[Arrow, ...]
    keys: tuple[LabelKey, ...]
    xlim: tuple[float, float]
    ylim: tuple[float, float]
    omitted: Mapping[str, int]


def vertex(flops: float, nbytes: float, time_s: float, peak: float, bw: float) -> tuple[tuple[float, float], bool]:
    """The op's vertex on the time-T roofline, and whether it is on the compute side.

    Above the balance diagonal (FLOPs / bytes >= peak / BW) the vertex is (bytes, T x peak): the FLOPs
    the op could have done in T; below it (T x BW, FLOPs): the bytes it could have moved."""
    if nbytes <= 0 or flops / nbytes >= peak / bw:
        return (nbytes, time_s * peak), True
    return (time_s * bw, flops), False


def time_point(o: OpSample, series: str, total: float, bw: float, default_peak: float) -> TimePoint:
    peak = o.flops / o.compute_time_s if o.compute_time_s > 0 and o.flops > 0 else default_peak
    nbytes = o.bytes.get("HBM", 0.0)
    v, side = vertex(o.flops, nbytes, o.time_s, peak, bw)
    share = o.time_s / total if total > 0 else 0.0
    return TimePoint(series, o.name, o.op_type, o.op_class, class_color(o.op_class), nbytes, o.flops, o.time_s,
                     peak, v, side, max(o.flops / peak, nbytes / bw), share, marker_area(share))


def time_chart(series: Sequence[Series], profile: MachineProfile, precision: str | Sequence[str], title: str = "",
               top: int = TOP_LABELS, arrows: int = TOP_ARROWS, invocations: int = 1) -> TimeChart:
    bw = profile.bandwidth(MemLevel.HBM)
    peak = primary_peak(profile, precision)
    comp = compute_ceilings(profile, precision, series)
    diagonals = tuple(Diagonal(f"{c.label.rsplit(' ', 2)[0]} balance {c.value / bw:.0f} FLOP/B", c.value / bw)
                      for c in comp)
    boxes = tuple(LaunchBox(label, invocations, t, invocations * t * bw, invocations * t * peak)
                  for label, t in (("eager launch", profile.launch_overhead_s),
                                   ("CUDA-graph launch", profile.kernel_gap_s)))
    pts: list[TimePoint] = []
    tpts: list[TimePoint] = []
    omitted: dict[str, int] = {}
    for s in series:
        total = s.network.time_s or sum(o.time_s for o in s.ops)
        for o in s.ops:
            if o.time_s <= 0:
                continue
            p = time_point(o, s.label, total, bw, peak)
            tpts.append(p)
            if o.flops > 0 and p.bytes > 0:
                pts.append(p)
            else:
                omitted[s.label] = omitted.get(s.label, 0) + 1
    xlim = _bounds([p.bytes for p in pts] + [p.vertex[0] for p in pts] + [b.bytes for b in boxes])
    ylim = _bounds([p.flops for p in pts] + [p.vertex[1] for p in pts] + [b.flops for b in boxes])
    keys: list[LabelKey] = []
    labelled: list[TimePoint] = []
    if series:
        first = series[0]
        by_name = {p.name: p for p in pts if p.series == first.label}
        total = first.network.time_s or 1.0
        for o in top_ops(first, len(first.ops)):
            if o.name in by_name:
                labelled.append(by_name[o.name])
                keys.append(LabelKey(str(len(labelled)), _key_text(o, total)))
                if len(labelled) == top:
                    break
    offsets = place_labels([(p.bytes, p.flops) for p in labelled], xlim, ylim, avoid=[(p.bytes, p.flops) for p in pts])
    relabel = {p.name: (k.label, off) for p, k, off in zip(labelled, keys, offsets)}
    first_label = series[0].label if series else ""
    pts = [_with_label(p, relabel.get(p.name)) if p.series == first_label else p for p in pts]
    links = _arrows(series, {(p.series, p.name): (p.bytes, p.flops) for p in pts}, arrows)
    return TimeChart(title, tuple(s.label for s in series), bw, peak, comp + memory_ceilings(profile), diagonals,
                     boxes, tuple(pts), tuple(tpts), tuple(links), tuple(keys), xlim, ylim, MappingProxyType(omitted))
