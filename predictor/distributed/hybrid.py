"""The hybrid scheme of large scientific training runs: synchronous groups, asynchronous exchange between them.

Kurth et al., "Deep Learning at 15PF" (SC17): GPUs (nodes) form groups that train synchronously (an
all-reduce inside the group every step, here: DDP on the group); groups exchange their updates
asynchronously (a parameter server in the paper; here, as a what-if, every GPU exchanges its 1/G shard of
the gradients with the GPUs holding the same shard in the other groups, in the background). A group does
not wait for the exchange unless the exchange cannot keep up: the step time is
``max(group step, exchange time)`` and the exchange runs ``ceil(exchange / group step)`` steps behind
(the staleness the optimizer sees).

Ignored: the convergence cost of staleness (more steps to the same accuracy: not a time model's business,
but it is why efficiency alone does not decide), parameter-server hot spots, and the exchange slowing
the group's own NICs (it shares them with the group's all-reduce when a group spans several nodes).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..types import PredictorError
from .collectives import Layout, layout_for, nccl_model
from .ddp import DPConfig, DPStep, dp_step
from .gradients import StepProfile
from .system import SystemProfile


@dataclass(frozen=True)
class HybridStep:
    gpus: int
    group_gpus: int
    groups: int
    group: DPStep
    exchange_s: float
    step_s: float
    staleness_steps: int

    @property
    def efficiency(self) -> float:
        return self.group.baseline_step_s / self.step_s if self.step_s > 0 else 0.0

    @property
    def throughput_per_s(self) -> float:
        return self.group.samples_per_step * self.groups / self.step_s if self.step_s > 0 else 0.0


def exchange_time(shard_bytes: float, groups: int, system: SystemProfile) -> float:
    """Ring all-reduce of ``shard_bytes`` among ``groups`` peers, one per group, every GPU of a node doing
    the same at once: each gets 1/gpus_per_node of the node's injection bandwidth; latency of NCCL's tree
    over the groups (log2 steps each way)."""
    if groups <= 1 or shard_bytes <= 0:
        return 0.0
    m = nccl_model()
    per_gpu = system.inter.node_bandwidth_Bps * m.net_efficiency / system.gpus_per_node
    lat = 2 * math.ceil(math.log2(groups)) * m.hw_latency_s["net"]["tree"]["Simple"]
    return lat + 2.0 * (groups - 1) / groups * shard_bytes / per_gpu


def hybrid_step(step: StepProfile, system: SystemProfile, gpus: int, group_gpus: int, cfg: DPConfig,
                hbm_Bps: float) -> HybridStep:
    if group_gpus < 1 or gpus % group_gpus:
        raise PredictorError(f"--hybrid-group {group_gpus} must divide --gpus {gpus}")
    layout_for(system, gpus)  # the whole run must fit the system
    lay: Layout = layout_for(system, group_gpus)
    group = dp_step(step, system, lay, cfg, hbm_Bps)
    groups = gpus // group_gpus
    wire = 1.0 if cfg.grad_comm == "native" else min(1.0, 2.0 / step.grad_bytes_per_element)
    x = exchange_time(step.gradient_bytes * wire / group_gpus, groups, system)
    t = max(group.step_s, x)
    stale = max(1, math.ceil(x / group.step_s)) if groups > 1 else 0
    return HybridStep(gpus, group_gpus, groups, group, x, t, stale)


__all__ = ["HybridStep", "hybrid_step", "exchange_time"]
