"""The Python API: what ``predict`` does on the command line, as functions returning frozen result objects.

    import predictor
    r = predictor.predict("examples/resnet50.onnx", gpu="h200", precision="fp16", batch=8)
    r.total_time_s, r.to_table(), r.to_dict(), r.to_json(), r.to_pandas()

Functions (each loads the GPU profile and its bundled calibration as ``predict`` does):

* ``predict(model, gpu, precision, batch, ...)`` -> ``Prediction`` (one forward pass)
* ``train_step(model, gpu, precision, batch, optimizer, fused, loss, ...)`` -> ``Prediction`` (mode "train")
* ``compare(a, b)`` -> ``Comparison`` (two ``Prediction``s side by side, as ``predict compare``)
* ``sweep(model, gpus, precisions, batches, ...)`` -> ``SweepResult`` (as ``predict --gpu a,b --batch 1,8``)
* ``validate(model, gpu, ncu, precision, batch)`` -> ``ValidationResult`` (as ``predict validate``)

Every result has ``to_dict()`` (the CLI's ``--format json`` document), ``to_json()``, ``to_table()`` (the
CLI's table, character for character), ``to_pandas()`` (a DataFrame, one row per op or setting; pandas is
an optional extra: ``pip install gpu-roofline-predictor[pandas]``) and ``to_html(path)`` (the ``--report``
page). ``calibration``: "bundled" (default: the fitted calibration of the GPU, transferred to other GPUs),
"uncalibrated" (pure roofline), a path to a fitted calibration JSON, or a calibration object.
Errors are ``predictor.types.PredictorError`` with the CLI's one-line message.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from .machine.profile import MachineProfile
from .types import MemLevel, NetworkPrediction, PredictorError

__all__ = ["Prediction", "Comparison", "SweepResult", "ValidationResult", "predict", "train_step", "compare",
           "sweep", "validate", "load_gpu"]


def _pandas():
    try:
        import pandas
    except ImportError:
        raise ImportError("to_pandas() needs pandas, an optional extra: pip install pandas "
                          "(or pip install 'gpu-roofline-predictor[pandas]')") from None
    return pandas


def load_gpu(gpu: str | MachineProfile) -> MachineProfile:
    """A bundled GPU name (v100, a100, h100, h200, ...), a profile JSON path, or a profile (returned as is)."""
    if isinstance(gpu, MachineProfile):
        return gpu
    from .machine.profile import load_profile

    return load_profile(gpu)


def _calibration(calibration: Any, profile: MachineProfile):
    from .calibrate import calibration_named

    if calibration is None or calibration == "bundled":
        return calibration_named(profile)
    if calibration == "uncalibrated":
        return calibration_named(profile, uncalibrated=True)
    if isinstance(calibration, str):
        return calibration_named(profile, calibration)
    if not hasattr(calibration, "predict_op"):
        raise PredictorError(f"calibration must be 'bundled', 'uncalibrated', a JSON path or a calibration object, "
                             f"not {calibration!r}")
    return calibration


class _Result:
    """Shared output methods: subclasses define to_dict(), to_table() and _frame_rows()."""

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent) + "\n"

    def to_pandas(self):
        """A pandas DataFrame of the rows (ops, or settings of a sweep)."""
        return _pandas().DataFrame(self._frame_rows())

    def to_html(self, path: str | None = None) -> str:
        """The self-contained HTML report (``--report``); written to ``path`` when given. Returns the HTML."""
        from . import html_report

        page = html_report.page_for(self)
        if path:
            html_report.write(page, path)
        return page

    def __str__(self) -> str:
        return self.to_table()


@dataclass(frozen=True)
class Prediction(_Result):
    """One prediction (a forward pass, or a training step when ``mode == "train"``) on one GPU."""

    html_page = "prediction"  # its page in predictor/html_report.py

    raw: NetworkPrediction
    profile: MachineProfile

    # the headline numbers
    @property
    def model(self) -> str:
        return self.raw.model

    @property
    def gpu(self) -> str:
        return self.profile.name

    @property
    def precision(self) -> str:
        return self.raw.precision

    @property
    def batch(self) -> int | None:
        return self.raw.batch

    @property
    def mode(self) -> str:
        return getattr(self.raw, "mode", "infer")

    @property
    def total_time_s(self) -> float:
        return self.raw.total_time_s

    @property
    def eager_time_s(self) -> float | None:
        return self.raw.eager_time_s

    @property
    def total_flops(self) -> float:
        return self.raw.total_flops

    @property
    def kernels(self) -> int:
        return self.raw.kernels

    @property
    def ops(self):
        return self.raw.ops

    def bound_mix(self) -> dict[str, float]:
        return self.raw.bound_mix()

    def by_class(self):
        """Per op class: time, share, ops, kernels, FLOPs, HBM bytes (``predictor.table.ClassRow``)."""
        from .table import class_rows

        return class_rows(self.raw)

    def to_dict(self) -> dict[str, Any]:
        from .report import to_json_dict

        return to_json_dict(self.raw, self.profile)

    def to_table(self, top: int = 15) -> str:
        from .report import to_table

        return to_table(self.raw, self.profile, top=top)

    def to_csv(self) -> str:
        from .report import to_csv

        return to_csv(self.raw)

    def _frame_rows(self) -> list[dict[str, Any]]:
        from .graph.opclass import op_class
        from .table import intensity

        phases = getattr(self.raw, "op_phases", ()) or ()
        rows = []
        for i, o in enumerate(self.raw.ops):
            info = self.raw.op_info.get(o.cost.name)
            r = {"name": o.cost.name, "op_type": o.cost.op_type, "op_class": op_class(o.cost.op_type),
                 "output_shape": info.output_shape if info else None, "params": info.params if info else None,
                 "time_s": o.time_s, "flops": o.cost.total_flops, "kernels": o.cost.kernels,
                 **{f"bytes_{lv.value}": o.cost.bytes.get(lv, 0.0) for lv in MemLevel},
                 **{f"intensity_{lv.value}": intensity(o, lv) for lv in MemLevel},
                 "efficiency": o.efficiency, "bound": o.bound.value}
            if phases:
                r["phase"] = phases[i]
            rows.append(r)
        return rows


def predict(model: str, gpu: str | MachineProfile = "h200", precision: str = "fp32", batch: int | None = None,
            shapes: Mapping[str, Sequence[int]] | None = None, optimize: str | Sequence[str] = (),
            calibration: Any = "bundled", strict: bool = False) -> Prediction:
    """One forward pass of ``model`` (an ONNX path) on ``gpu``, as ``predict MODEL --gpu GPU``."""
    from .predict import predict_file

    profile = load_gpu(gpu)
    raw = predict_file(model, profile, precision=precision, batch=batch, shapes=_shapes(shapes),
                       calibration=_calibration(calibration, profile), strict=strict, optimize=optimize or ())
    return Prediction(raw, profile)


def train_step(model: str, gpu: str | MachineProfile = "h200", precision: str = "fp32", batch: int | None = None,
               optimizer: str = "adamw", fused: bool = True, loss: str = "cross_entropy",
               shapes: Mapping[str, Sequence[int]] | None = None, optimize: str | Sequence[str] = (),
               calibration: Any = "bundled", strict: bool = False) -> Prediction:
    """One training step (forward + backward + optimizer), as ``predict MODEL --mode train``."""
    from .train import predict_training_file

    profile = load_gpu(gpu)
    raw = predict_training_file(model, profile, precision=precision, batch=batch, shapes=_shapes(shapes),
                                calibration=_calibration(calibration, profile), strict=strict, optimizer=optimizer,
                                impl="fused" if fused else "foreach", loss=loss, optimize=optimize or ())
    return Prediction(raw, profile)


def _shapes(shapes):
    return {k: tuple(int(d) for d in v) for k, v in (shapes or {}).items()}


# ------------------------------------------------------------------------------------------ compare
@dataclass(frozen=True)
class Comparison(_Result):
    """Two predictions side by side (``predict compare``): B relative to A."""

    html_page = "comparison"  # its page in predictor/html_report.py

    raw: Any                      # predictor.compare.Comparison
    a: Prediction
    b: Prediction

    @property
    def speedup(self) -> float | None:
        """Time of A / time of B."""
        return self.to_dict()["speedup"]

    def to_dict(self) -> dict[str, Any]:
        from .compare import to_json_dict

        return to_json_dict(self.raw)

    def to_table(self, top: int = 15) -> str:
        from .compare import to_table

        return to_table(self.raw, top=top)

    def _frame_rows(self) -> list[dict[str, Any]]:
        return [{"name": m.name, "op_type": m.op_type, "a_time_s": m.a.time_s if m.a else None,
                 "b_time_s": m.b.time_s if m.b else None, "saved_s": m.saved_s,
                 "a_bound": m.a.bound.value if m.a else None, "b_bound": m.b.bound.value if m.b else None}
                for m in self.raw.matches]


def compare(a: Prediction, b: Prediction, labels: tuple[str, str] | None = None) -> Comparison:
    """B against A; ``labels`` default to what differs (precision, batch, GPU, model), as the CLI names them."""
    from .compare import Side
    from .compare import compare as compare_sides
    from .compare import labels as auto_labels

    if not isinstance(a, Prediction) or not isinstance(b, Prediction):
        raise PredictorError("compare takes two Prediction results (of predictor.predict or predictor.train_step)")
    if labels is None:
        desc = lambda p: {"model": p.model, "gpu": p.gpu, "precision": p.precision, "batch": p.batch,  # noqa: E731
                          "optimize": ",".join(getattr(p.raw, "optimizations", ()))}
        labels = auto_labels(desc(a), desc(b))
    raw = compare_sides(Side(labels[0], a.raw, a.profile), Side(labels[1], b.raw, b.profile))
    return Comparison(raw, a, b)


# ------------------------------------------------------------------------------------------ sweep
@dataclass(frozen=True)
class SweepResult(_Result):
    """One row per (GPU, precision, batch) setting (``predictor.sweep.Sweep``)."""

    html_page = "sweep"  # its page in predictor/html_report.py

    raw: Any

    @property
    def rows(self):
        return self.raw.rows

    def to_dict(self) -> dict[str, Any]:
        from .sweep import to_json_dict

        return to_json_dict(self.raw)

    def to_table(self, top: int = 0) -> str:
        from .sweep import to_table

        return to_table(self.raw)

    def to_csv(self) -> str:
        from .sweep import to_csv

        return to_csv(self.raw)

    def _frame_rows(self) -> list[dict[str, Any]]:
        from .sweep import row_json

        out = []
        for r in self.raw.rows:
            d = row_json(r)
            mix = d.pop("bound_mix") or {}
            d.update({f"bound_{k}": v for k, v in mix.items()})
            d["unsupported"] = ";".join(f"{k} x{v}" for k, v in sorted(d["unsupported"].items()))
            out.append(d)
        return out


def sweep(model: str, gpus: Sequence[str] = ("h200",), precisions: Sequence[str] = ("fp32",),
          batches: Sequence[int | None] = (None,), shapes: Mapping[str, Sequence[int]] | None = None,
          optimize: str | Sequence[str] = (), calibration: Any = "bundled", strict: bool = False,
          progress: bool = False) -> SweepResult:
    """Every (GPU, precision, batch) of the three lists, as ``predict MODEL --gpu A,B --precision P,Q --batch 1,8``.
    A setting that cannot be predicted (fp8 on a V100) is a row with ``error``; ``progress`` shows a bar."""
    from .progress import bar
    from .sweep import require_success, run_sweep

    gpus = [gpus] if isinstance(gpus, (str, MachineProfile)) else list(gpus)
    precisions = [precisions] if isinstance(precisions, str) else list(precisions)
    batches = [batches] if batches is None or isinstance(batches, int) else list(batches)
    profiles = [load_gpu(g) for g in gpus]
    kwargs = {"optimize": optimize} if optimize else {}
    with bar(len(profiles) * len(precisions) * len(batches), "sweep", enabled=progress) as b:
        raw = run_sweep(model, profiles, precisions, batches, calibration_for=lambda p: _calibration(calibration, p),
                        shapes=_shapes(shapes), strict=strict, on_setting=b.update, **kwargs)
    return SweepResult(require_success(raw))


# ------------------------------------------------------------------------------------------ validate
@dataclass(frozen=True)
class ValidationResult(_Result):
    """Predicted vs measured (Nsight Compute samples) per op and per network (``predictor.validate``)."""

    html_page = "validation"  # its page in predictor/html_report.py

    raw: Any
    profile: MachineProfile

    @property
    def prediction(self) -> Prediction:
        return Prediction(self.raw.prediction, self.profile)

    def to_dict(self) -> dict[str, Any]:
        from .validate import to_json_dict

        return to_json_dict(self.raw, self.profile)

    def to_table(self, top: int = 15) -> str:
        from .validate import to_table

        return to_table(self.raw, self.profile, top=top)

    def _frame_rows(self) -> list[dict[str, Any]]:
        out = []
        for r in self.raw.rows:
            p, m = r.predicted, r.measured
            out.append({"name": r.name, "op_type": r.op_type,
                        "predicted_time_s": p.time_s if p else None, "measured_time_s": m.time_s if m else None,
                        "predicted_flops": p.flops if p else None, "measured_flops": m.flops if m else None,
                        **{f"predicted_bytes_{lv}": p.bytes.get(lv) if p else None for lv in ("L1", "L2", "HBM")},
                        **{f"measured_bytes_{lv}": m.bytes.get(lv) if m else None for lv in ("L1", "L2", "HBM")},
                        "predicted_bound": p.bound if p else None, "measured_bound": m.bound if m else None})
        return out


def validate(model: str, gpu: str | MachineProfile, ncu: str, precision: str = "fp32", batch: int | None = None,
             shapes: Mapping[str, Sequence[int]] | None = None, calibration: Any = "bundled",
             allow_mismatch: bool = False) -> ValidationResult:
    """``model`` predicted against the Nsight Compute CSV ``ncu`` measured from it, as ``predict validate``
    (``allow_mismatch``: as ``--allow-mismatch``)."""
    from .validate import validate as run_validate

    profile = load_gpu(gpu)
    raw = run_validate(model, profile, ncu, precision, batch, calibration=_calibration(calibration, profile),
                       shapes=_shapes(shapes), allow_mismatch=allow_mismatch)
    return ValidationResult(raw, profile)
