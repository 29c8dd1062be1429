"""Sweeps: one model predicted at every (GPU, precision, batch) setting of three lists.

``run_sweep`` loads the model once per batch size (loading binds the batch), each GPU's profile and
calibration once, and predicts every setting with ``predictor.predict.predict_graph`` on the loaded
graph (``predictor.train.predict_training_graph`` when the caller passes ``mode="train"``); extra keyword
arguments go to it unchanged. Within one batch, the node formulas
and runtime patterns of a precision run once and are shared by the GPUs (``graph.cost.reuse_work``); the
traffic model (each GPU's L2 size and architecture) and the timing run per setting. A setting that
cannot be predicted (a precision the GPU lacks: fp8 on a V100) becomes a row with ``error`` set instead
of failing the sweep; ``require_success`` raises when no row succeeded. Bad input that no setting can
get past (a missing or corrupt model, an unknown precision) raises ``PredictorError`` as a single
prediction does.

Rows are ordered GPU, then precision, then batch, each in the order given. ``speedup`` is the time of
the baseline, the first row that succeeded, over the row's time (per forward, as ``predict compare``'s
A/B speedup); ``throughput_per_s`` is batch / time (samples per second). Everything after ``run_sweep``
(rows, speedups, table, JSON, CSV) is pure.
"""
from __future__ import annotations

import io
import os
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping, Sequence

from .types import Bound, NetworkPrediction, PredictorError, frozen_map
from .output import csv_writer

JSON_SCHEMA_VERSION = 1
BOUNDS = tuple(b.value for b in Bound)  # compute, L1, L2, HBM, latency: the bound-mix order
MIX_HEADER = "C/L1/L2/HBM/lat %"


@dataclass(frozen=True)
class SweepRow:
    """One setting's prediction, or why it has none (``error``)."""

    gpu: str                       # the profile's name
    precision: str                 # the precision policy's name
    batch: int | None              # the batch bound (the graph's own leading dim when none was asked)
    total_time_s: float | None = None
    eager_time_s: float | None = None
    throughput_per_s: float | None = None
    speedup: float | None = None   # baseline time / this time
    # baseline time per sample / this time per sample (throughput / the baseline's); = speedup at equal batches
    speedup_per_sample: float | None = None
    bound_mix: Mapping[str, float] = field(default_factory=frozen_map)  # every Bound value -> share of time
    kernels: int | None = None
    calibration: str | None = None
    transferred_from: str | None = None   # GPU whose fit the calibration transfers to this one
    unsupported: Mapping[str, int] = field(default_factory=frozen_map)
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def label(self) -> str:
        return f"{self.gpu} {self.precision} batch {self.batch if self.batch is not None else '-'}"

    @property
    def note(self) -> str:
        if self.error is not None:
            return f"n/a: {self.error}"
        if self.transferred_from:
            return f"calibration transferred from {self.transferred_from}"
        return ""


@dataclass(frozen=True)
class Sweep:
    model: str
    gpus: tuple[str, ...]
    precisions: tuple[str, ...]
    batches: tuple[int | None, ...]   # as asked (None: the graph's own batch)
    rows: tuple[SweepRow, ...]
    baseline: int | None              # index of the row speedups are relative to; None when all failed

    @property
    def succeeded(self) -> int:
        return sum(1 for r in self.rows if r.ok)


def unique(items) -> tuple:
    """Items in first-seen order without repeats."""
    return tuple(dict.fromkeys(items))


def row_from_prediction(pred: NetworkPrediction, transferred_from: str | None = None) -> SweepRow:
    """A successful row (speedup left to ``with_speedups``)."""
    t = pred.total_time_s
    mix = pred.bound_mix()
    return SweepRow(
        gpu=pred.gpu, precision=pred.precision, batch=pred.batch, total_time_s=t, eager_time_s=pred.eager_time_s,
        throughput_per_s=pred.batch / t if pred.batch is not None and t > 0 else None,
        bound_mix=frozen_map({b: mix.get(b, 0.0) for b in BOUNDS}), kernels=pred.kernels,
        calibration=pred.calibration, transferred_from=transferred_from, unsupported=frozen_map(pred.unsupported))


def failed_row(gpu: str, precision: str, batch: int | None, error: str, calibration: str | None = None) -> SweepRow:
    return SweepRow(gpu=gpu, precision=precision, batch=batch, calibration=calibration,
                    error=" ".join(str(error).split()))


def with_speedups(rows: Sequence[SweepRow]) -> tuple[tuple[SweepRow, ...], int | None]:
    """Rows with ``speedup`` against the first successful row (exactly 1 there), and that row's index."""
    base = next((i for i, r in enumerate(rows) if r.ok and r.total_time_s), None)
    if base is None:
        return tuple(rows), None
    t0, b0 = rows[base].total_time_s, rows[base].batch

    def per_sample(r: SweepRow) -> float:
        return (t0 / b0) / (r.total_time_s / r.batch) if b0 and r.batch else t0 / r.total_time_s

    return tuple(replace(r, speedup=t0 / r.total_time_s, speedup_per_sample=per_sample(r))
                 if r.ok and r.total_time_s else r for r in rows), base


def assemble(model: str, gpus: Sequence[str], precisions: Sequence[str], batches: Sequence[int | None],
             cells: Mapping[tuple[int, int, int], SweepRow]) -> Sweep:
    """The sweep of ``cells`` keyed (GPU index, precision index, batch index), in GPU/precision/batch order."""
    ordered = [cells[(g, p, b)] for g in range(len(gpus)) for p in range(len(precisions)) for b in range(len(batches))]
    rows, base = with_speedups(ordered)
    return Sweep(model, tuple(gpus), tuple(precisions), tuple(batches), rows, base)


def run_sweep(model_path: str, profiles: Sequence, precisions: Sequence[str], batches: Sequence[int | None] = (None,),
              calibration_for: Callable[[Any], Any] | None = None, shapes: Mapping[str, tuple[int, ...]] | None = None,
              strict: bool = False, on_setting: Callable[[int], Any] | None = None, **predict_kwargs) -> Sweep:
    """Predict ``model_path`` at every (profile, precision, batch).

    ``on_setting(1)`` is called after each setting (a progress bar's update).

    ``calibration_for(profile)`` gives each GPU's calibration (called once per GPU; default: the pure
    roofline). ``predict_kwargs`` are passed to ``predict_graph`` as they are, or with ``mode="train"`` (the caller's
    choice) the rest of them to ``predict_training_graph`` (predictor/train: optimizer, impl, loss, optimize).
    """
    from .graph.cost import reuse_work
    from .graph.loader import load
    from .precision import policy
    from .predict import _batch_of, predict_graph

    if not profiles or not precisions or not batches:
        raise PredictorError("a sweep needs at least one GPU, precision and batch size")
    mode = predict_kwargs.pop("mode", None) or "infer"
    if mode not in ("infer", "train") or (mode == "infer" and set(predict_kwargs) - {"optimize"}):
        raise PredictorError(f"sweep: mode must be 'infer' or 'train' (training options need 'train'), not {mode!r}")
    if mode == "train":
        from .train import predict_training_graph as predict_one
    else:
        predict_one = predict_graph
    precs = unique(policy(p).name for p in precisions)  # an unknown precision fails the whole sweep, up front
    profs = tuple({p.name: p for p in profiles}.values())
    batches = unique(batches)
    if calibration_for is None:
        from .calibrate import Uncalibrated

        calibration_for = lambda _profile: Uncalibrated()  # noqa: E731
    cals = [calibration_for(p) for p in profs]             # once per GPU, shared by its rows
    cells: dict[tuple[int, int, int], SweepRow] = {}
    for bi, batch in enumerate(batches):
        graph = load(model_path, batch=batch, shapes=shapes)   # once per batch, shared by every GPU and precision
        bound = _batch_of(graph, batch)
        with reuse_work():  # node formulas and runtime patterns once per precision, shared by the GPUs
            for gi, (profile, cal) in enumerate(zip(profs, cals)):
                transferred = getattr(cal, "transferred_from", None)
                for pi, prec in enumerate(precs):
                    try:
                        pred = predict_one(graph, profile, prec, cal, strict, batch=bound, **predict_kwargs)
                    except PredictorError as e:
                        cells[(gi, pi, bi)] = failed_row(profile.name, prec, bound, str(e), getattr(cal, "name", None))
                    else:
                        cells[(gi, pi, bi)] = row_from_prediction(pred, transferred)
                    if on_setting is not None:
                        on_setting(1)
        del graph
    return assemble(os.path.basename(model_path), [p.name for p in profs], precs, batches, cells)


def require_success(sweep: Sweep) -> Sweep:
    """The sweep, or a one-line PredictorError when no setting could be predicted."""
    if sweep.succeeded:
        return sweep
    errors = unique(r.error for r in sweep.rows)
    if len(errors) == 1:
        raise PredictorError(errors[0])
    shown = " | ".join(errors[:4]) + (f" | ({len(errors) - 4} more)" if len(errors) > 4 else "")
    raise PredictorError(f"no setting of the sweep can be predicted: {shown}")


# ------------------------------------------------------------------------------------------ outputs
def row_json(r: SweepRow) -> dict[str, Any]:
    return {"gpu": r.gpu, "precision": r.precision, "batch": r.batch, "total_time_s": r.total_time_s,
            "eager_time_s": r.eager_time_s, "throughput_per_s": r.throughput_per_s, "speedup": r.speedup,
            "bound_mix": dict(r.bound_mix) if r.ok else None, "kernels": r.kernels, "calibration": r.calibration,
            "unsupported": dict(r.unsupported), "error": r.error, "speedup_per_sample": r.speedup_per_sample}


def to_json_dict(s: Sweep) -> dict[str, Any]:
    base = s.rows[s.baseline] if s.baseline is not None else None
    return {
        "schema_version": JSON_SCHEMA_VERSION,
        "model": s.model,
        "axes": {"gpu": list(s.gpus), "precision": list(s.precisions), "batch": list(s.batches)},
        "baseline": None if base is None else {"gpu": base.gpu, "precision": base.precision, "batch": base.batch},
        "sweep": [row_json(r) for r in s.rows],
    }


def to_json(s: Sweep) -> str:
    from .output import dumps_json

    return dumps_json(to_json_dict(s))  # standard JSON (non-finite numbers as null), C-encoded


CSV_COLUMNS = ("gpu", "precision", "batch", "total_time_s", "eager_time_s", "throughput_per_s", "speedup") + \
    tuple(f"bound_{b}" for b in BOUNDS) + ("kernels", "calibration", "unsupported", "error", "speedup_per_sample")


def _g(x: float | None) -> str:
    return "" if x is None else f"{x:.6g}"


def to_csv(s: Sweep) -> str:
    buf = io.StringIO()
    w = csv_writer(buf)  # csv quoting, formula prefixes neutralised, control characters removed
    w.writerow(CSV_COLUMNS)
    for r in s.rows:
        w.writerow([r.gpu, r.precision, "" if r.batch is None else r.batch, _g(r.total_time_s), _g(r.eager_time_s),
                    _g(r.throughput_per_s), _g(r.speedup)]
                   + [f"{r.bound_mix[b]:.4g}" if r.ok else "" for b in BOUNDS]
                   + ["" if r.kernels is None else r.kernels, r.calibration or "",
                      ";".join(f"{k} x{v}" for k, v in sorted(r.unsupported.items())), r.error or "",
                      _g(r.speedup_per_sample)])
    return buf.getvalue()


def _time(t: float | None) -> str:
    if t is None:
        return "-"
    if t >= 1:
        return f"{t:.3f} s"
    if t >= 1e-3:
        return f"{t * 1e3:.3f} ms"
    return f"{t * 1e6:.2f} us"


def _rate(x: float | None) -> str:
    if x is None:
        return "-"
    for scale, prefix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if x >= scale:
            return f"{x / scale:.3g}{prefix}/s"
    return f"{x:.3g}/s"


def mix_text(mix: Mapping[str, float]) -> str:
    """'62/0/5/30/3': percent of time bound by compute, L1, L2, HBM, latency."""
    return "/".join(f"{100 * mix.get(b, 0.0):.0f}" for b in BOUNDS)


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def to_table(s: Sweep) -> str:
    n = len(s.rows)
    lines = [f"sweep of {s.model}: {_count(len(s.gpus), 'GPU')} x {_count(len(s.precisions), 'precision')} x "
             f"{_count(len(s.batches), 'batch size')} = {n} settings, {s.succeeded} predicted"
             + (f"; baseline {s.rows[s.baseline].label}" if s.baseline is not None else "")]
    footnotes: dict[str, int] = {}   # an n/a reason -> its footnote number (each reason printed once)
    cols = ("gpu", "precision", "batch", "time", "eager", "throughput", "speedup", MIX_HEADER, "kernels", "note")
    cells = []
    for r in s.rows:
        cells.append((r.gpu, r.precision, "-" if r.batch is None else str(r.batch), _time(r.total_time_s),
                      _time(r.eager_time_s), _rate(r.throughput_per_s),
                      "-" if r.speedup_per_sample is None else f"{r.speedup_per_sample:.2f}x",
                      mix_text(r.bound_mix) if r.ok else "-", "-" if r.kernels is None else str(r.kernels),
                      f"n/a [{footnotes.setdefault(r.error, len(footnotes) + 1)}]" if r.error else r.note))
    widths = [max([len(c)] + [len(row[i]) for row in cells]) for i, c in enumerate(cols)]
    left = {0, 1, 7, 9}

    def fmt(vals):
        return "  ".join(v.ljust(w) if i in left else v.rjust(w) for i, (v, w) in enumerate(zip(vals, widths))).rstrip()

    hdr = fmt(cols)
    lines += [hdr, "-" * len(hdr)] + [fmt(c) for c in cells] + ["-" * len(hdr)]
    lines += [f"[{i}] n/a: {reason}" for reason, i in footnotes.items()]
    if s.baseline is not None:
        lines.append(f"speedup: throughput of the setting / throughput of the baseline {s.rows[s.baseline].label} "
                     f"(time per sample of the baseline / time per sample of the setting; per forward at equal "
                     f"batches); throughput: batch / time")
    lines.append(f"bound mix ({MIX_HEADER}): share of time bound by compute, L1, L2, HBM, latency")
    uns: dict[str, int] = {}
    for r in s.rows:
        for k, v in r.unsupported.items():
            uns[k] = max(uns.get(k, 0), v)
    if uns:
        lines.append("unsupported ops " + ", ".join(f"{k} x{v}" for k, v in sorted(uns.items()))
                     + "  (not costed: times exclude them)")
    else:
        lines.append("unsupported ops none")
    return "\n".join(lines) + "\n"


from ._callable import make_callable  # noqa: E402  (predictor.sweep(...) is the API: predictor/api.py)

make_callable(__name__)
