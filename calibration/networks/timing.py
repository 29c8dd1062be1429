"""Reference GPU runtime of the zoo networks (PyTorch eager + CUDA-graph replay) on one GPU.

    python3 -m calibration.networks.timing --out DIR [--names a,b] [--precisions fp32,tf32,fp16,bf16]
        [--batches 1,32] [--max-seconds 420]

Protocol per (network, precision, batch), inference mode, cudnn.benchmark on:
  * fp32 = TF32 off for cuBLAS and cuDNN, tf32 = both on, fp16/bf16 = module.to(dtype), float inputs cast;
  * eager: events around each forward (sync between forwards; includes host dispatch) and host wall time;
  * CUDA graph of one forward (side-stream warm-up first), captured after the eager profiles of every batch of the
    precision, its static inputs kept alive until the case is finished (until 2026-12-04 they were freed after the
    capture: replays read a freed buffer, the likely cause of illegal memory accesses for some networks); each replay
    timed with its own events;
    `repeats` (3) measurements of `replays` replays, interleaved between the batches of a precision;
  * torch.profiler: one eager forward (per-kernel rows with module path / aten op / shapes) and, after the timed
    replays, one
    replay; if their kernel programs differ (count by > 2 % or kernel-name sets), `program_differs`
    and reference_time_s = eager summed kernel time + 0.45 us x eager kernel count, else the median
    of the replay medians.
Heavy cases get fewer replays (never fewer than --min-replays) so the sweep stays in budget; the
counts used are recorded. Errors (OOM, capture failures) are recorded per case and the sweep goes on.
Writes DIR/timing.json (rewritten after each network) and DIR/kernels.csv.gz (appended per case).
"""
from __future__ import annotations

import argparse
import copy
import csv
import gc
import gzip
import io
import json
import math
import sys
import time
import traceback
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

from . import zoo
from . import gpu_common
from .gpu_common import REFERENCE_LAUNCH_S, Budget, environment, summarize, sync, utc_now

KERNEL_COLUMNS = ("network", "precision", "batch", "kernel_idx", "kernel_name", "duration_us", "start_us",
                  "module_path", "aten_op", "leaf_op", "input_shapes", "source")
COUNT_TOLERANCE = 0.02


@dataclass(frozen=True)
class TimingOptions:
    out_dir: str
    names: tuple[str, ...]
    precisions: tuple[str, ...] = zoo.PRECISIONS
    batches: tuple[int, ...] = (1, 32)
    warmup: int = 3
    replays: int = 50
    min_replays: int = 10
    repeats: int = 3
    eager_iters: int = 30
    min_eager_iters: int = 5
    case_budget_s: float = 3.0       # target GPU time of eager + replay timing of one case
    max_seconds: float = 0.0
    kernel_rows: bool = True


@dataclass
class TimingCaseResult:
    """One (network, precision, batch) measurement; times in seconds."""

    network: str
    precision: str
    batch: int
    split: str = ""
    family: str = ""
    flags: dict = field(default_factory=dict)
    replay_medians_s: list = field(default_factory=list)
    replay_p10_s: list = field(default_factory=list)
    replay_p90_s: list = field(default_factory=list)
    replay_median_s: float = math.nan          # median of the repeat medians
    n_replays: int = 0
    eager_median_s: float = math.nan           # events around each eager forward (incl. host dispatch)
    eager_p10_s: float = math.nan
    eager_p90_s: float = math.nan
    eager_host_median_s: float = math.nan      # host wall time inside the eager call
    n_eager: int = 0
    n_kernels_eager: int = 0
    n_kernels_replay: int = 0
    n_memops_eager: int = 0
    kernel_sum_eager_s: float = math.nan
    kernel_sum_replay_s: float = math.nan
    program_differs: bool | None = None
    differs_reason: str = ""
    reference_time_s: float = math.nan
    reference_source: str = ""
    graph_error: str = ""
    profile_error: str = ""
    error: str = ""
    wall_s: float = 0.0


def _short(exc: BaseException, limit: int = 500) -> str:
    msg = f"{type(exc).__name__}: {exc}"
    return msg if len(msg) <= limit else msg[:limit] + " ..."


def _clamp(x: float, lo: int, hi: int) -> int:
    return int(max(lo, min(hi, x if math.isfinite(x) else hi)))


def prepare_module(model: Any, precision: str) -> Any:
    """Copy/cast for fp16/bf16 and re-flatten RNN weights (avoids a weight copy per call)."""
    import torch

    if precision in ("fp16", "bf16"):
        model = copy.deepcopy(model).to(zoo.torch_dtype(precision))
    for m in model.modules():
        if isinstance(m, torch.nn.RNNBase):
            m.flatten_parameters()
    return model


def _profile(fn: Any, model: Any | None, record_shapes: bool):
    """Profile one call of fn; with a model: CPU ops + module ranges too, else GPU activity only."""
    from torch.profiler import ProfilerActivity, profile

    from .kernel_table import ModuleRanges

    sync()
    gpu_only = model is None and gpu_common.DEVICE == "cuda"
    activities = [ProfilerActivity.CUDA] if gpu_only else [ProfilerActivity.CPU, ProfilerActivity.CUDA]
    with profile(activities=activities, record_shapes=record_shapes) as prof:
        if model is not None:
            with ModuleRanges(model):
                fn()
        else:
            fn()
        sync()
    return prof


def compare_programs(eager_names: list[str], replay_names: list[str]) -> tuple[bool, str]:
    """Whether a graph replay ran a different kernel program than eager (count > 2 % or name sets)."""
    n_e, n_r = len(eager_names), len(replay_names)
    if n_e == 0 or n_r == 0:
        return True, f"empty kernel list (eager {n_e}, replay {n_r})"
    if abs(n_e - n_r) > COUNT_TOLERANCE * n_e:
        return True, f"kernel count eager {n_e} vs replay {n_r}"
    only_e, only_r = set(eager_names) - set(replay_names), set(replay_names) - set(eager_names)
    if only_e or only_r:
        return True, f"names only in eager: {sorted(only_e)[:3]}, only in replay: {sorted(only_r)[:3]}"
    return False, ""


def reference_time(res: TimingCaseResult) -> None:
    """Fill reference_time_s / reference_source from the measured parts."""
    if res.program_differs is False and math.isfinite(res.replay_median_s):
        res.reference_time_s, res.reference_source = res.replay_median_s, "replay_median"
    elif math.isfinite(res.kernel_sum_eager_s) and res.n_kernels_eager > 0:
        res.reference_time_s = res.kernel_sum_eager_s + REFERENCE_LAUNCH_S * res.n_kernels_eager
        res.reference_source = "eager_kernel_sum+launch"
    elif math.isfinite(res.replay_median_s):
        res.reference_time_s, res.reference_source = res.replay_median_s, "replay_median_unverified"


class _Case:
    """State of one case between preparation and the interleaved replay repeats."""

    def __init__(self, res: TimingCaseResult):
        self.res = res
        self.graph: Any = None
        self.n_replays = 0
        self.rows: list[dict] = []
        self.eager_names: list[str] | None = None
        # the forward closure holds the graph's static inputs: it lives as long as the graph (a replay reading a freed
        # input buffer is the likely cause of the illegal memory accesses and, with token ids, device-side asserts)
        self.fwd: Callable[[], Any] | None = None
        self.graph_output: Any = None
        self.est_s = 0.0


def prepare_case(model: Any, spec: zoo.NetworkSpec, precision: str, batch: int, opts: TimingOptions) -> _Case:
    """Eager timing and eager profile of one case (never raises); its CUDA graph is captured by :func:`capture_case`
    once every eager profile of the precision is done, and keeps the forward closure (its static inputs) alive."""
    import torch

    from .gpu_common import set_precision_flags, time_each_synced
    from .kernel_table import is_memop, kernel_rows

    t_case = time.perf_counter()
    res = TimingCaseResult(spec.name, precision, batch, spec.split, spec.family)
    case = _Case(res)
    stage = "inputs"
    try:
        res.flags = set_precision_flags(precision)
        inputs = zoo.make_inputs(spec, batch, precision, gpu_common.DEVICE)

        def fwd():
            return model(*inputs)

        with torch.inference_mode():
            stage = "warmup"
            for _ in range(opts.warmup):
                fwd()
            est_s = min(time_each_synced(fwd, 2)[0])
            stage = "eager"
            res.n_eager = _clamp(opts.case_budget_s / 4 / est_s, opts.min_eager_iters, opts.eager_iters)
            gpu_s, host_s = time_each_synced(fwd, res.n_eager)
            st = summarize(gpu_s)
            res.eager_median_s, res.eager_p10_s, res.eager_p90_s = st["median_s"], st["p10_s"], st["p90_s"]
            res.eager_host_median_s = summarize(host_s)["median_s"]
            stage = "profile_eager"
            try:
                prof = _profile(fwd, model, record_shapes=True)
                rows = kernel_rows(prof)
                del prof
                res.n_kernels_eager = sum(1 for r in rows if not is_memop(r.kernel_name))
                res.n_memops_eager = len(rows) - res.n_kernels_eager
                res.kernel_sum_eager_s = sum(r.duration_us for r in rows) * 1e-6
                case.eager_names = [r.kernel_name for r in rows if not is_memop(r.kernel_name)]
                if opts.kernel_rows:
                    case.rows = [dict(network=spec.name, precision=precision, batch=batch, source="eager",
                                      **asdict(r)) for r in rows]
            except Exception as exc:  # noqa: BLE001 - timings stay valid without the kernel table
                res.profile_error = f"[eager] {_short(exc)}"
        case.fwd, case.est_s = fwd, est_s
    except Exception as exc:  # noqa: BLE001
        res.error = f"[{stage}] {_short(exc)}"
        if "out of memory" in str(exc).lower():
            torch.cuda.empty_cache()
    res.wall_s = round(time.perf_counter() - t_case, 2)
    return case


def capture_case(case: _Case, opts: TimingOptions) -> None:
    """CUDA-graph capture of a prepared case and its warm-up replays (never raises)."""
    import torch

    from .gpu_common import capture_graph

    res = case.res
    if case.fwd is None:
        return
    t0 = time.perf_counter()
    try:
        with torch.inference_mode():
            case.graph, case.graph_output = capture_graph(case.fwd, warmup=opts.warmup)
            for _ in range(opts.warmup):
                case.graph.replay()
            sync()
        case.n_replays = _clamp(opts.case_budget_s / (opts.repeats + 1) / case.est_s, opts.min_replays, opts.replays)
    except Exception as exc:  # noqa: BLE001 - e.g. an op that cannot be captured
        res.graph_error = f"[graph_capture] {_short(exc)}"
        case.graph = None
        res.program_differs = True
        res.differs_reason = "no graph"
    res.wall_s = round(res.wall_s + time.perf_counter() - t0, 2)


def profile_replay(case: _Case) -> None:
    """Kernel program of one replay under torch.profiler, after the case's timed replays (a failure here must not cost
    the timings). Never raises."""
    from .kernel_table import device_events, is_memop

    res = case.res
    if case.graph is None:
        return
    try:
        prof = _profile(case.graph.replay, None, record_shapes=False)
        dev = device_events(prof)
        replay_names = [fe.name[:200] for fe in dev if not is_memop(fe.name)]
        res.n_kernels_replay = len(replay_names)
        res.kernel_sum_replay_s = sum(fe.time_range.elapsed_us() for fe in dev) * 1e-6
        del prof
        if case.eager_names is not None:
            res.program_differs, res.differs_reason = compare_programs(case.eager_names, replay_names)
    except Exception as exc:  # noqa: BLE001 - keep the timings, the program is just unknown
        res.profile_error = (res.profile_error + f" [replay] {_short(exc)}").strip()


def time_replays(case: _Case) -> None:
    """One repeat of the replay measurement of a prepared case (never raises)."""
    import torch

    from .gpu_common import time_each

    if case.graph is None:
        return
    t0 = time.perf_counter()
    try:
        with torch.inference_mode():
            st = summarize(time_each(case.graph.replay, case.n_replays))
        case.res.replay_medians_s.append(st["median_s"])
        case.res.replay_p10_s.append(st["p10_s"])
        case.res.replay_p90_s.append(st["p90_s"])
        case.res.n_replays = case.n_replays
    except Exception as exc:  # noqa: BLE001
        case.res.graph_error = f"[replay] {_short(exc)}"
        case.graph = None
    case.res.wall_s = round(case.res.wall_s + time.perf_counter() - t0, 2)


def finish_case(case: _Case) -> TimingCaseResult:
    res = case.res
    if res.replay_medians_s:
        res.replay_median_s = summarize(res.replay_medians_s)["median_s"]
    reference_time(res)
    case.graph = case.graph_output = case.fwd = None
    return res


def write_kernel_rows(path: Path, rows: list[dict]) -> None:
    """Append rows to a gzip CSV (a new gzip member per call; the header only when creating)."""
    new = not path.exists()
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=KERNEL_COLUMNS, extrasaction="ignore")
    if new:
        w.writeheader()
    w.writerows(rows)
    with gzip.open(path, "at", newline="") as fh:
        fh.write(buf.getvalue())


def write_json(path: Path, doc: dict) -> None:
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(doc, indent=1, default=_json_default, allow_nan=True))
    tmp.replace(path)


def sweep_cases(path: Path, doc: dict, jobs) -> dict:
    """Run each (key, fn) of ``jobs``: append fn()'s case, or the key with the error, to doc["cases"], print a
    line, and rewrite the JSON at ``path`` after every case (a crash keeps what was measured); then stamp
    ``finished_utc``. Returns doc."""
    for key, fn in jobs:
        try:
            case = fn()
        except Exception as exc:  # noqa: BLE001 - the sweep goes on
            case = {**key, "error": _short(exc)}
        doc["cases"].append(case)
        print(" ".join(str(v) for v in key.values()), "kernels", case.get("n_kernels", "-"), case.get("error", ""),
              flush=True)
        write_json(path, doc)
    doc["finished_utc"] = utc_now()
    write_json(path, doc)
    return doc


def _json_default(o: Any) -> Any:
    return str(o)


def run_network(name: str, opts: TimingOptions, budget: Budget, kernels_path: Path,
                progress: Callable[[list[TimingCaseResult]], None] | None = None) -> list[TimingCaseResult]:
    """All precisions x batches of one network; replays interleaved between the batches. ``progress`` gets the
    results so far after each precision (the caller writes them: a process killed by its timeout keeps them)."""
    import torch

    spec = zoo.NETWORKS[name]
    results: list[TimingCaseResult] = []
    try:
        base, _, _ = zoo.build(name, 1, "fp32", gpu_common.DEVICE)
    except Exception as exc:  # noqa: BLE001
        return [TimingCaseResult(name, p, b, spec.split, spec.family, error=f"[build] {_short(exc)}")
                for p in opts.precisions for b in opts.batches]
    for precision in opts.precisions:
        if budget.over():
            results += [TimingCaseResult(name, precision, b, spec.split, spec.family, error="skipped: over budget")
                        for b in opts.batches]
            continue
        try:
            model = prepare_module(base, precision)
        except Exception as exc:  # noqa: BLE001
            results += [TimingCaseResult(name, precision, b, spec.split, spec.family, error=f"[cast] {_short(exc)}")
                        for b in opts.batches]
            continue
        cases = [prepare_case(model, spec, precision, b, opts) for b in opts.batches]
        for case in cases:
            capture_case(case, opts)
        for _ in range(opts.repeats):
            for case in cases:
                time_replays(case)
        for case in cases:
            profile_replay(case)
        for case in cases:
            results.append(finish_case(case))
            if case.rows:
                try:
                    write_kernel_rows(kernels_path, case.rows)
                except Exception as exc:  # noqa: BLE001
                    case.res.error = (case.res.error + f" [kernel_rows] {_short(exc)}").strip()
        if progress is not None:
            progress(results)
        del cases, model
        lost = next((r.error for r in results if _context_lost(r.error)), "")
        if lost or not _release_memory():
            # a sticky CUDA error poisons the process: keep the cases measured and their errors (with the stage)
            done = {(r.precision, r.batch) for r in results}
            results += [TimingCaseResult(name, p, b, spec.split, spec.family,
                                         error=f"skipped: CUDA context lost ({lost[:80] or 'at cleanup'})")
                        for p in opts.precisions for b in opts.batches if (p, b) not in done]
            return results
    del base
    _release_memory()
    return results


def _context_lost(error: str) -> bool:
    """Whether a case's error is one that leaves the CUDA context unusable (every later call fails)."""
    text = error.lower()
    return "illegal memory access" in text or "unspecified launch failure" in text or "misaligned address" in text


def _release_memory() -> bool:
    """Collect garbage and empty the CUDA cache; False when that raises (a sticky error surfaced here)."""
    import torch

    try:
        gc.collect()
        torch.cuda.empty_cache()
        return True
    except Exception:  # noqa: BLE001 - reported by the caller as a lost context
        return False


def summary_table(cases: list[dict], batches: tuple[int, ...]) -> str:
    """One line per network x precision: reference / replay spread / eager per batch, in ms."""
    by_key: dict[tuple[str, str], dict[int, dict]] = {}
    for c in cases:
        by_key.setdefault((c["network"], c["precision"]), {})[c["batch"]] = c
    head = f"{'network':26s} {'prec':4s}" + "".join(
        f" | b{b:<3d} {'ref_ms':>8s} {'spread%':>7s} {'eager_ms':>8s} {'kern':>5s} {'D':1s}" for b in batches)
    lines = [head]
    for (net, prec), per_b in by_key.items():
        line = f"{net[:26]:26s} {prec:4s}"
        for b in batches:
            c = per_b.get(b)
            if c is None or c.get("error"):
                line += f" | {'ERR ' + (c or {}).get('error', 'missing')[:33]:38s}"
                continue
            med = c["replay_medians_s"]
            spread = 100 * (max(med) - min(med)) / min(med) if med else math.nan
            line += (f" | {'':4s} {c['reference_time_s'] * 1e3:8.3f} {spread:7.1f} {c['eager_median_s'] * 1e3:8.3f}"
                     f" {c['n_kernels_eager']:5d} {'Y' if c['program_differs'] else '.'}")
        lines.append(line)
    n_err = sum(1 for c in cases if c.get("error"))
    lines.append(f"{len(cases)} cases, {n_err} with errors; D = graph program differs (reference from eager kernels)")
    return "\n".join(lines)


def start_sweep(opts: Any, filename: str, command: str) -> tuple[Path, Budget, dict]:
    """Output path, budget and JSON document of a sweep (timing, what-if, training); without CUDA the
    document already holds the error and is written."""
    import torch

    out = Path(opts.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    doc = {"environment": environment(command), "options": asdict(opts), "cases": []}
    if gpu_common.DEVICE == "cuda" and not torch.cuda.is_available():
        doc["error"] = "CUDA not available"
        write_json(out / filename, doc)
    return out / filename, Budget(opts.max_seconds), doc


def command_line(module: str, argv: list[str] | None) -> str:
    """The command a sweep records in its document."""
    return " ".join(["python3", "-m", module, *(argv if argv is not None else sys.argv[1:])])


def report_sweep(doc: dict, table: Callable[[list[dict]], str]) -> int:
    """Print a finished sweep's table and elapsed time (or its error); the exit code."""
    if doc.get("error"):
        print("ERROR:", doc["error"])
        return 1
    print(table(doc["cases"]))
    print(f"elapsed {doc.get('elapsed_s', 0):.0f} s")
    return 0


def run(opts: TimingOptions, command: str = "") -> dict:
    path, budget, doc = start_sweep(opts, "timing.json", command)
    if doc.get("error"):
        return doc
    out = path.parent
    kernels_path = out / "kernels.csv.gz"
    kernels_path.unlink(missing_ok=True)
    write_json(out / "timing.json", doc)  # the environment, even if the first network's process is killed
    for name in opts.names:
        if budget.over():
            doc["cases"] += [asdict(TimingCaseResult(name, p, b, error="skipped: over budget"))
                             for p in opts.precisions for b in opts.batches]
            continue
        t0 = time.perf_counter()
        first = len(doc["cases"])

        def store(results: list[TimingCaseResult], first: int = first) -> None:
            """This network's results so far in place of its earlier ones, written out."""
            doc["cases"][first:] = [asdict(r) for r in results]
            doc["elapsed_s"] = round(budget.elapsed_s(), 1)
            write_json(out / "timing.json", doc)

        def progress(results: list[TimingCaseResult], name: str = name) -> None:
            store(results)
            print(f"  {name}: {results[-1].precision if results else '-'} done, {len(results)} cases, "
                  f"{time.perf_counter() - t0:.1f}s", flush=True)

        try:
            results = run_network(name, opts, budget, kernels_path, progress)
        except Exception as exc:  # noqa: BLE001 - belt and braces: the sweep must go on
            results = [TimingCaseResult(name, "?", 0,
                                        error=f"[network] {_short(exc)}: {traceback.format_exc()[-300:]}")]
        store(results)
        print(f"  {name:28s} {time.perf_counter() - t0:6.1f}s  errors: "
              f"{sum(1 for r in results if r.error)}/{len(results)}", flush=True)
    doc["finished_utc"] = utc_now()
    write_json(out / "timing.json", doc)
    return doc


def _ints(arg: str) -> tuple[int, ...]:
    return tuple(int(t) for t in arg.split(",") if t.strip())


def parse_args(argv: list[str] | None = None) -> TimingOptions:
    p = argparse.ArgumentParser(prog="python3 -m calibration.networks.timing", description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True)
    p.add_argument("--names", default="", help="comma list, or train/heldout/all (default: default sweep)")
    p.add_argument("--precisions", default=",".join(zoo.PRECISIONS))
    p.add_argument("--batches", default="1,32")
    p.add_argument("--replays", type=int, default=50)
    p.add_argument("--min-replays", type=int, default=10)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--eager-iters", type=int, default=30)
    p.add_argument("--case-budget-s", type=float, default=3.0, help="target timing seconds per case")
    p.add_argument("--max-seconds", type=float, default=0.0, help="stop cleanly after this (0 = no limit)")
    p.add_argument("--no-kernel-rows", action="store_true")
    p.add_argument("--dry-run-cpu", action="store_true", help="exercise the code on CPU (numbers meaningless)")
    a = p.parse_args(argv)
    gpu_common.use_device("cpu" if a.dry_run_cpu else "cuda")
    precisions = tuple(t.strip() for t in a.precisions.split(",") if t.strip())
    bad = [x for x in precisions if x not in zoo.PRECISIONS]
    if bad:
        p.error(f"unknown precision(s) {bad}")
    try:
        names = tuple(zoo.parse_names(a.names))
    except KeyError as exc:
        p.error(str(exc))
    return TimingOptions(out_dir=a.out, names=names, precisions=precisions, batches=_ints(a.batches),
                         replays=a.replays, min_replays=min(a.min_replays, a.replays), repeats=a.repeats,
                         eager_iters=a.eager_iters, min_eager_iters=min(5, a.eager_iters),
                         case_budget_s=a.case_budget_s, max_seconds=a.max_seconds,
                         kernel_rows=not a.no_kernel_rows)


def main(argv: list[str] | None = None) -> int:
    import warnings

    warnings.filterwarnings("ignore")
    opts = parse_args(argv)
    print(f"timing {len(opts.names)} networks x {len(opts.precisions)} precisions x {len(opts.batches)} batches "
          f"-> {opts.out_dir}", flush=True)
    doc = run(opts, command_line("calibration.networks.timing", argv))
    return report_sweep(doc, lambda cases: summary_table(cases, opts.batches))


if __name__ == "__main__":
    sys.exit(main())
