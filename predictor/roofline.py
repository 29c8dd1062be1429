"""Pure roofline arithmetic: time per limit, the bound, and time-based roofline positions.

An op's ideal time is the largest of its compute time (FLOPs of each (precision, unit) over that
unit's peak, summed: one kernel's units do not overlap across precisions) and its memory time at each
level (bytes at the level over the level's bandwidth). A kernel never takes less than the launch
floor (kernels x per-kernel overhead). Ignores: overlap between consecutive kernels, tail effects.
"""
from __future__ import annotations

from .machine.profile import MachineProfile
from .types import Bound, MemLevel, OpCost, PredictorError

_LEVEL_BOUND = {MemLevel.L1: Bound.L1, MemLevel.L2: Bound.L2, MemLevel.HBM: Bound.HBM}


def compute_time_s(cost: OpCost, profile: MachineProfile) -> float:
    t = 0.0
    for f in cost.flops:
        peak = profile.peak(f.precision, f.unit)
        if peak is None:
            raise PredictorError(
                f"{profile.name} has no {f.precision.value} {f.unit.value}-core ceiling "
                f"(needed by {cost.op_type} '{cost.name}'); choose another --precision or GPU")
        t += f.flops / peak
    return t


def level_times_s(cost: OpCost, profile: MachineProfile, launch_s: float) -> dict[str, float]:
    """Time each limit alone allows: compute, L1, L2, HBM, latency (kernels x per-kernel floor)."""
    times = {"compute": compute_time_s(cost, profile)}
    for level in MemLevel:
        times[level.value] = cost.bytes.get(level, 0.0) / profile.bandwidth(level)
    times["latency"] = cost.kernels * launch_s
    return times


def bound_of(times: dict[str, float]) -> tuple[float, Bound]:
    """The roofline time (max over limits) and which limit it is; ties go to compute, then L1, L2, HBM."""
    best, bound = times["compute"], Bound.COMPUTE
    for level in MemLevel:
        if times[level.value] > best:
            best, bound = times[level.value], _LEVEL_BOUND[level]
    if times["latency"] > best:
        best, bound = times["latency"], Bound.LATENCY
    return best, bound


def machine_balance(profile: MachineProfile, precision, unit, level: MemLevel = MemLevel.HBM) -> float:
    """FLOPs per byte where compute time equals memory time at ``level``."""
    return profile.peak(precision, unit) / profile.bandwidth(level)
