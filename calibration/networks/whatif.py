"""What-if GPU measurements: mixed precision (autocast) and torch.compile (inductor) on the zoo networks.

    python3 -m calibration.networks.whatif --out DIR --names a,b
        --modes amp,amp_bf16,inductor_fp16,inductor_fp32 [--batches 1,32] [--max-seconds 300] [--dry-run-cpu]

Modes (protocol of timing.py: cudnn.benchmark on, inference mode, eager events + CUDA-graph replays,
median of up to 50 replays x 3 repeats, profiler kernel program of eager vs replay):
  * amp / amp_bf16: fp32 module and inputs, forward under torch.autocast(dtype=float16 / bfloat16), TF32 off;
  * inductor_fp16 / inductor_fp32: module cast as timing.py (fp16 = half, fp32 = TF32 off), then
    torch.compile(mode='default', dynamic=False); the first call (compilation) gives compile_s, then
    the compiled callable is captured in a CUDA graph and timed like timing.py. If the capture fails,
    the reference is the event time of eager calls of the compiled module. The uncompiled module is
    timed just before in the same process: baseline_time_s and speedup = baseline / compiled.
Errors are recorded per case and the sweep goes on; past --max-seconds cases are `skipped: over budget`.
Writes DIR/whatif.json (rewritten after each case) and prints a summary table.
"""
from __future__ import annotations

import argparse
import gc
import math
import sys
import time
import traceback
from dataclasses import asdict, dataclass
from typing import Any

from . import gpu_common, timing, zoo
from .gpu_common import Budget, sync, utc_now
from .timing import TimingCaseResult, TimingOptions, _short

MODES = ("amp", "amp_bf16", "inductor_fp16", "inductor_fp32")
AMP_DTYPES = {"amp": "fp16", "amp_bf16": "bf16"}
INDUCTOR_PRECISIONS = {"inductor_fp16": "fp16", "inductor_fp32": "fp32"}
DYNAMO_CACHE_LIMIT = 16       # two batch sizes per compiled module, with room for guard failures


@dataclass
class WhatIfResult(TimingCaseResult):
    """A timing.TimingCaseResult (precision = mode name) plus compile and baseline data; times in seconds."""

    mode: str = ""
    compile_s: float = math.nan               # wall time of the first (compiling) call
    n_dynamo_graphs: int = -1                 # graphs dynamo compiled in that call (0: nothing compiled)
    baseline_time_s: float = math.nan         # reference time of the uncompiled module, same protocol
    baseline_source: str = ""
    baseline_error: str = ""
    speedup: float = math.nan                 # baseline_time_s / reference_time_s


@dataclass(frozen=True)
class WhatIfOptions:
    out_dir: str
    names: tuple[str, ...]
    modes: tuple[str, ...] = MODES
    batches: tuple[int, ...] = (1, 32)
    max_seconds: float = 0.0
    warmup: int = 3
    replays: int = 50
    repeats: int = 3
    eager_iters: int = 30
    case_budget_s: float = 3.0

    def timing_options(self) -> TimingOptions:
        """The timing.py options used for every case (no kernel rows)."""
        return TimingOptions(out_dir=self.out_dir, names=self.names, batches=self.batches, warmup=self.warmup,
                             replays=self.replays, min_replays=min(10, self.replays), repeats=self.repeats,
                             eager_iters=self.eager_iters, min_eager_iters=min(5, self.eager_iters),
                             case_budget_s=self.case_budget_s, max_seconds=self.max_seconds, kernel_rows=False)


def _module_classes():
    """nn.Module wrappers, defined lazily so that this file imports without torch."""
    import torch

    class Autocast(torch.nn.Module):
        """Runs the wrapped module under torch.autocast on the current device."""

        def __init__(self, model: Any, dtype: Any):
            super().__init__()
            self.model, self.dtype = model, dtype

        def forward(self, *args: Any) -> Any:
            with torch.autocast(gpu_common.DEVICE, dtype=self.dtype):
                return self.model(*args)

    class Opaque(torch.nn.Module):
        """Calls a function that is hidden from named_modules (no profiler hooks inside compiled code)."""

        def __init__(self, fn: Any):
            super().__init__()
            self._fn = [fn]

        def forward(self, *args: Any) -> Any:
            return self._fn[0](*args)

    return Autocast, Opaque


def configure_dynamo() -> None:
    """Cache limit for two batch sizes per network (name differs between torch versions)."""
    import torch._dynamo

    for key in ("cache_size_limit", "recompile_limit"):
        if hasattr(torch._dynamo.config, key):
            setattr(torch._dynamo.config, key, DYNAMO_CACHE_LIMIT)


def measure(model: Any, spec: zoo.NetworkSpec, precision: str, batch: int, topts: TimingOptions) -> TimingCaseResult:
    """One case with the timing.py protocol: prepare, `repeats` replay measurements, finish."""
    case = timing.prepare_case(model, spec, precision, batch, topts)
    timing.capture_case(case, topts)
    for _ in range(topts.repeats):
        timing.time_replays(case)
    timing.profile_replay(case)
    return timing.finish_case(case)


def _as_whatif(res: TimingCaseResult, mode: str) -> WhatIfResult:
    out = WhatIfResult(**asdict(res))
    out.precision, out.mode = mode, mode
    return out


def _skipped(spec: zoo.NetworkSpec, mode: str, batch: int, error: str) -> WhatIfResult:
    return WhatIfResult(spec.name, mode, batch, spec.split, spec.family, mode=mode, error=error)


def run_amp(base: Any, spec: zoo.NetworkSpec, mode: str, batch: int, topts: TimingOptions) -> WhatIfResult:
    """fp32 module + fp32 inputs under autocast (fp32 flags: TF32 off)."""
    autocast_cls, _ = _module_classes()
    model = autocast_cls(base, zoo.torch_dtype(AMP_DTYPES[mode]))
    return _as_whatif(measure(model, spec, "fp32", batch, topts), mode)


def _dynamo_graphs() -> int:
    from torch._dynamo.utils import counters

    return int(counters["stats"]["unique_graphs"])


def compile_first_call(compiled: Any, spec: zoo.NetworkSpec, precision: str, batch: int) -> tuple[float, int]:
    """(wall seconds, dynamo graphs compiled) of the first call of the compiled module for this shape."""
    import torch

    gpu_common.set_precision_flags(precision)
    inputs = zoo.make_inputs(spec, batch, precision, gpu_common.DEVICE)
    n0, t0 = _dynamo_graphs(), time.perf_counter()
    with torch.inference_mode():
        compiled(*inputs)
    sync()
    return time.perf_counter() - t0, _dynamo_graphs() - n0


def run_inductor(model: Any, compiled: Any, spec: zoo.NetworkSpec, mode: str, batch: int,
                 topts: TimingOptions) -> WhatIfResult:
    """Baseline (uncompiled) then compiled case of one batch; speedup from the two reference times."""
    precision = INDUCTOR_PRECISIONS[mode]
    base_res = measure(model, spec, precision, batch, topts)
    t0 = time.perf_counter()
    try:
        compile_s, n_graphs = compile_first_call(compiled, spec, precision, batch)
    except Exception as exc:  # noqa: BLE001
        res = _skipped(spec, mode, batch, f"[compile] {_short(exc)}")
        res.compile_s = time.perf_counter() - t0
    else:
        _, opaque_cls = _module_classes()
        res = _as_whatif(measure(opaque_cls(compiled), spec, precision, batch, topts), mode)
        res.compile_s, res.n_dynamo_graphs = round(compile_s, 2), n_graphs
        if res.graph_error and not res.error and math.isfinite(res.eager_median_s):
            res.reference_time_s, res.reference_source = res.eager_median_s, "compiled_eager_events"
    res.baseline_time_s, res.baseline_source = base_res.reference_time_s, base_res.reference_source
    res.baseline_error = base_res.error or base_res.graph_error
    if math.isfinite(res.reference_time_s) and res.reference_time_s > 0:
        res.speedup = res.baseline_time_s / res.reference_time_s
    return res


def _prepare_mode_module(base: Any, mode: str) -> tuple[Any, Any]:
    """(module, compiled or None) of one mode."""
    import torch

    if mode in AMP_DTYPES:
        return base, None
    model = timing.prepare_module(base, INDUCTOR_PRECISIONS[mode])
    return model, torch.compile(model, mode="default", dynamic=False)


def run_mode(base: Any, spec: zoo.NetworkSpec, mode: str, opts: WhatIfOptions, budget: Budget,
             on_case: Any) -> list[WhatIfResult]:
    """All batches of one mode of one network (never raises)."""
    topts = opts.timing_options()
    try:
        model, compiled = _prepare_mode_module(base, mode)
    except Exception as exc:  # noqa: BLE001
        return [on_case(_skipped(spec, mode, b, f"[cast] {_short(exc)}")) for b in opts.batches]
    results = []
    for batch in opts.batches:
        t0 = time.perf_counter()
        if budget.over():
            res = _skipped(spec, mode, batch, "skipped: over budget")
        elif compiled is None:
            res = run_amp(model, spec, mode, batch, topts)
        else:
            res = run_inductor(model, compiled, spec, mode, batch, topts)
        res.wall_s = round(time.perf_counter() - t0, 2)
        results.append(on_case(res))
    return results


def _free_memory() -> None:
    import torch

    gc.collect()
    if gpu_common.DEVICE == "cuda":
        torch.cuda.empty_cache()


def run_network(name: str, opts: WhatIfOptions, budget: Budget, on_case: Any) -> list[WhatIfResult]:
    """All modes x batches of one network; dynamo state reset before and after."""
    import torch._dynamo

    spec = zoo.NETWORKS[name]
    torch._dynamo.reset()
    try:
        base, _, _ = zoo.build(name, 1, "fp32", gpu_common.DEVICE)
        base = timing.prepare_module(base, "fp32")
    except Exception as exc:  # noqa: BLE001
        return [on_case(_skipped(spec, m, b, f"[build] {_short(exc)}")) for m in opts.modes for b in opts.batches]
    results = []
    for mode in opts.modes:
        results += run_mode(base, spec, mode, opts, budget, on_case)
        torch._dynamo.reset()
        _free_memory()
    del base
    _free_memory()
    return results


def run(opts: WhatIfOptions, command: str = "") -> dict:
    """The whole sweep; DIR/whatif.json rewritten after each case."""
    path, budget, doc = timing.start_sweep(opts, "whatif.json", command)
    if doc.get("error"):
        return doc
    configure_dynamo()

    def on_case(res: WhatIfResult) -> WhatIfResult:
        doc["cases"].append(asdict(res))
        doc["elapsed_s"] = round(budget.elapsed_s(), 1)
        timing.write_json(path, doc)
        return res

    for name in opts.names:
        t0 = time.perf_counter()
        try:
            results = run_network(name, opts, budget, on_case)
        except Exception as exc:  # noqa: BLE001 - the sweep must go on
            results = [on_case(WhatIfResult(name, "?", 0, error=f"[network] {_short(exc)}: "
                                                                f"{traceback.format_exc()[-300:]}"))]
        print(f"  {name:28s} {time.perf_counter() - t0:6.1f}s  errors: "
              f"{sum(1 for r in results if r.error)}/{len(results)}", flush=True)
    doc["finished_utc"] = utc_now()
    doc["elapsed_s"] = round(budget.elapsed_s(), 1)
    timing.write_json(path, doc)
    return doc


def _ms(x: Any) -> str:
    return f"{x * 1e3:10.3f}" if isinstance(x, (int, float)) and math.isfinite(x) else f"{'-':>10s}"


def _num(x: Any, fmt: str, width: int) -> str:
    return format(x, fmt) if isinstance(x, (int, float)) and math.isfinite(x) else "-".rjust(width)


def summary_table(cases: list[dict]) -> str:
    """One line per case: network, mode, batch, time ms, baseline ms, speedup, kernels, compile s."""
    head = (f"{'network':22s} {'mode':14s} {'batch':>5s} {'time_ms':>10s} {'base_ms':>10s} {'speedup':>7s} "
            f"{'kern':>5s} {'compile_s':>9s}  note")
    lines = [head]
    for c in cases:
        kern = c.get("n_kernels_replay") or c.get("n_kernels_eager") or 0
        note = c.get("error") or (c.get("reference_source", "") + (" (graph failed)" if c.get("graph_error") else "")
                                  + (" (dynamo compiled nothing)" if c.get("n_dynamo_graphs") == 0 else ""))
        lines.append(f"{c['network'][:22]:22s} {c.get('mode') or c['precision']:14s} {c['batch']:5d} "
                     f"{_ms(c.get('reference_time_s'))} {_ms(c.get('baseline_time_s'))} "
                     f"{_num(c.get('speedup'), '7.2f', 7)} {kern:5d} {_num(c.get('compile_s'), '9.1f', 9)}  "
                     f"{note[:60]}")
    n_err = sum(1 for c in cases if c.get("error"))
    lines.append(f"{len(cases)} cases, {n_err} with errors; speedup = uncompiled / compiled reference time")
    return "\n".join(lines)


def _ints(arg: str) -> tuple[int, ...]:
    return tuple(int(t) for t in arg.split(",") if t.strip())


def parse_args(argv: list[str] | None = None) -> WhatIfOptions:
    p = argparse.ArgumentParser(prog="python3 -m calibration.networks.whatif", description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True)
    p.add_argument("--names", default="heldout", help="comma list, or train/heldout/all (default: heldout)")
    p.add_argument("--modes", default=",".join(MODES))
    p.add_argument("--batches", default="1,32")
    p.add_argument("--max-seconds", type=float, default=0.0, help="later cases skipped after this (0 = no limit)")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--replays", type=int, default=50)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--eager-iters", type=int, default=30)
    p.add_argument("--case-budget-s", type=float, default=3.0, help="target timing seconds per case")
    p.add_argument("--dry-run-cpu", action="store_true", help="exercise the code on CPU (numbers meaningless)")
    a = p.parse_args(argv)
    modes = tuple(t.strip() for t in a.modes.split(",") if t.strip())
    bad = [m for m in modes if m not in MODES]
    if bad or not modes:
        p.error(f"unknown mode(s) {bad}; known: {', '.join(MODES)}")
    try:
        names = tuple(zoo.parse_names(a.names))
    except KeyError as exc:
        p.error(str(exc))
    gpu_common.use_device("cpu" if a.dry_run_cpu else "cuda")
    return WhatIfOptions(out_dir=a.out, names=names, modes=modes, batches=_ints(a.batches),
                         max_seconds=a.max_seconds, warmup=a.warmup, replays=a.replays, repeats=a.repeats,
                         eager_iters=a.eager_iters, case_budget_s=a.case_budget_s)


def main(argv: list[str] | None = None) -> int:
    import warnings

    warnings.filterwarnings("ignore")
    opts = parse_args(argv)
    print(f"whatif {len(opts.names)} networks x {len(opts.modes)} modes x {len(opts.batches)} batches "
          f"-> {opts.out_dir} (device {gpu_common.DEVICE})", flush=True)
    return timing.report_sweep(run(opts, timing.command_line("calibration.networks.whatif", argv)), summary_table)


if __name__ == "__main__":
    sys.exit(main())
