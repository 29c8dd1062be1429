"""A scaling sweep: the data-parallel step of a training workload at each GPU count of a system.

Input pipeline (``--input-rate R``, a what-if): one node's pipeline (data loading, decoding, augmentation on
its CPUs, shared by its GPUs) delivers at most R samples/s, so a step cannot be shorter than the node's
samples per step over R: ``batch x accumulation x GPUs on the node / R``; the one-GPU baseline gets the whole
pipeline (``batch x accumulation / R``). A pipeline that keeps up with one GPU can starve eight: scaling
efficiency then drops with GPUs per node, not with communication.

A workload is one or more parts trained in the same step (a network; a GAN's generator and discriminator,
each with its own DDP wrapper and optimizer, run one after the other). Per GPU count: step time, exposed
communication, scaling efficiency (single-GPU step / step, weak scaling at a fixed per-GPU batch),
speedup (GPUs x efficiency), throughput (samples per second over all GPUs), memory per GPU; with a hybrid
group size also the hybrid scheme's step and efficiency beside fully synchronous DP.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from .collectives import layout_for
from .ddp import DPConfig, DPStep, ScalingFigures, dp_step
from .gradients import StepProfile
from .hybrid import HybridStep, hybrid_step
from .system import SystemProfile

_STATIC = ("parameters", "gradients", "optimizer_state", "master_weights")


@dataclass(frozen=True)
class ScalingRow(ScalingFigures):
    gpus: int
    nodes: int
    step_s: float
    baseline_step_s: float
    comm_s: float
    exposed_comm_s: float
    overhead_s: float
    samples_per_step: float
    memory_per_gpu_bytes: float
    parts: tuple[DPStep, ...]
    hybrid: tuple[HybridStep, ...] = ()
    input_s: float = 0.0               # the node's input pipeline per step (0: not limited)

    @property
    def input_bound(self) -> bool:
        return self.input_s > 0 and self.step_s <= self.input_s

    @property
    def hybrid_step_s(self) -> float | None:
        return max(sum(h.step_s for h in self.hybrid), self.input_s) if self.hybrid else None

    @property
    def hybrid_efficiency(self) -> float | None:
        s = self.hybrid_step_s
        return self.baseline_step_s / s if s else None

    @property
    def hybrid_throughput_per_s(self) -> float | None:
        s = self.hybrid_step_s
        return self.samples_per_step / s if s else None

    @property
    def hybrid_staleness(self) -> int | None:
        return max(h.staleness_steps for h in self.hybrid) if self.hybrid else None


@dataclass(frozen=True)
class Scaling:
    model: str
    system: SystemProfile
    gpu: str
    precision: str
    batch: int | None
    config: DPConfig
    rows: tuple[ScalingRow, ...]
    hybrid_group: int | None = None
    parts: tuple[str, ...] = ()


def _memory(parts: Sequence[StepProfile], per_part: Sequence[float]) -> float:
    """All parts' static state resident, the largest transient peak on top."""
    static = [sum(float(p.memory.get(k, 0.0)) for k in _STATIC) for p in parts]
    if len(parts) == 1:
        return per_part[0]
    return sum(static) + max(m - s for m, s in zip(per_part, static))


def row(parts: Sequence[StepProfile], system: SystemProfile, gpus: int, cfg: DPConfig, hbm_Bps: float,
        hybrid_group: int | None = None) -> ScalingRow:
    lay = layout_for(system, gpus)
    steps = tuple(dp_step(p, system, lay, cfg, hbm_Bps) for p in parts)
    hyb: tuple[HybridStep, ...] = ()
    if hybrid_group and gpus > hybrid_group:
        hyb = tuple(hybrid_step(p, system, gpus, hybrid_group, cfg, hbm_Bps) for p in parts)
    per_gpu = steps[0].samples_per_step / gpus
    input_s = per_gpu * lay.per_node / cfg.input_rate if cfg.input_rate else 0.0
    base_input_s = per_gpu / cfg.input_rate if cfg.input_rate else 0.0
    return ScalingRow(gpus=gpus, nodes=lay.nodes, step_s=max(sum(s.step_s for s in steps), input_s),
                      baseline_step_s=max(sum(s.baseline_step_s for s in steps), base_input_s),
                      comm_s=sum(s.comm_s for s in steps), input_s=input_s,
                      exposed_comm_s=sum(s.exposed_comm_s for s in steps),
                      overhead_s=sum(s.overhead_s for s in steps), samples_per_step=steps[0].samples_per_step,
                      memory_per_gpu_bytes=_memory(parts, [s.memory_per_gpu_bytes for s in steps]),
                      parts=steps, hybrid=hyb)


def sweep(parts: Sequence[StepProfile], system: SystemProfile, gpu_counts: Sequence[int], cfg: DPConfig,
          hbm_Bps: float, hybrid_group: int | None = None, gpu: str = "") -> Scaling:
    cfg.check()
    rows = tuple(row(parts, system, n, cfg, hbm_Bps, hybrid_group) for n in gpu_counts)
    first = parts[0]
    return Scaling(model=" + ".join(p.model for p in parts), system=system, gpu=gpu or system.gpu,
                   precision=first.precision, batch=first.batch, config=cfg, rows=rows, hybrid_group=hybrid_group,
                   parts=tuple(p.model for p in parts))


def log_counts(system: SystemProfile, start: int = 1, limit: int | None = None) -> list[int]:
    """1, 2, 4, ... up to a node, then whole nodes doubling, up to the system (or ``limit``) GPUs."""
    top = min(limit or system.max_gpus, system.max_gpus)
    out, n = [], start
    while n <= min(system.gpus_per_node, top):
        out.append(n)
        n *= 2
    if out and out[-1] != system.gpus_per_node and system.gpus_per_node <= top:
        out.append(system.gpus_per_node)
    nodes = 2
    while nodes * system.gpus_per_node <= top:
        out.append(nodes * system.gpus_per_node)
        nodes *= 2
    if out[-1] != top and top % system.gpus_per_node == 0:
        out.append(top)
    return out


__all__ = ["Scaling", "ScalingRow", "sweep", "row", "log_counts"]
