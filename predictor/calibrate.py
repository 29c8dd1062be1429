"""Turning a costed op into a predicted time: the pluggable calibration step.

``Uncalibrated`` is the pure hierarchical roofline with the launch-overhead floor. Fitted
calibrations (efficiency per op class, hidden kernels) implement the same ``predict_op``.
"""
from __future__ import annotations

from typing import Protocol

from .machine.profile import MachineProfile
from .precision import PrecisionPolicy
from .roofline import bound_of, level_times_s
from .types import Node, OpCost, OpPrediction, frozen_map


class Calibration(Protocol):
    name: str

    def predict_op(self, node: Node, cost: OpCost, profile: MachineProfile,
                   policy: PrecisionPolicy) -> OpPrediction: ...


class Uncalibrated:
    """Roofline at 100% of every ceiling; each kernel costs at least the eager launch overhead."""

    name = "uncalibrated"
    predict_op_by_key = True  # predict_op reads only the node's key and the cost's numbers (predict.predict_ops)

    def predict_op(self, node: Node, cost: OpCost, profile: MachineProfile,
                   policy: PrecisionPolicy) -> OpPrediction:
        times = level_times_s(cost, profile, profile.launch_overhead_s)
        t, bound = bound_of(times)
        return OpPrediction(cost=cost, time_s=t, bound=bound, level_time_s=frozen_map(times), efficiency=1.0)


def calibration_named(profile: MachineProfile, path: str | None = None, uncalibrated: bool = False) -> Calibration:
    """The calibration a command's options name (--uncalibrated, --calibration FILE, else the bundled one): the pure
    roofline, a fitted calibration JSON, or the fit bundled for this GPU (the H200's transferred to another GPU),
    else the pure roofline."""
    if uncalibrated:
        return Uncalibrated()
    from .fitted import bundled_calibration, load_calibration

    if path:
        return load_calibration(path, profile)
    return bundled_calibration(profile) or Uncalibrated()
