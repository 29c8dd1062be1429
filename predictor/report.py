"""Output formats of a NetworkPrediction: terminal table, JSON (documented, stable), CSV."""
from __future__ import annotations

import io
from operator import attrgetter

from .machine.profile import MachineProfile
from .types import MemLevel, NetworkPrediction, OpPrediction
from .output import csv_writer
from .table import CSV_COLUMNS, totals_lines

JSON_SCHEMA_VERSION = 1


def _flops_by(op: OpPrediction) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for f in op.cost.flops:
        d = out.setdefault(f.precision.value, {})
        d[f.unit.value] = d.get(f.unit.value, 0.0) + f.flops
    return out


def op_json(op: OpPrediction) -> dict:
    return {
        "name": op.cost.name,
        "op_type": op.cost.op_type,
        "flops": op.cost.total_flops,
        "flops_by_precision": _flops_by(op),
        "bytes": {lv.value: op.cost.bytes.get(lv, 0.0) for lv in MemLevel},
        "kernels": op.cost.kernels,
        "time_s": op.time_s,
        "bound": op.bound.value,
        "efficiency": op.efficiency,
        "level_time_s": dict(op.level_time_s),
    }


def to_json_dict(pred: NetworkPrediction, profile: MachineProfile) -> dict:
    doc = {
        "schema_version": JSON_SCHEMA_VERSION,
        "model": pred.model,
        "gpu": profile.to_json(),
        "precision": pred.precision,
        "batch": pred.batch,
        "calibration": pred.calibration,
        "optimize": list(getattr(pred, "optimizations", ())),
        "total_time_s": pred.total_time_s,
        "eager_time_s": pred.eager_time_s,
        "total_flops": pred.total_flops,
        "total_bytes": {lv.value: pred.total_bytes(lv) for lv in MemLevel},
        "kernels": pred.kernels,
        "bound_mix": pred.bound_mix(),
        "ops": [op_json(o) for o in pred.ops],
        "unsupported": dict(pred.unsupported),
    }
    moved = _transfer(pred, profile)
    if moved is not None:  # the calibration of another GPU: what was carried over and how
        doc["transfer"] = moved.to_json()
    from .table import json_extras  # per op: op_class, output_shape, params, intensity; per class: totals

    json_extras(doc, pred)
    if getattr(pred, "notes", ()):
        doc["notes"] = list(pred.notes)
    if getattr(pred, "mode", "infer") == "train":  # a training step: phases, memory (predictor/train/report.py)
        from .train.report import extend_json

        extend_json(doc, pred)
    return doc


def _transfer(pred: NetworkPrediction, profile: MachineProfile):
    """machine.transfer.transfer_of for the prediction's calibration (the module is imported only for a calibration
    named as transferred: ``fitted:GPU (transferred to another GPU)``)."""
    name = str(pred.calibration)
    if "(transferred" not in name:
        return None
    from .machine.transfer import transfer_of

    return transfer_of(name, profile)


def to_json(pred: NetworkPrediction, profile: MachineProfile) -> str:
    from .output import dumps_json

    return dumps_json(to_json_dict(pred, profile))  # standard JSON (non-finite numbers as null), C-encoded


def to_csv(pred: NetworkPrediction) -> str:
    if getattr(pred, "mode", "infer") == "train":
        from .train.report import to_csv as train_csv

        return train_csv(pred)
    buf = io.StringIO()
    w = csv_writer(buf)  # csv quoting, formula prefixes neutralised, control characters removed
    w.writerow(CSV_COLUMNS)
    for o in pred.ops:
        b = o.cost.bytes
        w.writerow([o.cost.name, o.cost.op_type, f"{o.cost.total_flops:.6g}", f"{b.get(MemLevel.L1, 0):.6g}",
                    f"{b.get(MemLevel.L2, 0):.6g}", f"{b.get(MemLevel.HBM, 0):.6g}", o.cost.kernels,
                    f"{o.time_s:.6g}", o.bound.value, f"{o.efficiency:.4g}"])
    for k, v in sorted(pred.unsupported.items()):
        w.writerow([f"# unsupported {k}", "", "", "", "", "", v, "", "", ""])
    return buf.getvalue()


def to_table(pred: NetworkPrediction, profile: MachineProfile, top: int = 15) -> str:
    if getattr(pred, "mode", "infer") == "train":
        from .train.report import to_table as train_table

        return train_table(pred, profile, top)
    lines = []
    lines.append(f"model {pred.model} on {profile.full_name} ({profile.name}), precision {pred.precision}, "
                 f"batch {pred.batch}, calibration: {pred.calibration}"
                 + (f", optimize: {','.join(pred.optimizations)}" if getattr(pred, "optimizations", ()) else ""))
    moved = _transfer(pred, profile)
    if moved is not None:
        lines.append(moved.summary())
    lines += [f"note: {n}" for n in getattr(pred, "notes", ())]
    from .table import LEGEND, OP_HEADER, class_lines, op_lines

    lines += class_lines(pred) + [""]
    ranked = sorted(pred.ops, key=attrgetter("time_s"), reverse=True)
    lines += op_lines(pred, ranked, top)
    lines += ["-" * len(OP_HEADER), LEGEND, ""]
    lines += totals_lines(pred, "total time")
    mix = pred.bound_mix()
    lines.append("bound mix       " + ", ".join(f"{k} {v:.0%}" for k, v in sorted(mix.items(), key=lambda kv: -kv[1])))
    if pred.unsupported:
        lines.append("unsupported ops " + ", ".join(f"{k} x{v}" for k, v in sorted(pred.unsupported.items()))
                     + "  (not costed: time excludes them)")
    else:
        lines.append("unsupported ops none")
    return "\n".join(lines) + "\n"
