"""Output of a training-step prediction: the JSON keys it adds, its terminal table and CSV.

JSON (added to predictor/report.py's document): ``mode: "train"``; ``phases`` {forward, backward,
optimizer: {time_s, eager_time_s, flops, bytes {L1, L2, HBM}, kernels, ops}}; ``memory`` {peak_bytes,
peak_at, components (live bytes by kind at the peak), totals, capacity_bytes, usable_bytes, fits,
max_batch, step_start_bytes, after_backward_bytes}; ``optimizer`` {name, impl}; ``loss``; ``notes``; and a
``phase`` on every op.
"""
from __future__ import annotations

import io

from ..machine.profile import MachineProfile
from ..types import MemLevel
from .kernel import PHASES
from .result import TrainingPrediction
from ..output import csv_writer


def phases_json(pred: TrainingPrediction) -> dict:
    return {p.name: {"time_s": p.time_s, "eager_time_s": p.eager_time_s, "flops": p.flops,
                     "bytes": {lv.value: p.bytes.get(lv, 0.0) for lv in MemLevel}, "kernels": p.kernels,
                     "ops": p.ops} for p in pred.phases}


def memory_json(pred: TrainingPrediction) -> dict | None:
    m = pred.memory
    if m is None:
        return None
    return {"peak_bytes": m.peak_bytes, "peak_at": m.peak_at, "components": dict(m.components),
            "totals": dict(m.totals), "capacity_bytes": m.capacity_bytes, "usable_bytes": m.usable_bytes,
            "fits": m.fits, "max_batch": m.max_batch, "step_start_bytes": m.step_start_bytes,
            "after_backward_bytes": m.after_backward_bytes}


def extend_json(doc: dict, pred: TrainingPrediction) -> dict:
    """Add the training keys to predictor/report.py's JSON document (in place; also returned)."""
    doc["mode"] = "train"
    doc["phases"] = phases_json(pred)
    doc["memory"] = memory_json(pred)
    doc["optimizer"] = {"name": pred.optimizer, "impl": pred.optimizer_impl}
    doc["loss"] = pred.loss
    doc["notes"] = list(pred.notes)
    for entry, phase in zip(doc.get("ops", []), pred.op_phases):
        entry["phase"] = phase
    return doc


def _gb(x: float) -> str:
    return f"{x / 1e9:.3f} GB"


def capacity_text(m, profile: MachineProfile) -> str:
    """'the 141 GB of the h200 (usable 139.4 GiB: ...)': the datasheet capacity in decimal GB, as in the GPU's
    name, and the usable bytes the fit is checked against in GiB, as nvidia-smi counts them."""
    gib = 1024 ** 3
    sheet = getattr(profile, "hbm_bytes", 0.0) or m.capacity_bytes
    return (f"the {sheet / 1e9:.0f} GB of the {profile.name} (usable {m.usable_bytes / gib:.1f} GiB: "
            f"{m.capacity_bytes / gib:.1f} GiB addressable less the CUDA context)")


def to_table(pred: TrainingPrediction, profile: MachineProfile, top: int = 15) -> str:
    from ..table import si_text as _si, time_text as _time, totals_lines

    lines = []
    total = pred.total_time_s or 1.0
    lines.append(f"model {pred.model} on {profile.full_name} ({profile.name}), training step, precision "
                 f"{pred.precision}, batch {pred.batch}, optimizer {pred.optimizer} ({pred.optimizer_impl}), "
                 f"loss {pred.loss}, calibration: {pred.calibration}")
    hdr = f"{'phase':<10} {'time':>10} {'share':>6} {'eager':>10} {'kernels':>8} {'FLOPs':>11} {'HBM bytes':>11}"
    lines.append(hdr)
    lines.append("-" * len(hdr))
    for p in pred.phases:
        eager = _time(p.eager_time_s) if p.eager_time_s is not None else "-"
        lines.append(f"{p.name:<10} {_time(p.time_s):>10} {p.time_s / total:>6.1%} {eager:>10} {p.kernels:>8} "
                     f"{_si(p.flops, 'F'):>11} {_si(p.bytes.get(MemLevel.HBM, 0.0), 'B'):>11}")
    from ..table import class_lines

    lines += [""] + class_lines(pred)
    lines.append("")
    hdr = (f"{'op':<48} {'phase':<9} {'type':<18} {'time':>10} {'share':>6} {'bound':>8} {'FLOPs':>11} "
           f"{'HBM bytes':>11}")
    lines.append(hdr)
    lines.append("-" * len(hdr))
    ranked = sorted(zip(pred.ops, pred.op_phases), key=lambda op: op[0].time_s, reverse=True)
    for o, ph in ranked[:top]:
        name = o.cost.name if len(o.cost.name) <= 48 else "..." + o.cost.name[-45:]
        lines.append(f"{name:<48} {ph:<9} {o.cost.op_type[:18]:<18} {_time(o.time_s):>10} {o.time_s / total:>6.1%} "
                     f"{o.bound.value:>8} {_si(o.cost.total_flops, 'F'):>11} "
                     f"{_si(o.cost.bytes.get(MemLevel.HBM, 0), 'B'):>11}")
    if len(ranked) > top:
        rest = sum(o.time_s for o, _ in ranked[top:])
        lines.append(f"{'(' + str(len(ranked) - top) + ' more ops)':<48} {'':<9} {'':<18} {_time(rest):>10} "
                     f"{rest / total:>6.1%}")
    lines.append("-" * len(hdr))
    lines += totals_lines(pred, "step time")
    m = pred.memory
    if m is not None:
        parts = ", ".join(f"{k} {_gb(v)}" for k, v in m.components.items() if v)
        fits = "fits" if m.fits else "does NOT fit"
        lines.append(f"peak memory     {_gb(m.peak_bytes)} at {m.peak_at}; {fits} in {capacity_text(m, profile)}")
        lines.append(f"  at the peak   {parts}")
        lines.append(f"  largest batch {m.max_batch if m.max_batch is not None else '-'}")
    if pred.unsupported:
        lines.append("unsupported ops " + ", ".join(f"{k} x{v}" for k, v in sorted(pred.unsupported.items()))
                     + "  (not costed: time excludes them)")
    else:
        lines.append("unsupported ops none")
    for note in pred.notes:
        lines.append(f"note            {note}")
    return "\n".join(lines) + "\n"


def to_csv(pred: TrainingPrediction) -> str:
    """predictor/report.py's CSV with a ``phase`` column."""
    from ..table import CSV_COLUMNS

    buf = io.StringIO()
    w = csv_writer(buf)  # csv quoting, formula prefixes neutralised, control characters removed
    w.writerow(CSV_COLUMNS + ("phase",))
    for o, ph in zip(pred.ops, pred.op_phases):
        b = o.cost.bytes
        w.writerow([o.cost.name, o.cost.op_type, f"{o.cost.total_flops:.6g}", f"{b.get(MemLevel.L1, 0):.6g}",
                    f"{b.get(MemLevel.L2, 0):.6g}", f"{b.get(MemLevel.HBM, 0):.6g}", o.cost.kernels,
                    f"{o.time_s:.6g}", o.bound.value, f"{o.efficiency:.4g}", ph])
    for k, v in sorted(pred.unsupported.items()):
        w.writerow([f"# unsupported {k}", "", "", "", "", "", v, "", "", "", ""])
    return buf.getvalue()


__all__ = ["PHASES", "extend_json", "to_table", "to_csv"]
