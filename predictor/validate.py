"""``predict validate``: predicted vs measured (Nsight Compute samples) per op and per network.

The ncu CSV is parsed by `predictor.measure.ncu.parse` and its kernels are given to ONNX nodes by
`predictor.measure.ncu.kernels.map_kernels` (innermost module NVTX range, op class, call order; node scopes
from the loader), as the lab's `calibration.ncu.report` does. A CSV none of whose kernels can be given to a
node (another network, another precision's kernel names) is an error, not a comparison, and so is one measured at
another precision, batch size or network (`predictor.measure.ncu.match`: FLOPs by numeric format, total FLOPs
and time; ``--allow-mismatch`` compares anyway). Per node, the measured op is the sum of its kernels:
time (``gpu__time_duration``), FLOPs (tensor-pipe and CUDA-core counts), bytes at L1 (l1tex), L2 (lts)
and HBM (dram read + write). The measured bound is the ceiling whose ideal time is largest at the
measured counters. The measured network is every kernel, including those no node owns (layout transforms,
copies: listed as ``unattributed``). Measured times come from ncu's kernel replay (cold caches, no
inter-kernel gaps), so they are not a CUDA-graph replay; predicted times are.
"""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Mapping

from .graph.opclass import op_class
from .machine.profile import MachineProfile
from .plots.data import LEVELS, OpSample, Series, compute_time_of, series_from_prediction
from .types import NetworkPrediction, PredictorError

JSON_SCHEMA_VERSION = 1


@dataclass(frozen=True)
class OpRow:
    name: str
    op_type: str
    predicted: OpSample | None
    measured: OpSample | None


@dataclass(frozen=True)
class Validation:
    prediction: NetworkPrediction
    predicted: Series
    measured: Series
    rows: tuple[OpRow, ...]
    unattributed: Mapping[str, tuple[int, float]]   # kernel category -> (kernels, time_s)
    hidden_predicted: tuple[float, float]           # (kernels, time_s) the calibration adds around nodes
    kernels: int
    attributed: int
    ncu_path: str


def rel_error(pred: float | None, meas: float | None) -> float | None:
    """pred / meas - 1; None when either is missing or the measurement is zero."""
    if pred is None or meas is None or meas == 0 or math.isnan(pred) or math.isnan(meas):
        return None
    return pred / meas - 1.0


def measured_bound(o: OpSample, profile: MachineProfile) -> str:
    """The ceiling whose ideal time at the measured counters is largest (compute, L1, L2, HBM)."""
    from .types import MemLevel

    times = {"compute": o.compute_time_s}
    for lv in MemLevel:
        times[lv.value] = o.bytes.get(lv.value, 0.0) / profile.bandwidth(lv)
    key = max(times, key=times.get)
    return key if times[key] > 0 else "latency"


def measured_sample(name: str, op_type: str, kernels, profile: MachineProfile) -> OpSample:
    """One op (or the network) from its ncu kernel samples."""
    by_unit: dict[tuple[str, str], float] = {}
    nbytes = {lv: 0.0 for lv in LEVELS}
    for k in kernels:
        for key, v in k.flops.items():
            if v:
                by_unit[key] = by_unit.get(key, 0.0) + v
        for lv in LEVELS:
            nbytes[lv] += k.bytes.get(lv) or 0.0
    o = OpSample(name=name, op_type=op_type, flops=float(sum(by_unit.values())),
                 bytes=MappingProxyType(nbytes), time_s=float(sum(k.time_s for k in kernels)),
                 kernels=len(kernels), compute_time_s=compute_time_of(by_unit, profile),
                 flops_by_unit=MappingProxyType(by_unit))
    from dataclasses import replace

    return replace(o, bound=measured_bound(o, profile))


def read_ncu(path: str) -> list:
    """Kernel samples of an ncu CSV; a missing or malformed file is a one-line PredictorError."""
    import os

    from .measure.ncu.parse import NcuParseError, read_samples

    if not os.path.isfile(path):
        raise PredictorError(f"no such ncu CSV: {path}")
    try:
        samples = read_samples(path)
    except NcuParseError as e:
        raise PredictorError(f"malformed ncu CSV {e}") from None
    except (ValueError, KeyError, IndexError, UnicodeDecodeError) as e:
        raise PredictorError(f"malformed ncu CSV {path}: {' '.join(str(e).split())[:200]}") from None
    except OSError as e:
        raise PredictorError(f"cannot read {path}: {e.strerror}") from None
    if not samples:
        raise PredictorError(f"ncu CSV {path} has no kernels")
    return samples


def validate(model: str, profile: MachineProfile, ncu_csv: str, precision: str, batch: int | None,
             calibration=None, shapes=None, allow_mismatch: bool = False) -> Validation:
    """``allow_mismatch``: compare even when the CSV looks measured at another precision, batch size or network
    (predictor/measure/ncu/match.py); by default that is an error."""
    from .measure.ncu.kernels import graph_nodes, map_kernels

    from .graph.loader import load
    from .predict import _batch_of, predict_graph

    samples = read_ncu(ncu_csv)          # before the model: a bad CSV fails fast
    graph = load(model, batch=batch, shapes=shapes)
    pred = predict_graph(graph, profile, precision, calibration, batch=_batch_of(graph, batch))
    predicted = _without_hidden(series_from_prediction(pred, profile, "predicted"), pred)
    gnodes = graph_nodes([n.name for n in graph.nodes], {n.name: n.scope for n in graph.nodes},
                         {n.name: n.op_type for n in graph.nodes})
    mapping = map_kernels(samples, gnodes)
    if mapping.summary.attributed == 0:
        raise PredictorError(f"none of the {len(samples)} kernels of {ncu_csv} can be given to a node of {model} "
                             "(no NVTX module range or kernel class matches): a CSV of another network, or "
                             "measured without the NVTX ranges of calibration/ncu/collect.py")
    pred_by = {o.name: o for o in predicted.ops}
    rows, meas_ops = [], []
    for n in graph.nodes:
        ks = mapping.by_node.get(n.name, ())
        m = measured_sample(n.name, n.op_type, ks, profile) if ks else None
        p = pred_by.get(n.name)
        if m is not None:
            meas_ops.append(m)
        if p is not None or m is not None:
            rows.append(OpRow(n.name, n.op_type, p, m))
    network = measured_sample("network", "network", samples, profile)
    if not allow_mismatch:
        from .measure.ncu.match import mismatch

        why = mismatch(samples, pred, network.time_s, network.flops)
        if why is not None:
            raise PredictorError(f"{ncu_csv} does not look measured from {model} at --precision {pred.precision}, "
                                 f"batch {pred.batch}: {why} (--allow-mismatch compares anyway)")
    unattributed = {cat: (len(ks), float(sum(k.time_s for k in ks))) for cat, ks in mapping.unattributed.items()}
    hidden = (float(sum(len(o.extra_kernels) for o in pred.ops)), float(sum(o.extra_time_s for o in pred.ops)))
    return Validation(pred, predicted, Series("measured", tuple(meas_ops), network), tuple(rows),
                      MappingProxyType(unattributed), hidden, len(samples), mapping.summary.attributed, ncu_csv)


def _without_hidden(series: Series, pred: NetworkPrediction) -> Series:
    """Per-op predicted time without the hidden kernels the calibration adds (layout transforms, casts):
    ncu gives those kernels to no node, so they are compared as a group (``hidden``), not per op."""
    from dataclasses import replace

    extra = {o.cost.name: (o.extra_time_s, len(o.extra_kernels)) for o in pred.ops if o.extra_kernels}
    ops = tuple(replace(o, time_s=o.time_s - extra[o.name][0], kernels=o.kernels - extra[o.name][1])
                if o.name in extra else o for o in series.ops)
    return Series(series.label, ops, series.network)


# ------------------------------------------------------------------------------------------ output
def _metrics(o: OpSample | None) -> dict[str, Any] | None:
    if o is None:
        return None
    return {"time_s": o.time_s, "flops": o.flops, "bytes": {lv: o.bytes.get(lv, 0.0) for lv in LEVELS},
            "kernels": o.kernels, "bound": o.bound}


def _errors(p: OpSample | None, m: OpSample | None) -> dict[str, float | None]:
    if p is None or m is None:
        return {k: None for k in ("time_s", "flops", *LEVELS)}
    return {"time_s": rel_error(p.time_s, m.time_s), "flops": rel_error(p.flops, m.flops),
            **{lv: rel_error(p.bytes.get(lv), m.bytes.get(lv)) for lv in LEVELS}}


def class_times(v: Validation) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for r in v.rows:
        e = out.setdefault(op_class(r.op_type), {"predicted_time_s": 0.0, "measured_time_s": 0.0})
        e["predicted_time_s"] += r.predicted.time_s if r.predicted else 0.0
        e["measured_time_s"] += r.measured.time_s if r.measured else 0.0
    return dict(sorted(out.items(), key=lambda kv: -kv[1]["measured_time_s"]))


def summary(v: Validation) -> dict[str, Any]:
    errs = [abs(e) for r in v.rows if r.predicted and r.measured
            if (e := rel_error(r.predicted.time_s, r.measured.time_s)) is not None]
    same = [r for r in v.rows if r.predicted and r.measured]
    return {"ops_compared": len(same),
            "ops_predicted_only": sum(1 for r in v.rows if r.measured is None),
            "ops_measured_only": sum(1 for r in v.rows if r.predicted is None),
            "op_time_abs_error_median": statistics.median(errs) if errs else None,
            "op_bound_agreement": (sum(1 for r in same if r.predicted.bound == r.measured.bound) / len(same))
            if same else None}


def to_json_dict(v: Validation, profile: MachineProfile) -> dict[str, Any]:
    p = v.prediction
    return {
        "schema_version": JSON_SCHEMA_VERSION,
        "model": p.model, "gpu": profile.name, "precision": p.precision, "batch": p.batch,
        "calibration": p.calibration, "ncu": v.ncu_path,
        "mapping": {"kernels": v.kernels, "attributed": v.attributed},
        "network": {"predicted": _metrics(v.predicted.network), "measured": _metrics(v.measured.network),
                    "error": _errors(v.predicted.network, v.measured.network)},
        "summary": summary(v),
        "classes": class_times(v),
        "unattributed": {k: {"kernels": n, "time_s": t} for k, (n, t) in sorted(v.unattributed.items())},
        "hidden": {"predicted": {"kernels": v.hidden_predicted[0], "time_s": v.hidden_predicted[1]},
                   "measured": {"kernels": sum(n for n, _ in v.unattributed.values()),
                                "time_s": sum(t for _, t in v.unattributed.values())}},
        "ops": [{"name": r.name, "op_type": r.op_type, "op_class": op_class(r.op_type),
                 "predicted": _metrics(r.predicted), "measured": _metrics(r.measured),
                 "error": _errors(r.predicted, r.measured)} for r in v.rows],
    }


def to_json(v: Validation, profile: MachineProfile) -> str:
    from .output import dumps_json

    return dumps_json(to_json_dict(v, profile))  # standard JSON (non-finite numbers as null), C-encoded


def _pct(e: float | None) -> str:
    return "-" if e is None else f"{e:+.0%}"


def _t(t: float | None) -> str:
    if t is None:
        return "-"
    return f"{t * 1e3:.3f} ms" if t >= 1e-3 else f"{t * 1e6:.1f} us"


def _si(x: float | None, unit: str = "") -> str:
    if x is None:
        return "-"
    for scale, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(x) >= scale:
            return f"{x / scale:.3g}{prefix}{unit}"
    return f"{x:.3g}{unit}"


def to_table(v: Validation, profile: MachineProfile, top: int = 15) -> str:
    p = v.prediction
    pn, mn = v.predicted.network, v.measured.network
    lines = [f"validate {p.model} on {profile.full_name} ({profile.name}), precision {p.precision}, batch {p.batch}, "
             f"calibration: {p.calibration}",
             f"measured: {v.ncu_path} ({v.kernels} kernels, {v.attributed} attributed to graph nodes)", "",
             f"{'network':<10} {'predicted':>12} {'measured':>12} {'error':>7}"]
    for label, a, b in (("time", pn.time_s, mn.time_s), ("FLOPs", pn.flops, mn.flops),
                        *((f"{lv} bytes", pn.bytes.get(lv), mn.bytes.get(lv)) for lv in LEVELS),
                        ("kernels", float(pn.kernels), float(mn.kernels))):
        fa, fb = (_t(a), _t(b)) if label == "time" else (_si(a), _si(b))
        lines.append(f"{label:<10} {fa:>12} {fb:>12} {_pct(rel_error(a, b)):>7}")
    hdr = (f"{'op (top by measured time)':<40} {'time pred':>10} {'meas':>10} {'err':>6} {'FLOPs err':>9} "
           f"{'L1 err':>7} {'L2 err':>7} {'HBM err':>7} {'bound pred/meas':>16}")
    lines += ["", hdr, "-" * len(hdr)]
    ranked = sorted(v.rows, key=lambda r: -max(r.measured.time_s if r.measured else 0.0,
                                               r.predicted.time_s if r.predicted else 0.0))
    for r in ranked[:top]:
        e = _errors(r.predicted, r.measured)
        name = r.name if len(r.name) <= 40 else "..." + r.name[-37:]
        bound = f"{r.predicted.bound if r.predicted else '-'}/{r.measured.bound if r.measured else '-'}"
        lines.append(f"{name:<40} {_t(r.predicted.time_s if r.predicted else None):>10} "
                     f"{_t(r.measured.time_s if r.measured else None):>10} {_pct(e['time_s']):>6} "
                     f"{_pct(e['flops']):>9} {_pct(e['L1']):>7} {_pct(e['L2']):>7} {_pct(e['HBM']):>7} {bound:>16}")
    if len(ranked) > top:
        lines.append(f"({len(ranked) - top} more ops; --format json lists all)")
    lines += ["", f"{'op class':<14} {'predicted':>12} {'measured':>12} {'error':>7}"]
    for cls, e in class_times(v).items():
        lines.append(f"{cls:<14} {_t(e['predicted_time_s']):>12} {_t(e['measured_time_s']):>12} "
                     f"{_pct(rel_error(e['predicted_time_s'], e['measured_time_s'])):>7}")
    hk, ht = v.hidden_predicted
    mt = sum(t for _, t in v.unattributed.values())
    lines.append(f"{'hidden':<14} {_t(ht):>12} {_t(mt):>12} {_pct(rel_error(ht, mt)):>7}  "
                 f"(kernels no node owns: predicted {hk:.0f}, measured {sum(n for n, _ in v.unattributed.values())})")
    for cat, (n, t) in sorted(v.unattributed.items(), key=lambda kv: -kv[1][1]):
        lines.append(f"{'  ' + cat:<14} {'':>12} {_t(t):>12} {'':>7}  ({n} kernels)")
    s = summary(v)
    med = s["op_time_abs_error_median"]
    agree = s["op_bound_agreement"]
    lines += ["", f"ops compared {s['ops_compared']} (predicted only {s['ops_predicted_only']}, measured only "
              f"{s['ops_measured_only']}); median |time error| {'-' if med is None else f'{med:.0%}'}; "
              f"bound agrees on {'-' if agree is None else f'{agree:.0%}'} of ops",
              "measured times are ncu kernel replays (cold L2, no launch gaps); predicted times a CUDA-graph replay"]
    return "\n".join(lines) + "\n"


from ._callable import make_callable  # noqa: E402  (predictor.validate(...) is the API: predictor/api.py)

make_callable(__name__)
