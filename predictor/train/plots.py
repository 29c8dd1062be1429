"""Charts of a training step: one series per phase (forward filled, backward and optimizer hollow), so the
roofline charts show where each phase's kernels sit."""
from __future__ import annotations

from ..machine.profile import MachineProfile
from ..types import NetworkPrediction
from .result import TrainingPrediction


def phase_series(pred: TrainingPrediction, profile: MachineProfile) -> list:
    from ..plots.data import series_from_prediction

    out = []
    for phase in pred.phases:
        ops = pred.ops_of(phase.name)
        if not any(o.time_s > 0 for o in ops):
            continue
        sub = NetworkPrediction(model=pred.model, gpu=pred.gpu, precision=pred.precision, batch=pred.batch,
                                ops=ops, unsupported=pred.unsupported, calibration=pred.calibration)
        out.append(series_from_prediction(sub, profile, label=phase.name))
    return out


__all__ = ["phase_series"]
