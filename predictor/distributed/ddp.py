"""Data-parallel step time as PyTorch's DistributedDataParallel runs it, and ZeRO-1 / FSDP-style sharding.

DDP (torch/nn/parallel/distributed.py and its C++ Reducer):
  * gradients go into buckets in the order backward produces them (DDP rebuilds its buckets in that order
    after the first iteration); the first bucket holds up to 1 MiB (``first_bucket_bytes_cap``), the others
    up to ``bucket_cap_mb`` MiB (25 by default, ``--bucket-mb``);
  * a bucket is all-reduced as soon as its last gradient is ready, on NCCL's stream, in bucket order, so
    all-reduces run one after another and overlap the rest of backward; the bucket is divided by the world
    size first (a pass over it on the compute stream); with ``gradient_as_bucket_view=False`` (the default)
    every gradient is copied into its bucket during backward and back after the all-reduce;
  * the optimizer waits for the last all-reduce: the exposed tail is what the last buckets' all-reduces
    run past the end of backward;
  * ``no_sync`` gradient accumulation: K micro-batches, only the last one's backward all-reduces;
  * fp16/bf16 gradient communication (``fp16_compress_hook`` / ``bf16_compress_hook``): buckets cast to 16
    bits before the all-reduce and back after (two more passes), half the bytes on the wire.
ZeRO-1 (optimizer state sharded): buckets reduce-scattered instead of all-reduced, each GPU's optimizer
walks 1/n of the parameters, the updated parameters are all-gathered after the optimizer (exposed).
FSDP (full shard, ZeRO-3): parameters, gradients and optimizer state sharded; each bucket-sized unit's
parameters all-gathered before its forward (prefetched one unit ahead) and again before its backward, its
gradients reduce-scattered after; compute waits for a unit whose all-gather has not finished.

Ignored: NCCL kernels slowing the compute they overlap (they take SMs and HBM bandwidth), host-side
launch and Python overheads of the reducer, stragglers and jitter between GPUs, the data loader, and
unused-parameter detection; bucket boundaries follow gradient ready order, not ``model.parameters()``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from ..types import PredictorError
from .collectives import Layout, collective_time
from .gradients import StepProfile
from .system import SystemProfile

MIB = 1024 * 1024
FIRST_BUCKET_BYTES = 1 * MIB
STRATEGIES = ("ddp", "zero1", "fsdp")
GRAD_COMM = ("native", "fp16", "bf16")


@dataclass(frozen=True)
class DPConfig:
    strategy: str = "ddp"
    bucket_mb: float = 25.0
    grad_comm: str = "native"          # native | fp16 | bf16
    accumulate: int = 1                # micro-batches per optimizer step
    bucket_view: bool = False          # gradient_as_bucket_view
    nvls: bool = True                  # NCCL may use NVLink SHARP (NCCL_NVLS_ENABLE=1)
    input_rate: float = 0.0            # samples/s one node's input pipeline delivers to its GPUs (0: unlimited)

    def check(self) -> None:
        if self.strategy not in STRATEGIES:
            raise PredictorError(f"unknown data-parallel strategy '{self.strategy}' (known: {', '.join(STRATEGIES)})")
        if self.grad_comm not in GRAD_COMM:
            raise PredictorError(f"unknown gradient communication '{self.grad_comm}' (known: {', '.join(GRAD_COMM)})")
        if not 0 < self.bucket_mb <= 1e5:
            raise PredictorError(f"--bucket-mb must be in (0, 100000] MiB (got {self.bucket_mb:g})")
        if self.accumulate < 1:
            raise PredictorError(f"--accumulate must be at least 1 (got {self.accumulate})")
        if not 0 <= self.input_rate <= 1e12:
            raise PredictorError(f"--input-rate must be a positive number of samples/s (got {self.input_rate:g})")


@dataclass(frozen=True)
class Bucket:
    index: int
    params: int
    bytes: float           # bytes on the wire (after compression)
    ready_s: float         # from backward start
    start_s: float         # its collective starts (NCCL stream)
    end_s: float


class ScalingFigures:
    """Weak-scaling figures of a step on ``gpus`` GPUs (fields step_s, baseline_step_s, gpus, samples_per_step):
    efficiency = one-GPU step / step, speedup = GPUs x efficiency, throughput = samples per second."""

    @property
    def efficiency(self) -> float:
        return self.baseline_step_s / self.step_s if self.step_s > 0 else 0.0

    @property
    def speedup(self) -> float:
        return self.gpus * self.efficiency

    @property
    def throughput_per_s(self) -> float:
        return self.samples_per_step / self.step_s if self.step_s > 0 else 0.0


@dataclass(frozen=True)
class DPStep(ScalingFigures):
    """One optimizer step of data-parallel training on ``gpus`` GPUs (per GPU)."""

    gpus: int
    nodes: int
    strategy: str
    step_s: float
    compute_s: float                   # forward + backward + optimizer on this GPU (with DDP's own passes)
    comm_s: float                      # sum of collective times
    exposed_comm_s: float              # communication not hidden behind compute
    overhead_s: float                  # DDP's copies, divisions and casts on the compute stream
    baseline_step_s: float             # the single-GPU step (no DDP) with the same accumulation
    samples_per_step: float
    memory_per_gpu_bytes: float
    buckets: tuple[Bucket, ...] = ()
    notes: tuple[str, ...] = field(default_factory=tuple)



def assign_buckets(sizes: Sequence[float], bucket_bytes: float, first_bytes: float = FIRST_BUCKET_BYTES) -> list[list[int]]:
    """Gradient indices (in ready order) per bucket, as DDP's ``compute_bucket_assignment_by_size``: each
    gradient joins the open bucket, which closes once its bytes reach the cap (the first bucket's cap is
    ``first_bytes``), so a bucket may end above its cap by its last gradient."""
    out: list[list[int]] = []
    cur: list[int] = []
    acc = 0.0
    cap = min(first_bytes, bucket_bytes)
    for i, s in enumerate(sizes):
        cur.append(i)
        acc += s
        if acc >= cap:
            out.append(cur)
            cur, acc, cap = [], 0.0, bucket_bytes
    if cur:
        out.append(cur)
    return out


def _wire_factor(step: StepProfile, cfg: DPConfig) -> float:
    if cfg.grad_comm == "native":
        return 1.0
    return min(1.0, 2.0 / step.grad_bytes_per_element)


def _hbm_pass_s(nbytes: float, hbm_Bps: float) -> float:
    """A memory-bound elementwise pass reading and writing ``nbytes``."""
    return 2.0 * nbytes / hbm_Bps if hbm_Bps > 0 else 0.0


def simulate_overlap(ready_s: Sequence[float], comm_s: Sequence[float], backward_s: float) -> tuple[list[tuple[float, float]], float]:
    """Collectives on one stream, each starting when its bucket is ready and the previous one is done.
    Returns the (start, end) of each and the exposed tail past ``backward_s``."""
    spans, end = [], 0.0
    for r, c in zip(ready_s, comm_s):
        start = max(r, end)
        end = start + c
        spans.append((start, end))
    return spans, max(0.0, end - backward_s)


def dp_step(step: StepProfile, system: SystemProfile, lay: Layout, cfg: DPConfig, hbm_Bps: float) -> DPStep:
    """The data-parallel step of ``step`` on the GPUs of ``lay``."""
    cfg.check()
    n = lay.ranks
    k = cfg.accumulate
    samples = float((step.batch or 1) * k * n)
    base = k * (step.forward_s + step.backward_s) + step.optimizer_s
    mem = _memory(step, n, cfg)
    if n == 1:
        return DPStep(1, 1, cfg.strategy, base, base, 0.0, 0.0, 0.0, base, samples, mem, (),
                      ("one GPU: no data parallelism, no DDP wrapper",))
    if cfg.strategy == "fsdp":
        return _fsdp(step, system, lay, cfg, hbm_Bps, base, samples, mem)
    op = "all_reduce" if cfg.strategy == "ddp" else "reduce_scatter"
    wire = _wire_factor(step, cfg)
    sizes = [g.grad_bytes for g in step.gradients]
    groups = assign_buckets(sizes, cfg.bucket_mb * MIB)
    ready = [max(step.gradients[i].ready_s for i in grp) for grp in groups]
    nbytes = [sum(sizes[i] for i in grp) for grp in groups]
    comm = [collective_time(op, b * wire, system, lay, nvls=cfg.nvls).time_s for b in nbytes]
    # DDP's passes on the compute stream during backward: copy into the bucket, divide by world size, cast
    grad_total = float(sum(sizes))
    in_bwd = _hbm_pass_s(grad_total, hbm_Bps)                        # div_(world_size)
    if not cfg.bucket_view:
        in_bwd += _hbm_pass_s(grad_total, hbm_Bps)                   # copy gradient -> bucket
    if wire < 1.0:
        in_bwd += _hbm_pass_s(grad_total, hbm_Bps) * 0.75            # cast to 16 bits (read 4 B, write 2 B)
    after = 0.0
    if not cfg.bucket_view:
        after += _hbm_pass_s(grad_total, hbm_Bps)                    # bucket -> gradient
    if wire < 1.0:
        after += _hbm_pass_s(grad_total, hbm_Bps) * 0.75             # cast back
    # the bucket passes delay each bucket by the share of pass time spent up to its ready point
    bwd = step.backward_s + in_bwd
    scale = bwd / step.backward_s if step.backward_s > 0 else 1.0
    spans, exposed = simulate_overlap([r * scale for r in ready], comm, bwd)
    opt = step.optimizer_s
    tail = 0.0
    notes = []
    if cfg.strategy == "zero1":
        opt = step.optimizer_s / n
        tail = collective_time("all_gather", step.parameters * step.param_bytes_per_element, system, lay,
                               nvls=cfg.nvls).time_s
        notes.append("ZeRO-1: gradients reduce-scattered, optimizer on 1/n of the parameters, parameters "
                     "all-gathered after it (exposed)")
    compute = k * step.forward_s + (k - 1) * step.backward_s + bwd + opt
    step_s = compute + exposed + after + tail
    buckets = tuple(Bucket(i, len(g), b * wire, r * scale, s, e)
                    for i, (g, b, r, (s, e)) in enumerate(zip(groups, nbytes, ready, spans)))
    return DPStep(n, lay.nodes, cfg.strategy, step_s, compute, float(sum(comm)) + tail, exposed + tail,
                  in_bwd + after, base, samples, mem, buckets, tuple(notes))


def _fsdp(step: StepProfile, system: SystemProfile, lay: Layout, cfg: DPConfig, hbm_Bps: float,
          base: float, samples: float, mem: float) -> DPStep:
    """Full sharding: units of about ``bucket_mb`` of parameters (in backward ready order, reversed for the
    forward); all-gather before each unit's forward and backward, reduce-scatter of its gradients after."""
    n, k = lay.ranks, cfg.accumulate
    wire = _wire_factor(step, cfg)
    sizes = [g.grad_bytes for g in step.gradients]
    groups = assign_buckets(sizes, cfg.bucket_mb * MIB, first_bytes=cfg.bucket_mb * MIB)
    pbytes = [sum(step.gradients[i].numel for i in grp) * step.param_bytes_per_element for grp in groups]
    gbytes = [sum(sizes[i] for i in grp) * wire for grp in groups]
    ag = [collective_time("all_gather", b, system, lay, nvls=cfg.nvls).time_s for b in pbytes]
    rs = [collective_time("reduce_scatter", b, system, lay, nvls=cfg.nvls).time_s for b in gbytes]
    # forward: units in forward order (reverse of backward ready order); each unit's compute share by params
    total_params = max(sum(pbytes), 1.0)
    fwd_units = list(reversed(range(len(groups))))
    comm_end, comp_end = 0.0, 0.0
    for u in fwd_units:
        comm_end += ag[u]                                  # prefetch: all-gathers back to back
        comp_end = max(comp_end, comm_end) + step.forward_s * pbytes[u] / total_params
    fwd_s = comp_end
    # backward: all-gather unit u (prefetched), its compute until its gradients are ready, then reduce-scatter
    t0 = fwd_s
    comm_t, comp_t = t0, t0
    prev_ready = 0.0
    for u in range(len(groups)):
        ready = max(step.gradients[i].ready_s for i in groups[u])
        comm_t = max(comm_t, t0) + ag[u]
        comp_t = max(comp_t, comm_t) + (ready - prev_ready)
        prev_ready = ready
        comm_t = max(comm_t, comp_t) + rs[u]
    bwd_end = max(comp_t, t0 + step.backward_s)
    exposed_bwd = max(0.0, comm_t - bwd_end)
    one_micro = (fwd_s - 0.0) + (bwd_end - t0) + exposed_bwd
    opt = step.optimizer_s / n
    step_s = one_micro * k + opt
    compute = k * (step.forward_s + step.backward_s) + opt
    comm = k * (sum(ag) * 2 + sum(rs))
    notes = ("FSDP full shard: all-gather per unit before forward and backward (prefetched one ahead), "
             "reduce-scatter after; with accumulation every micro-batch communicates (no_sync keeps unsharded "
             "gradients, not modelled)",)
    return DPStep(n, lay.nodes, "fsdp", step_s, compute, comm, max(0.0, step_s - compute), 0.0, base, samples,
                  mem, (), notes)


def _memory(step: StepProfile, n: int, cfg: DPConfig) -> float:
    """Peak memory per GPU: the single-GPU peak, less the sharded part of the static state, plus DDP's
    flat buckets (a copy of the gradients unless they are bucket views) or FSDP's two unsharded units."""
    m = step.memory
    peak = float(m.get("peak", 0.0))
    if not peak:
        return 0.0
    if n == 1:
        return peak
    params = float(m.get("parameters", 0.0))
    grads = float(m.get("gradients", 0.0))
    opt = float(m.get("optimizer_state", 0.0)) + float(m.get("master_weights", 0.0))
    unit = min(cfg.bucket_mb * MIB, grads)
    if cfg.strategy == "ddp":
        return peak + (0.0 if cfg.bucket_view else grads)
    if cfg.strategy == "zero1":
        return peak - opt * (1 - 1 / n) + (0.0 if cfg.bucket_view else grads)
    return peak - (params + grads + opt) * (1 - 1 / n) + 2 * unit


__all__ = ["DPConfig", "DPStep", "Bucket", "assign_buckets", "simulate_overlap", "dp_step", "STRATEGIES",
           "GRAD_COMM", "MIB", "FIRST_BUCKET_BYTES"]
