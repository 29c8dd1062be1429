"""``predict compare``: two predictions side by side (two models, or one model under two settings).

Ops are matched by node name (the same export under another precision, batch or GPU matches every op;
two different models match where names agree). Reported: totals, per-op time before and after, time
saved per op class, and the ops whose bound changed.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from .graph.opclass import op_class
from .machine.profile import MachineProfile
from .types import MemLevel, NetworkPrediction, OpPrediction


@dataclass(frozen=True)
class Side:
    label: str
    prediction: NetworkPrediction
    profile: MachineProfile


@dataclass(frozen=True)
class Match:
    name: str
    op_type: str
    a: OpPrediction | None
    b: OpPrediction | None

    @property
    def saved_s(self) -> float:
        return (self.a.time_s if self.a else 0.0) - (self.b.time_s if self.b else 0.0)


@dataclass(frozen=True)
class Comparison:
    a: Side
    b: Side
    matches: tuple[Match, ...]          # ops with a kernel on either side; a's order, then b-only ops

    def by_class(self) -> dict[str, dict[str, float]]:
        """Time per op class before and after, and the time saved (before - after)."""
        out: dict[str, dict[str, float]] = {}
        for m in self.matches:
            e = out.setdefault(op_class(m.op_type), {"a_time_s": 0.0, "b_time_s": 0.0, "saved_s": 0.0})
            e["a_time_s"] += m.a.time_s if m.a else 0.0
            e["b_time_s"] += m.b.time_s if m.b else 0.0
            e["saved_s"] += m.saved_s
        return dict(sorted(out.items(), key=lambda kv: -abs(kv[1]["saved_s"])))

    def bound_changes(self) -> dict[str, int]:
        """'from -> to': number of matched ops whose bound changed that way."""
        out: dict[str, int] = {}
        for m in self.matches:
            if m.a and m.b and m.a.bound != m.b.bound:
                key = f"{m.a.bound.value} -> {m.b.bound.value}"
                out[key] = out.get(key, 0) + 1
        return dict(sorted(out.items(), key=lambda kv: -kv[1]))


def compare(a: Side, b: Side) -> Comparison:
    ops_a = {o.cost.name: o for o in a.prediction.ops if o.time_s > 0}
    ops_b = {o.cost.name: o for o in b.prediction.ops if o.time_s > 0}
    matches = [Match(n, o.cost.op_type, o, ops_b.get(n)) for n, o in ops_a.items()]
    matches += [Match(n, o.cost.op_type, None, o) for n, o in ops_b.items() if n not in ops_a]
    return Comparison(a, b, tuple(matches))


def _totals(p: NetworkPrediction) -> dict[str, Any]:
    return {"time_s": p.total_time_s, "eager_time_s": p.eager_time_s, "flops": p.total_flops,
            "bytes": {lv.value: p.total_bytes(lv) for lv in MemLevel}, "kernels": p.kernels,
            "bound_mix": p.bound_mix()}


def _side(s: Side) -> dict[str, Any]:
    p = s.prediction
    return {"label": s.label, "model": p.model, "gpu": s.profile.name, "precision": p.precision, "batch": p.batch,
            "calibration": p.calibration, "optimize": list(getattr(p, "optimizations", ())), "totals": _totals(p)}


def to_json_dict(c: Comparison) -> dict[str, Any]:
    ta, tb = c.a.prediction.total_time_s, c.b.prediction.total_time_s
    return {
        "schema_version": 1,
        "a": _side(c.a), "b": _side(c.b),
        "speedup": ta / tb if tb > 0 else None,
        "saved_s": ta - tb,
        "matched_ops": sum(1 for m in c.matches if m.a and m.b),
        "only_a": sum(1 for m in c.matches if m.b is None),
        "only_b": sum(1 for m in c.matches if m.a is None),
        "classes": c.by_class(),
        "bound_changes": c.bound_changes(),
        "ops": [{"name": m.name, "op_type": m.op_type, "op_class": op_class(m.op_type),
                 "a": None if m.a is None else {"time_s": m.a.time_s, "bound": m.a.bound.value},
                 "b": None if m.b is None else {"time_s": m.b.time_s, "bound": m.b.bound.value},
                 "saved_s": m.saved_s} for m in c.matches],
    }


def to_json(c: Comparison) -> str:
    from .output import dumps_json

    return dumps_json(to_json_dict(c))  # standard JSON (non-finite numbers as null), C-encoded


def _t(t: float | None) -> str:
    if t is None:
        return "-"
    if abs(t) >= 1e-3:
        return f"{t * 1e3:.3f} ms"
    return f"{t * 1e6:.1f} us"


def _si(x: float) -> str:
    for scale, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(x) >= scale:
            return f"{x / scale:.3g}{prefix}"
    return f"{x:.3g}"


def to_table(c: Comparison, top: int = 15) -> str:
    pa, pb = c.a.prediction, c.b.prediction
    d = to_json_dict(c)
    lines = [f"A: {c.a.label}  ({pa.model}, {c.a.profile.name}, {pa.precision}, batch {pa.batch})",
             f"B: {c.b.label}  ({pb.model}, {c.b.profile.name}, {pb.precision}, batch {pb.batch})", "",
             f"{'':<12} {'A':>12} {'B':>12} {'B / A':>7}"]
    rows: list[tuple[str, float, float, bool]] = [("time", pa.total_time_s, pb.total_time_s, True)]
    if pa.eager_time_s is not None and pb.eager_time_s is not None:
        rows.append(("eager time", pa.eager_time_s, pb.eager_time_s, True))
    rows += [("FLOPs", pa.total_flops, pb.total_flops, False)]
    rows += [(f"{lv.value} bytes", pa.total_bytes(lv), pb.total_bytes(lv), False) for lv in MemLevel]
    rows += [("kernels", float(pa.kernels), float(pb.kernels), False)]
    for label, a, b, is_t in rows:
        r = f"{b / a:.2f}" if a else "-"
        lines.append(f"{label:<12} {(_t(a) if is_t else _si(a)):>12} {(_t(b) if is_t else _si(b)):>12} {r:>7}")
    sp = d["speedup"]
    lines.append(f"speedup A/B {sp:.2f}x, saved {_t(d['saved_s'])}; ops matched {d['matched_ops']}, "
                 f"only in A {d['only_a']}, only in B {d['only_b']}" if sp else "speedup -")
    lines += ["", f"{'op class':<14} {'A':>11} {'B':>11} {'saved':>11}"]
    for cls, e in c.by_class().items():
        lines.append(f"{cls:<14} {_t(e['a_time_s']):>11} {_t(e['b_time_s']):>11} {_t(e['saved_s']):>11}")
    hdr = f"{'op (top by time saved)':<44} {'A':>10} {'B':>10} {'saved':>10} {'bound A -> B':>18}"
    lines += ["", hdr, "-" * len(hdr)]
    ranked = sorted(c.matches, key=lambda m: -abs(m.saved_s))
    for m in ranked[:top]:
        name = m.name if len(m.name) <= 44 else "..." + m.name[-41:]
        bound = f"{m.a.bound.value if m.a else '-'} -> {m.b.bound.value if m.b else '-'}"
        lines.append(f"{name:<44} {_t(m.a.time_s if m.a else None):>10} {_t(m.b.time_s if m.b else None):>10} "
                     f"{_t(m.saved_s):>10} {bound:>18}")
    changes = c.bound_changes()
    lines += ["", "bound changes   " + (", ".join(f"{k} x{v}" for k, v in changes.items()) or "none")]
    return "\n".join(lines) + "\n"


def labels(a_desc: Mapping[str, Any], b_desc: Mapping[str, Any]) -> tuple[str, str]:
    """Short labels that name what differs: 'fp32' vs 'fp16', 'batch 1' vs 'batch 32', model names..."""
    keys = [k for k in ("model", "gpu", "precision", "batch", "optimize") if a_desc.get(k) != b_desc.get(k)] \
        or ["model"]

    def one(d):
        return " ".join(f"batch {d[k]}" if k == "batch" else f"optimize {d[k] or 'none'}" if k == "optimize"
                        else str(d[k]) for k in keys)

    la, lb = one(a_desc), one(b_desc)
    return (la, lb) if la != lb else (f"A: {la}", f"B: {lb}")


from ._callable import make_callable  # noqa: E402  (predictor.compare(...) is the API: predictor/api.py)

make_callable(__name__)
