"""The result of ``predict --mode train``: a NetworkPrediction (every kernel of the step, in order) with each
op's phase, per-phase totals, the predicted peak memory and what the step was (optimizer, loss)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from ..types import MemLevel, NetworkPrediction, OpPrediction, frozen_map
from .kernel import PHASES


@dataclass(frozen=True)
class PhaseSummary:
    name: str
    time_s: float
    flops: float
    bytes: Mapping[MemLevel, float]
    kernels: int
    ops: int
    eager_time_s: float | None = None  # this phase's share of the eager (host-dispatch) timeline


@dataclass(frozen=True)
class MemoryEstimate:
    """Peak allocated bytes of one step (PyTorch's caching-allocator ``max_memory_allocated``) and its parts.

    ``components``: live bytes by kind at the peak; ``totals``: parameters, gradients, optimizer state,
    master weights, saved activations (every forward tensor some backward kernel keeps), inputs, workspace.
    """

    peak_bytes: float
    components: Mapping[str, float]
    totals: Mapping[str, float]
    peak_at: str
    capacity_bytes: float
    usable_bytes: float
    fits: bool
    max_batch: int | None = None
    step_start_bytes: float = 0.0
    after_backward_bytes: float = 0.0


@dataclass(frozen=True)
class TrainingPrediction(NetworkPrediction):
    mode: str = "train"
    op_phases: tuple[str, ...] = ()
    phases: tuple[PhaseSummary, ...] = ()
    memory: MemoryEstimate | None = None
    optimizer: str = ""
    optimizer_impl: str = ""
    loss: str = ""
    notes: tuple[str, ...] = field(default_factory=tuple)

    def phase(self, name: str) -> PhaseSummary | None:
        return next((p for p in self.phases if p.name == name), None)

    def ops_of(self, phase: str) -> tuple[OpPrediction, ...]:
        return tuple(o for o, ph in zip(self.ops, self.op_phases) if ph == phase)


def summarise_phases(ops: tuple[OpPrediction, ...], phases: tuple[str, ...],
                     eager: Mapping[str, float] | None = None) -> tuple[PhaseSummary, ...]:
    out = []
    for name in PHASES:
        sel = [o for o, ph in zip(ops, phases) if ph == name]
        out.append(PhaseSummary(
            name=name, time_s=float(sum(o.time_s for o in sel)), flops=float(sum(o.cost.total_flops for o in sel)),
            bytes=frozen_map({lv: float(sum(o.cost.bytes.get(lv, 0.0) for o in sel)) for lv in MemLevel}),
            kernels=int(sum(o.cost.kernels for o in sel)), ops=len(sel),
            eager_time_s=None if eager is None else eager.get(name)))
    return tuple(out)
