"""Reference GPU time of one training step of the zoo networks, split into forward / backward / optimizer.

    python3 -m calibration.training.measure --out DIR [--names a,b] [--precisions fp32,tf32,amp,amp_bf16]
        [--batches 8,32] [--optimizer adamw] [--max-seconds 200] [--dry-run-cpu]

Protocol per (network, precision, batch); model in train() mode with fp32 parameters on the device,
cudnn.benchmark on:
  * precisions: fp32 = TF32 off for cuBLAS and cuDNN, tf32 = both on, amp = torch.autocast float16 with
    torch.amp.GradScaler, amp_bf16 = autocast bfloat16 without a scaler (TF32 off for both amp modes);
  * loss: MSE between the network output cast to float32 and a fixed random target of the same shape
    (the predictor models this same loss: one elementwise sub/square/mean over the output and its
    backward);
  * optimizer: AdamW(lr=1e-4, fused=True on CUDA) or SGD(lr=1e-4, momentum=0.9);
    zero_grad(set_to_none=True) is part of the optimizer phase (so is scaler.update for amp);
  * 3 warm-up steps, then N timed steps (N from --case-budget-s, 5..20); per step CUDA events at
    start / after forward+loss / after backward / after optimizer, synchronize after each step;
    medians of the phases and of the whole step, p10/p90 of the step, host wall time of the step;
  * one profiled step (torch.profiler CPU+CUDA, record_function ranges `phase::forward|backward|optimizer`,
    also NVTX ranges of the same names for Nsight Compute), synchronizing before each range closes:
    kernel count and summed kernel time per phase, a kernel belonging to the phase whose CPU interval
    holds its GPU start (the launching op's range only as a fallback);
  * after every eager case of the network (a captured step keeps device memory, which would inflate the
    allocator peaks of later cases), the whole step captured in one CUDA graph (a capturable copy of the
    optimizer, autocast without its cache): replay median `step_graph_median_s` (GPU time, no host dispatch) and per-phase times from
    event nodes inside the graph (`graph_<phase>_median_s`); failures land in `graph_error`;
  * memory: after warm-up reset_peak_memory_stats(), one step: peak allocated, allocated at the step's
    start (parameters + optimizer state; grads are None after zero_grad(set_to_none=True)) and after
    backward (parameters + grads + optimizer state), parameter count / bytes, optimizer state bytes.
Errors (OOM, ...) are recorded in the case's `error` and the sweep goes on. DIR/training.json is
rewritten after each case. `--dry-run-cpu` runs the code paths on the CPU (numbers meaningless,
memory NaN, no kernels).
"""
from __future__ import annotations

import argparse
import contextlib
import gc
import math
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

from calibration.networks import gpu_common, zoo
from calibration.networks.gpu_common import Budget, summarize, sync, utc_now
from calibration.networks.timing import (_clamp, _short, command_line, prepare_module, report_sweep, start_sweep,
                                         write_json)

PHASES = ("forward", "backward", "optimizer")
PHASE_PREFIX = "phase::"
GIB = 2.0 ** 30


@dataclass(frozen=True)
class PrecisionMode:
    """flags: name given to set_precision_flags; autocast: torch dtype name or '' (off)."""

    flags: str
    autocast: str = ""
    grad_scaler: bool = False


PRECISION_MODES: dict[str, PrecisionMode] = {
    "fp32": PrecisionMode("fp32"),
    "tf32": PrecisionMode("tf32"),
    "amp": PrecisionMode("fp32", "float16", True),
    "amp_bf16": PrecisionMode("fp32", "bfloat16", False),
}

OPTIMIZERS: dict[str, dict[str, Any]] = {
    "adamw": {"cls": "AdamW", "lr": 1e-4, "fused": True},
    "sgd": {"cls": "SGD", "lr": 1e-4, "momentum": 0.9},
}

DEFAULT_NAMES = ("resnet18", "resnet50", "mobilenet_v3_large", "vit_b_16", "bert_base", "lstm",
                 "efficientnet_b0", "regnet_y_1_6gf", "gpt2", "distilbert", "gru")
FAMILY_BATCHES: dict[str, tuple[int, ...]] = {"segmentation": (2, 8)}
KIND_BATCHES: dict[str, tuple[int, ...]] = {"image": (8, 32), "tokens": (8, 32), "sequence": (8, 32)}


@dataclass(frozen=True)
class TrainingOptions:
    out_dir: str
    names: tuple[str, ...] = DEFAULT_NAMES
    precisions: tuple[str, ...] = tuple(PRECISION_MODES)
    batches: tuple[int, ...] = ()      # empty: per-family defaults (default_batches)
    optimizer: str = "adamw"
    warmup: int = 3
    min_steps: int = 5
    max_steps: int = 20
    case_budget_s: float = 1.0         # target time of the timed steps of one case
    max_seconds: float = 0.0
    profile: bool = True
    graph: bool = True
    graph_replays: int = 20


@dataclass
class TrainingCaseResult:
    """One (network, precision, batch) training measurement; times in seconds."""

    network: str
    precision: str
    batch: int
    split: str = ""
    family: str = ""
    optimizer: str = ""
    optimizer_kwargs: dict = field(default_factory=dict)
    flags: dict = field(default_factory=dict)
    autocast_dtype: str = ""
    grad_scaler: bool = False
    output_shape: list = field(default_factory=list)
    n_steps: int = 0
    forward_median_s: float = math.nan     # forward + loss
    backward_median_s: float = math.nan
    optimizer_median_s: float = math.nan   # step (+ scaler.update) + zero_grad
    step_median_s: float = math.nan
    step_p10_s: float = math.nan
    step_p90_s: float = math.nan
    step_wall_median_s: float = math.nan   # host wall time of a step including its final sync
    n_kernels_forward: int = 0
    n_kernels_backward: int = 0
    n_kernels_optimizer: int = 0
    n_kernels_unattributed: int = 0
    n_memops: int = 0
    kernel_sum_forward_s: float = math.nan
    kernel_sum_backward_s: float = math.nan
    kernel_sum_optimizer_s: float = math.nan
    peak_allocated_bytes: float = math.nan
    allocated_step_start_bytes: float = math.nan      # parameters + optimizer state
    allocated_after_backward_bytes: float = math.nan  # parameters + grads + optimizer state
    n_params: int = 0
    param_bytes: int = 0
    optimizer_state_bytes: int = 0
    final_loss: float = math.nan
    final_grad_scale: float = math.nan   # amp: below 65536 means the scaler skipped optimizer steps
    step_graph_median_s: float = math.nan      # whole step in one CUDA graph: GPU time (see measure_graph)
    n_graph_replays: int = 0
    graph_forward_median_s: float = math.nan   # event nodes inside the graph (forward + loss)
    graph_backward_median_s: float = math.nan
    graph_optimizer_median_s: float = math.nan  # step + scaler.update (zero_grad launches nothing)
    graph_error: str = ""
    profile_error: str = ""
    error: str = ""
    wall_s: float = 0.0


# ----------------------------------------------------------------------------- pure helpers
def default_batches(spec: zoo.NetworkSpec) -> tuple[int, ...]:
    """Per-family default batches (segmentation nets are heavier), else per input kind."""
    return FAMILY_BATCHES.get(spec.family) or KIND_BATCHES[spec.input_kind]


def case_batches(spec: zoo.NetworkSpec, opts: TrainingOptions) -> tuple[int, ...]:
    return opts.batches or default_batches(spec)


def _ms(x: float) -> str:
    return f"{x * 1e3:9.3f}" if math.isfinite(x) else f"{'nan':>9s}"


def summary_line(c: dict) -> str:
    head = f"{c['network'][:20]:20s} {c['precision']:8s} {c['batch']:5d}"
    if c.get("error"):
        return f"{head}  ERR {c['error'][:80]}"
    peak_gib = c.get("peak_allocated_bytes", math.nan) / GIB
    kernels = "/".join(str(c.get(f"n_kernels_{p}", 0)) for p in PHASES)
    return (f"{head} {_ms(c['step_median_s'])} {_ms(c['forward_median_s'])} {_ms(c['backward_median_s'])}"
            f" {_ms(c['optimizer_median_s'])} {peak_gib:8.2f}  {kernels}")


def summary_table(cases: list[dict]) -> str:
    """One line per case: step / forward / backward / optimizer ms, peak GiB, kernels per phase."""
    head = (f"{'network':20s} {'prec':8s} {'batch':>5s} {'step_ms':>9s} {'fwd_ms':>9s} {'bwd_ms':>9s}"
            f" {'opt_ms':>9s} {'peak_GiB':>8s}  kernels f/b/o")
    n_err = sum(1 for c in cases if c.get("error"))
    return "\n".join([head, *(summary_line(c) for c in cases), f"{len(cases)} cases, {n_err} with errors"])


def print_summaries(root: str) -> None:
    """Summary table over every training.json under root (one per network process)."""
    import json

    cases = []
    for path in sorted(Path(root).rglob("training.json")):
        cases += json.loads(path.read_text()).get("cases", [])
    print(summary_table(cases))


# ----------------------------------------------------------------------------- step clocks
class _EventClock:
    """CUDA events at each mark; durations between consecutive marks after a sync."""

    def __init__(self) -> None:
        self.events: list[Any] = []

    def mark(self) -> None:
        import torch

        ev = torch.cuda.Event(enable_timing=True)
        ev.record()
        self.events.append(ev)

    def intervals_s(self) -> list[float]:
        return [a.elapsed_time(b) * 1e-3 for a, b in zip(self.events, self.events[1:])]


class _HostClock:
    """Dry-run stand-in: perf_counter at each mark."""

    def __init__(self) -> None:
        self.times: list[float] = []

    def mark(self) -> None:
        self.times.append(time.perf_counter())

    def intervals_s(self) -> list[float]:
        return [b - a for a, b in zip(self.times, self.times[1:])]


class _MemoryClock:
    """memory_allocated() at each mark (NaN on the CPU)."""

    def __init__(self) -> None:
        self.bytes: list[float] = []

    def mark(self) -> None:
        import torch

        self.bytes.append(float(torch.cuda.memory_allocated()) if gpu_common.DEVICE == "cuda" else math.nan)


class _NoClock:
    def mark(self) -> None:
        pass


CLOCKS: dict[str, Callable[[], Any]] = {"cuda": _EventClock, "cpu": _HostClock}


@contextlib.contextmanager
def phase(name: str) -> Iterator[None]:
    """Profiler range and (on CUDA) NVTX range `phase::<name>`."""
    import torch

    label = PHASE_PREFIX + name
    nvtx = gpu_common.DEVICE == "cuda"
    if nvtx:
        torch.cuda.nvtx.range_push(label)
    try:
        with torch.profiler.record_function(label):
            yield
    finally:
        if nvtx:
            torch.cuda.nvtx.range_pop()


# ----------------------------------------------------------------------------- one training step
class Trainer:
    """Model, inputs, fixed target, optimizer and scaler of one case; `step(clock)` runs one step."""

    def __init__(self, model: Any, inputs: tuple, mode: PrecisionMode, optimizer: str):
        import torch

        self.model, self.inputs, self.mode = model, inputs, mode
        self.device = gpu_common.DEVICE
        self.autocast_dtype = getattr(torch, mode.autocast or "float16")
        self.optimizer, self.optimizer_kwargs = make_optimizer(model, optimizer)
        self.scaler = torch.amp.GradScaler(self.device, enabled=mode.grad_scaler)
        with torch.no_grad(), self._autocast():
            shape = model(*inputs).shape
        g = torch.Generator().manual_seed(1)
        self.target = torch.randn(tuple(shape), generator=g).to(self.device)
        self.loss: Any = None

    def _autocast(self, cache: bool = True) -> Any:
        import torch

        return torch.autocast(device_type=self.device, dtype=self.autocast_dtype, enabled=bool(self.mode.autocast),
                              cache_enabled=cache)

    def step(self, clock: Any, sync_phases: bool = False) -> None:
        """One step; ``sync_phases`` synchronizes inside each phase's range before it closes, so every
        kernel of a phase runs within that range's CPU interval (the profiled step's attribution)."""
        import torch

        end = sync if sync_phases else (lambda: None)
        clock.mark()
        with phase("forward"):
            with self._autocast():
                out = self.model(*self.inputs)
            loss = torch.nn.functional.mse_loss(out.float(), self.target)
            end()
        clock.mark()
        with phase("backward"):
            self.scaler.scale(loss).backward()
            end()
        clock.mark()
        with phase("optimizer"):
            self.scaler.step(self.optimizer)
            self.scaler.update()
            self.optimizer.zero_grad(set_to_none=True)
            end()
        clock.mark()
        self.loss = loss.detach()

    def timed_step(self) -> tuple[list[float], float]:
        """(forward, backward, optimizer, step) seconds of one synchronized step, and its host wall time."""
        clock = CLOCKS[self.device]()
        t0 = time.perf_counter()
        self.step(clock)
        sync()
        wall_s = time.perf_counter() - t0
        parts = clock.intervals_s()
        return [*parts, sum(parts)], wall_s


def make_optimizer(model: Any, name: str, capturable: bool = False) -> tuple[Any, dict]:
    """torch.optim optimizer from OPTIMIZERS (fused only on CUDA) and the kwargs used; ``capturable``
    keeps its step counters on the device so a CUDA graph can hold the step."""
    import torch

    spec = dict(OPTIMIZERS[name])
    cls = getattr(torch.optim, spec.pop("cls"))
    if "fused" in spec:
        spec["fused"] = spec["fused"] and gpu_common.DEVICE == "cuda"
    if capturable and gpu_common.DEVICE == "cuda":
        spec["capturable"] = True
    return cls(model.parameters(), **spec), spec


def tensor_bytes(tensors: Any) -> int:
    return sum(t.numel() * t.element_size() for t in tensors)


def optimizer_state_bytes(optimizer: Any) -> int:
    import torch

    return tensor_bytes(v for st in optimizer.state.values() for v in st.values() if isinstance(v, torch.Tensor))


# ----------------------------------------------------------------------------- measurements
def measure_steps(tr: Trainer, res: TrainingCaseResult, opts: TrainingOptions, budget: Budget) -> None:
    """Timed steps: per-phase medians and step spread."""
    (_, _, _, est_s), _ = tr.timed_step()
    room_s = min(opts.case_budget_s, max(budget.left_s(), 0.0))
    res.n_steps = _clamp(room_s / max(est_s, 1e-9), opts.min_steps, opts.max_steps)
    rows, walls = zip(*(tr.timed_step() for _ in range(res.n_steps)))
    for i, name in enumerate((*PHASES, "step")):
        setattr(res, f"{name}_median_s", summarize([r[i] for r in rows])["median_s"])
    st = summarize([r[3] for r in rows])
    res.step_p10_s, res.step_p90_s = st["p10_s"], st["p90_s"]
    res.step_wall_median_s = summarize(walls)["median_s"]


def _timing_event() -> Any:
    """A timing CUDA event that a graph capture records as its own node (None where torch lacks it)."""
    import torch

    try:
        return torch.cuda.Event(enable_timing=True, external=True)
    except TypeError:
        return None


def measure_graph(tr: Trainer, res: TrainingCaseResult, n: int) -> None:
    """GPU time of the whole step captured in one CUDA graph (forward, loss, backward, optimizer with a
    capturable copy of the optimizer; autocast without its weight-cast cache, as capture needs), replays
    timed with CUDA events, median of ``n``; phase times from event nodes inside the graph where torch
    records them. The GPU time the predictor predicts; eager medians above include host dispatch."""
    import torch

    opt, _ = make_optimizer(tr.model, res.optimizer, capturable=True)
    scaler = torch.amp.GradScaler(tr.device, enabled=tr.mode.grad_scaler)
    marks = [_timing_event() for _ in range(4)] if tr.device == "cuda" else [None] * 4

    def mark(i: int) -> None:
        if marks[i] is not None:
            marks[i].record()

    def fn() -> None:
        opt.zero_grad(set_to_none=True)
        mark(0)
        with tr._autocast(cache=False):
            out = tr.model(*tr.inputs)
        loss = torch.nn.functional.mse_loss(out.float(), tr.target)
        mark(1)
        scaler.scale(loss).backward()
        mark(2)
        scaler.step(opt)
        scaler.update()
        mark(3)

    try:
        graph, _ = gpu_common.capture_graph(fn)
        res.step_graph_median_s = summarize(gpu_common.time_each(graph.replay, n))["median_s"]
        res.n_graph_replays = n
        if all(m is not None for m in marks):
            phases: list[list[float]] = [[], [], []]
            for _ in range(max(5, n // 2)):
                graph.replay()
                sync()
                for i in range(3):
                    phases[i].append(marks[i].elapsed_time(marks[i + 1]) * 1e-3)
            for name, ts in zip(PHASES, phases):
                setattr(res, f"graph_{name}_median_s", summarize(ts)["median_s"])
        del graph
    finally:
        tr.model.zero_grad(set_to_none=True)
        opt = None  # noqa: F841 - drop the capturable optimizer's state with the graph


def measure_memory(tr: Trainer, res: TrainingCaseResult) -> None:
    """Peak / step-start / after-backward allocated bytes of one step (NaN on the CPU)."""
    import torch

    params = list(tr.model.parameters())
    res.n_params = sum(p.numel() for p in params)
    res.param_bytes = tensor_bytes(params)
    res.optimizer_state_bytes = optimizer_state_bytes(tr.optimizer)
    if gpu_common.DEVICE != "cuda":
        return
    sync()
    torch.cuda.reset_peak_memory_stats()
    clock = _MemoryClock()
    tr.step(clock)
    sync()
    res.peak_allocated_bytes = float(torch.cuda.max_memory_allocated())
    res.allocated_step_start_bytes, res.allocated_after_backward_bytes = clock.bytes[0], clock.bytes[2]


def _phase_intervals(events: list[Any]) -> list[tuple[float, float, str]]:
    return [(fe.time_range.start, fe.time_range.end, fe.name) for fe in events if fe.name.startswith(PHASE_PREFIX)]


def _phase_at(op: Any, intervals: list[tuple[float, float, str]]) -> str | None:
    """Phase whose CPU interval contains op's start (for ops on another thread than the ranges)."""
    return None if op is None else _interval_at(op.time_range.start, intervals)


def _interval_at(t: float, intervals: list[tuple[float, float, str]]) -> str | None:
    """Name of the first interval holding time ``t``."""
    return next((name for lo, hi, name in intervals if lo <= t <= hi), None)


def phase_kernels(prof: Any) -> dict[str, tuple[int, float]]:
    """{phase: (kernel count, summed kernel us)} plus 'unattributed' and 'memops' of a profiled step.

    The profiled step synchronizes at the end of each phase range (Trainer.step(sync_phases=True)), so a
    kernel belongs to the phase whose CPU interval holds its GPU start. Kernels outside every interval
    fall back to the range enclosing their launching CPU op.
    """
    from calibration.networks.kernel_table import device_events, is_memop

    out = {p: [0, 0.0] for p in (*PHASES, "unattributed", "memops")}
    for fe, phase_name in zip(device_events(prof), kernel_phases(prof)):
        key = "memops" if is_memop(fe.name) else (phase_name or "unattributed")
        out[key][0] += 1
        out[key][1] += fe.time_range.elapsed_us()
    return {k: (n, us) for k, (n, us) in out.items()}


def kernel_phases(prof: Any) -> list[str]:
    """The phase of each GPU activity of a profiled step (device_events' order): the phase range holding its GPU
    start, else the range enclosing its launching CPU op, else the range holding that op's start; '' for none."""
    from calibration.networks.kernel_table import device_events, enclosing_range, launched_kernels

    intervals = _phase_intervals(list(prof.events()))
    launched = {id(fe): op for fe, (op, *_rest) in zip(device_events(prof), launched_kernels(prof))}
    out = []
    for fe in device_events(prof):
        rng = _interval_at(fe.time_range.start, intervals)
        if rng is None:
            op = launched.get(id(fe))
            rng = enclosing_range(op, PHASE_PREFIX) or _phase_at(op, intervals)
        out.append(rng[len(PHASE_PREFIX):] if rng else "")
    return out


def profile_step(tr: Trainer, res: TrainingCaseResult) -> None:
    """Kernel count and summed kernel time per phase from one profiled step."""
    from torch.profiler import ProfilerActivity, profile

    sync()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        tr.step(_NoClock(), sync_phases=True)
        sync()
    per_phase = phase_kernels(prof)
    for p in PHASES:
        n, us = per_phase[p]
        setattr(res, f"n_kernels_{p}", n)
        setattr(res, f"kernel_sum_{p}_s", us * 1e-6)
    res.n_kernels_unattributed, res.n_memops = per_phase["unattributed"][0], per_phase["memops"][0]


def run_case(model: Any, spec: zoo.NetworkSpec, precision: str, batch: int, opts: TrainingOptions,
             budget: Budget) -> TrainingCaseResult:
    """Warm-up, timed steps, profiled step and memory step of one case (never raises)."""
    t_case = time.perf_counter()
    mode = PRECISION_MODES[precision]
    res = TrainingCaseResult(spec.name, precision, batch, spec.split, spec.family, opts.optimizer,
                     autocast_dtype=mode.autocast, grad_scaler=mode.grad_scaler)
    stage, tr = "setup", None
    try:
        res.flags = gpu_common.set_precision_flags(mode.flags)
        tr = Trainer(model, zoo.make_inputs(spec, batch, "fp32", gpu_common.DEVICE), mode, opts.optimizer)
        res.optimizer_kwargs, res.output_shape = tr.optimizer_kwargs, list(tr.target.shape)
        stage = "warmup"
        for _ in range(opts.warmup):
            tr.step(_NoClock())
        sync()
        stage = "timing"
        measure_steps(tr, res, opts, budget)
        stage = "memory"
        measure_memory(tr, res)
        res.final_loss = float(tr.loss)
        res.final_grad_scale = float(tr.scaler.get_scale()) if mode.grad_scaler else math.nan
        if opts.profile:
            try:
                profile_step(tr, res)
            except Exception as exc:  # noqa: BLE001 - timings stay valid without kernel counts
                res.profile_error = _short(exc)
    except Exception as exc:  # noqa: BLE001
        res.error = f"[{stage}] {_short(exc)}"
    finally:
        del tr
        _release(model)
    res.wall_s = round(time.perf_counter() - t_case, 2)
    return res


def _release(model: Any) -> None:
    """Drop a case's gradients and cached device memory before the next case."""
    import torch

    model.zero_grad(set_to_none=True)
    gc.collect()
    if gpu_common.DEVICE == "cuda":
        torch.cuda.empty_cache()


def graph_case(model: Any, spec: zoo.NetworkSpec, res: TrainingCaseResult, opts: TrainingOptions) -> None:
    """The CUDA-graph step of a case measured eagerly before (never raises; failures in graph_error).

    Run after every eager case of the network: a captured step keeps some device memory until the process
    ends, which would inflate the allocator peaks of later cases."""
    tr = None
    try:
        gpu_common.set_precision_flags(PRECISION_MODES[res.precision].flags)
        tr = Trainer(model, zoo.make_inputs(spec, res.batch, "fp32", gpu_common.DEVICE),
                     PRECISION_MODES[res.precision], opts.optimizer)
        tr.step(_NoClock())
        measure_graph(tr, res, opts.graph_replays)
    except Exception as exc:  # noqa: BLE001 - eager timings stay valid without the graph
        res.graph_error = _short(exc)
    finally:
        del tr
        _release(model)


def _skipped(name: str, opts: TrainingOptions, why: str) -> list[TrainingCaseResult]:
    spec = zoo.NETWORKS[name]
    return [TrainingCaseResult(name, p, b, spec.split, spec.family, opts.optimizer, error=why)
            for p in opts.precisions for b in case_batches(spec, opts)]


def run_network(name: str, opts: TrainingOptions, budget: Budget, emit: Callable[[TrainingCaseResult], None]) -> None:
    """All precisions x batches of one network; emit(result) after each case."""
    spec = zoo.NETWORKS[name]
    try:
        model, _, _ = zoo.build(name, 1, "fp32", gpu_common.DEVICE)
        model = prepare_module(model.train(), "fp32")
    except Exception as exc:  # noqa: BLE001
        for r in _skipped(name, opts, f"[build] {_short(exc)}"):
            emit(r)
        return
    done: list[TrainingCaseResult] = []
    for precision in opts.precisions:
        for batch in case_batches(spec, opts):
            if budget.over():
                emit(TrainingCaseResult(name, precision, batch, spec.split, spec.family, opts.optimizer,
                                error="skipped: over budget"))
                continue
            res = run_case(model, spec, precision, batch, opts, budget)
            emit(res)
            if not res.error:
                done.append(res)
    for res in done if opts.graph else ():  # second pass: CUDA graphs after every eager (memory) case
        if budget.over():
            res.graph_error = "skipped: over budget"
        else:
            graph_case(model, spec, res, opts)
        emit(res)
    del model
    gc.collect()


def run(opts: TrainingOptions, command: str = "") -> dict:
    path, budget, doc = start_sweep(opts, "training.json", command)
    if doc.get("error"):
        return doc

    index: dict[int, int] = {}
    kept: list[TrainingCaseResult] = []  # keeps every recorded result alive, so that no id is reused

    def emit(res: TrainingCaseResult) -> None:
        """Record a case (again, after its graph pass: the same result replaces its first record)."""
        if id(res) in index:
            doc["cases"][index[id(res)]] = asdict(res)
        else:
            index[id(res)] = len(doc["cases"])
            kept.append(res)
            doc["cases"].append(asdict(res))
        doc["elapsed_s"] = round(budget.elapsed_s(), 1)
        write_json(path, doc)

    for name in opts.names:
        t0 = time.perf_counter()
        n0 = len(doc["cases"])
        try:
            run_network(name, opts, budget, emit)
        except Exception as exc:  # noqa: BLE001 - belt and braces: the sweep must go on
            emit(TrainingCaseResult(name, "?", 0, error=f"[network] {_short(exc)}"))
        errors = sum(1 for c in doc["cases"][n0:] if c["error"])
        print(f"  {name:28s} {time.perf_counter() - t0:6.1f}s  errors: {errors}/{len(doc['cases']) - n0}",
              flush=True)
    doc["finished_utc"] = utc_now()
    write_json(path, doc)
    return doc


# ----------------------------------------------------------------------------- CLI
def _ints(arg: str) -> tuple[int, ...]:
    return tuple(int(t) for t in arg.split(",") if t.strip())


def _tokens(arg: str) -> tuple[str, ...]:
    return tuple(t.strip() for t in arg.split(",") if t.strip())


def parse_args(argv: list[str] | None = None) -> TrainingOptions:
    p = argparse.ArgumentParser(prog="python3 -m calibration.training.measure", description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True)
    p.add_argument("--names", default="", help="comma list, or train/heldout/all (default: the training sweep)")
    p.add_argument("--precisions", default=",".join(PRECISION_MODES))
    p.add_argument("--batches", default="", help="comma list (default: per family, see default_batches)")
    p.add_argument("--optimizer", default="adamw", choices=sorted(OPTIMIZERS))
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--min-steps", type=int, default=5)
    p.add_argument("--max-steps", type=int, default=20)
    p.add_argument("--case-budget-s", type=float, default=1.0, help="target seconds of timed steps per case")
    p.add_argument("--max-seconds", type=float, default=0.0, help="stop cleanly after this (0 = no limit)")
    p.add_argument("--no-profile", action="store_true", help="skip the profiled step (no kernel counts)")
    p.add_argument("--no-graph", action="store_true", help="skip the CUDA-graph step (no step_graph_median_s)")
    p.add_argument("--graph-replays", type=int, default=20)
    p.add_argument("--dry-run-cpu", action="store_true", help="exercise the code on CPU (numbers meaningless)")
    a = p.parse_args(argv)
    gpu_common.use_device("cpu" if a.dry_run_cpu else "cuda")
    precisions = _tokens(a.precisions)
    bad = [x for x in precisions if x not in PRECISION_MODES]
    if bad:
        p.error(f"unknown precision(s) {bad}; known: {', '.join(PRECISION_MODES)}")
    try:
        names = tuple(zoo.parse_names(a.names)) if a.names else DEFAULT_NAMES
    except KeyError as exc:
        p.error(str(exc))
    return TrainingOptions(out_dir=a.out, names=names, precisions=precisions, batches=_ints(a.batches),
                           optimizer=a.optimizer, warmup=a.warmup, min_steps=min(a.min_steps, a.max_steps),
                           max_steps=a.max_steps, case_budget_s=a.case_budget_s, max_seconds=a.max_seconds,
                           profile=not a.no_profile, graph=not a.no_graph, graph_replays=max(a.graph_replays, 3))


def main(argv: list[str] | None = None) -> int:
    import warnings

    warnings.filterwarnings("ignore")
    opts = parse_args(argv)
    print(f"training {len(opts.names)} networks x {len(opts.precisions)} precisions -> {opts.out_dir}", flush=True)
    return report_sweep(run(opts, command_line("calibration.training.measure", argv)), summary_table)


if __name__ == "__main__":
    sys.exit(main())
