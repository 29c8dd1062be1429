"""The per-op-class summary and the detailed per-op rows of ``predict``'s table (pure text from a prediction).

Per class (``predictor.graph.opclass.op_class``): time, share of the network's time, ops, kernels, FLOPs and
HBM bytes. Per op: output shape and parameters (``predictor.opinfo``; '-' where the graph did not give them,
as for a training step's backward kernels), FLOPs, bytes at L1/L2/HBM, arithmetic intensity at each level
(FLOPs / bytes there), the fraction of the bounding ceiling reached (the calibration's ``efficiency``) and the
bound.
"""
from __future__ import annotations

from operator import attrgetter
from typing import Sequence

from .graph.opclass import op_class
from .frozen import frozen_dataclass
from .opinfo import shape_text
from .types import MemLevel, NetworkPrediction, OpPrediction


# the columns of predict's CSV (predictor/report.py; a training step's adds ``phase``: predictor/train/report.py)
CSV_COLUMNS = ("name", "op_type", "flops", "bytes_L1", "bytes_L2", "bytes_HBM", "kernels", "time_s", "bound",
               "efficiency")


def si_text(x: float, unit: str) -> str:
    for scale, prefix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(x) >= scale:
            return f"{x / scale:.3g} {prefix}{unit}"
    return f"{x:.3g} {unit}"


def time_text(t: float) -> str:
    if t >= 1:
        return f"{t:.3f} s"
    if t >= 1e-3:
        return f"{t * 1e3:.3f} ms"
    return f"{t * 1e6:.2f} us"


def totals_lines(pred: NetworkPrediction, time_label: str) -> list[str]:
    """The table's totals: time (labelled), eager time when calibrated, FLOPs, bytes per level."""
    lines = [f"{time_label:<16}{time_text(pred.total_time_s)}  ({pred.kernels} kernels, {len(pred.ops)} ops)"]
    if pred.eager_time_s is not None:
        lines.append(f"eager time      {time_text(pred.eager_time_s)}  (op by op without a CUDA graph)")
    lines.append(f"total FLOPs     {si_text(pred.total_flops, 'FLOP')}")
    lines.append("total bytes     " + ", ".join(f"{lv.value} {si_text(pred.total_bytes(lv), 'B')}" for lv in MemLevel))
    return lines


@frozen_dataclass
class ClassRow:
    """One op class's totals in the table."""

    op_class: str
    time_s: float
    share: float
    ops: int
    kernels: int
    flops: float
    hbm_bytes: float


def class_rows(pred: NetworkPrediction) -> tuple[ClassRow, ...]:
    """One row per op class present, by time (largest first; ties by name)."""
    acc: dict[str, list] = {}
    by_type: dict[str, list] = {}  # op type -> its class's accumulator
    hbm = MemLevel.HBM
    for o in pred.ops:
        c = o.cost
        e = by_type.get(c.op_type)
        if e is None:
            cls = op_class(c.op_type)
            e = acc.get(cls)
            if e is None:
                e = acc[cls] = [0.0, 0, 0, 0.0, 0.0]
            by_type[c.op_type] = e
        e[0] += o.time_s
        e[1] += 1
        e[2] += c.kernels
        try:
            e[3] += c._total_flops  # (an OpCost's total in its slot: no call of the property)
        except AttributeError:
            e[3] += c.total_flops
        e[4] += c.bytes.get(hbm, 0.0)
    total = pred.total_time_s
    rows = [ClassRow(c, t, t / total if total > 0 else 0.0, n, k, f, b) for c, (t, n, k, f, b) in acc.items()]
    return tuple(sorted(rows, key=lambda r: (-r.time_s, r.op_class)))


def si(x: float, unit: str = "") -> str:
    for scale, prefix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(x) >= scale:
            return f"{x / scale:.3g}{prefix}{unit}"
    return f"{x:.3g}{unit}"




def class_lines(pred: NetworkPrediction) -> list[str]:
    hdr = f"{'op class':<14} {'time':>10} {'share':>6} {'ops':>5} {'kernels':>7} {'FLOPs':>9} {'HBM bytes':>9}"
    out = [hdr, "-" * len(hdr)]
    for r in class_rows(pred):
        out.append(f"{r.op_class:<14} {time_text(r.time_s):>10} {r.share:>6.1%} {r.ops:>5} {r.kernels:>7} "
                   f"{si(r.flops):>9} {si(r.hbm_bytes, 'B'):>9}")
    return out


def intensity(op: OpPrediction, level: MemLevel) -> float | None:
    """FLOPs per byte at ``level``; None without bytes there."""
    b = op.cost.bytes.get(level, 0.0)
    return op.cost.total_flops / b if b > 0 else None


def _ai(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x:.3g}" if x < 1e4 else si(x)


NAME_W = 40
OP_HEADER = (f"{'op':<{NAME_W}} {'type':<16} {'output':<16} {'params':>7} {'time':>10} {'share':>6} {'FLOPs':>8} "
             f"{'L1 B':>8} {'L2 B':>8} {'HBM B':>8} {'AI L1':>6} {'AI L2':>6} {'AI HBM':>6} {'%ceil':>5} "
             f"{'bound':>8}")


def op_line(o: OpPrediction, pred: NetworkPrediction, total: float, name_w: int = NAME_W) -> str:
    info = pred.op_info.get(o.cost.name) if getattr(pred, "op_info", None) else None
    name = o.cost.name if len(o.cost.name) <= name_w else "..." + o.cost.name[-(name_w - 3):]
    shape = shape_text(info.output_shape) if info else "-"
    shape = shape if len(shape) <= 16 else shape[:15] + "+"
    params = si(info.params) if info and info.params else "-"
    b = o.cost.bytes
    eff = f"{o.efficiency:.0%}" if o.time_s > 0 else "-"
    return (f"{name:<{name_w}} {o.cost.op_type[:16]:<16} {shape:<16} {params:>7} {time_text(o.time_s):>10} "
            f"{o.time_s / total:>6.1%} {si(o.cost.total_flops):>8} {si(b.get(MemLevel.L1, 0.0)):>8} "
            f"{si(b.get(MemLevel.L2, 0.0)):>8} {si(b.get(MemLevel.HBM, 0.0)):>8} "
            f"{_ai(intensity(o, MemLevel.L1)):>6} {_ai(intensity(o, MemLevel.L2)):>6} "
            f"{_ai(intensity(o, MemLevel.HBM)):>6} {eff:>5} {o.bound.value:>8}")


def op_lines(pred: NetworkPrediction, ranked: Sequence[OpPrediction], top: int) -> list[str]:
    """The header, the top ``top`` ops of ``ranked`` and a '(N more ops)' line for the rest."""
    total = pred.total_time_s or 1.0
    out = [OP_HEADER, "-" * len(OP_HEADER)]
    out += [op_line(o, pred, total) for o in ranked[:top]]
    if len(ranked) > top:
        rest = sum(map(attrgetter("time_s"), ranked[top:]))
        label = f"({len(ranked) - top} more ops: --top all lists them)"
        out.append(f"{label:<{NAME_W + 1 + 16 + 1 + 16 + 1 + 7}} {time_text(rest):>10} {rest / total:>6.1%}")
    return out


LEGEND = ("AI: arithmetic intensity, FLOPs per byte at that level; %ceil: fraction of the bounding ceiling "
          "reached; params: elements of the op's float weights")


def json_extras(doc: dict, pred: NetworkPrediction) -> dict:
    """Keys the table adds to predictor/report.py's JSON document (in place; also returned): per op ``op_class``,
    ``output_shape`` (null when unknown), ``params`` and ``intensity`` {L1, L2, HBM} (FLOP/byte, null without
    bytes there); at the top ``classes``: {class: {time_s, share, ops, kernels, flops, hbm_bytes}}."""
    info = getattr(pred, "op_info", None) or {}
    for entry, o in zip(doc.get("ops", []), pred.ops):
        i = info.get(o.cost.name)
        entry["op_class"] = op_class(o.cost.op_type)
        entry["output_shape"] = list(i.output_shape) if i and i.output_shape is not None else None
        entry["params"] = i.params if i else None
        entry["intensity"] = {lv.value: intensity(o, lv) for lv in MemLevel}
    doc["classes"] = {r.op_class: {"time_s": r.time_s, "share": r.share, "ops": r.ops, "kernels": r.kernels,
                                   "flops": r.flops, "hbm_bytes": r.hbm_bytes} for r in class_rows(pred)}
    return doc
