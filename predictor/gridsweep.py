"""``predict sweep GRID.yaml --out RESULTS.csv``: sweeps that outgrow one command line or one machine.

A grid file (YAML, or JSON, which YAML reads too) names the axes; every combination is a setting:

    models: [examples/resnet50.onnx, examples/bert_base.onnx]   # relative to the grid file
    gpus: [v100, a100, h100, h200]
    precisions: [fp32, fp16]
    batches: [1, 8, 32]
    gpu_counts: [1]          # GPUs per setting (multi-GPU prediction: see GPU_COUNT_HOOK)
    mode: infer              # or train (optimizer, loss, fused_optimizer as for --mode train)
    optimize: none           # graph optimisation passes, as --optimize

Work is split into tasks of one (model, batch, GPU count) and the GPUs and precisions still to do there: a
task loads the model once and predicts its GPUs x precisions with ``predictor.sweep.run_sweep`` (as a
comma-list sweep does, sharing the node formulas between GPUs).
Tasks run in this process (``--workers 1``), in N processes (``--workers N``, concurrent.futures) or on a
Dask distributed cluster (``--dask ADDRESS``; the optional extra ``dask``). Results: one row per setting,
CSV (appended as tasks finish: an interrupted sweep keeps what it did) or Parquet (``.parquet``, needs
pyarrow; written at the end). Resumable: a setting already in the output file (same model, GPU, precision,
batch, GPU count) is not predicted again. A setting that cannot be predicted (fp8 on a V100) is a row with
``error``; a model that cannot be loaded stops the sweep with its one-line error (the rows written so far stay).
"""
from __future__ import annotations

import csv
import io
import json
import os
import time
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable, Iterable, Mapping, Sequence

from .sweep import BOUNDS
from .types import PredictorError

KEY_COLUMNS = ("model", "gpu", "precision", "batch", "gpu_count")
COLUMNS = KEY_COLUMNS + ("total_time_s", "eager_time_s", "throughput_per_s") + tuple(f"bound_{b}" for b in BOUNDS) + \
    ("kernels", "calibration", "unsupported", "error")
AXES = ("models", "gpus", "precisions", "batches", "gpu_counts")
OPTIONS = ("mode", "optimize", "optimizer", "loss", "fused_optimizer", "calibration", "uncalibrated")


# ------------------------------------------------------------------------------------------ the grid
@dataclass(frozen=True)
class Grid:
    models: tuple[str, ...]            # as written in the grid (the rows' ``model``)
    paths: tuple[str, ...]             # the files (relative to the grid file's folder)
    gpus: tuple[str, ...]              # profile names
    precisions: tuple[str, ...]        # precision policy names
    batches: tuple[int, ...]
    gpu_counts: tuple[int, ...] = (1,)
    options: Mapping[str, Any] = field(default_factory=dict)

    @property
    def size(self) -> int:
        return len(self.models) * len(self.gpus) * len(self.precisions) * len(self.batches) * len(self.gpu_counts)

    def settings(self) -> list[tuple[str, str, str, int, int]]:
        return [(m, g, p, b, n) for m in self.models for g in self.gpus for p in self.precisions for b in self.batches
                for n in self.gpu_counts]


def _list(doc: Mapping, key: str, default=None) -> list:
    v = doc.get(key, default)
    if v is None:
        raise PredictorError(f"grid: '{key}' is missing (a list)")
    v = v if isinstance(v, list) else [v]
    if not v:
        raise PredictorError(f"grid: '{key}' is empty")
    return v


def _positive(v: Any, key: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v <= 0 or v > 2**31:
        raise PredictorError(f"grid: '{key}' must hold whole numbers from 1 to 2**31, not {v!r}")
    return v


def read_grid(path: str) -> Grid:
    """The grid of a YAML/JSON file; every name is checked here (GPU profiles, precisions, model files)."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read(1 << 20)
    except OSError as e:
        raise PredictorError(f"cannot read grid {path}: {e.strerror}") from None
    doc = _parse(text, path)
    if not isinstance(doc, dict):
        raise PredictorError(f"grid {path}: expected a mapping of {', '.join(AXES)}")
    unknown = sorted(set(doc) - set(AXES) - set(OPTIONS))
    if unknown:
        raise PredictorError(f"grid {path}: unknown key(s) {', '.join(map(str, unknown))} (known: "
                             f"{', '.join(AXES + OPTIONS)})")
    from .machine.profile import load_profile
    from .precision import policy

    base = os.path.dirname(os.path.abspath(path))
    models = [str(m) for m in _list(doc, "models")]
    paths = [m if os.path.isabs(m) else os.path.join(base, m) for m in models]
    for m, p in zip(models, paths):
        if not os.path.isfile(p):
            raise PredictorError(f"grid {path}: model {m} not found ({p})")
    gpus = [load_profile(str(g)).name for g in _list(doc, "gpus")]
    precs = [policy(str(p)).name for p in _list(doc, "precisions", ["fp32"])]
    batches = [_positive(b, "batches") for b in _list(doc, "batches", [1])]
    counts = [_positive(n, "gpu_counts") for n in _list(doc, "gpu_counts", [1])]
    for n in counts:
        gpu_count_kwargs(n)   # a count this version cannot predict fails before any work
    options = {k: doc[k] for k in OPTIONS if k in doc}
    if options.get("mode", "infer") not in ("infer", "train"):
        raise PredictorError(f"grid {path}: mode must be infer or train, not {options['mode']!r}")
    uniq = lambda xs: tuple(dict.fromkeys(xs))  # noqa: E731
    return Grid(uniq(models), tuple(dict(zip(models, paths))[m] for m in uniq(models)), uniq(gpus), uniq(precs),
                uniq(batches), uniq(counts), options)


def _parse(text: str, path: str) -> Any:
    if path.lower().endswith(".json"):
        try:
            return json.loads(text)
        except ValueError as e:
            raise PredictorError(f"grid {path}: not valid JSON ({e})") from None
    try:
        import yaml
    except ImportError:  # pragma: no cover - pyyaml is a dependency
        try:
            return json.loads(text)
        except ValueError:
            raise PredictorError(f"grid {path}: YAML needs pyyaml (pip install pyyaml), or write the grid as "
                                 f"JSON") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise PredictorError(f"grid {path}: not valid YAML ({' '.join(str(e).split())})") from None


def gpu_count_kwargs(n: int) -> dict[str, Any]:
    """GPU_COUNT_HOOK: the keyword arguments of ``predict_graph`` for a setting on ``n`` GPUs. One GPU needs none;
    more need multi-GPU prediction, which this version does not have (wire its option here when it exists)."""
    if n == 1:
        return {}
    raise PredictorError(f"grid: gpu_counts {n}: multi-GPU prediction is not available in this version "
                         f"(gpu_counts: [1])")


# ------------------------------------------------------------------------------------------ tasks
@dataclass(frozen=True)
class Task:
    model: str                 # as in the grid
    path: str
    gpus: tuple[str, ...]
    batch: int
    gpu_count: int
    precisions: tuple[str, ...]
    options: Mapping[str, Any]


def tasks_of(grid: Grid, done: set[tuple[str, ...]]) -> list[Task]:
    """Per (model, batch, GPU count): one task for each group of GPUs with the same precisions not in ``done``
    (keys as strings); a fresh grid has one task per (model, batch, GPU count)."""
    out = []
    for model, path in zip(grid.models, grid.paths):
        for b in grid.batches:
            for n in grid.gpu_counts:
                groups: dict[tuple[str, ...], list[str]] = {}
                for g in grid.gpus:
                    todo = tuple(p for p in grid.precisions if key(model, g, p, b, n) not in done)
                    if todo:
                        groups.setdefault(todo, []).append(g)
                out += [Task(model, path, tuple(gs), b, n, precs, dict(grid.options)) for precs, gs in groups.items()]
    return out


def key(model, gpu, precision, batch, gpu_count) -> tuple[str, ...]:
    return (str(model), str(gpu), str(precision), str(batch), str(gpu_count))


@lru_cache(maxsize=None)
def _profile(name: str):
    from .machine.profile import load_profile

    return load_profile(name)


@lru_cache(maxsize=None)
def _calibration(gpu: str, calibration: str | None, uncalibrated: bool):
    from .calibrate import calibration_named

    return calibration_named(_profile(gpu), calibration, uncalibrated)


def run_task(task: Task) -> list[dict[str, Any]]:
    """Predict one task's settings (in whichever process or Dask worker runs it): one row dict per setting."""
    from .sweep import run_sweep

    opts = task.options
    extra: dict[str, Any] = dict(gpu_count_kwargs(task.gpu_count))
    if opts.get("mode", "infer") == "train":
        fused = opts.get("fused_optimizer")
        extra.update(mode="train", optimizer=opts.get("optimizer", "adamw"), loss=opts.get("loss", "cross_entropy"),
                     impl="foreach" if fused is False else "fused")
    opt = opts.get("optimize")
    if opt and opt != "none":
        extra["optimize"] = opt
    cal = lambda p: _calibration(p.name, opts.get("calibration"), bool(opts.get("uncalibrated")))  # noqa: E731
    # a model that cannot be loaded (corrupt, an unbound dimension) raises: the sweep stops with its one-line error,
    # keeping the rows written so far, and a later run resumes once the input is fixed (no n/a rows to skip)
    s = run_sweep(task.path, [_profile(g) for g in task.gpus], task.precisions, [task.batch], calibration_for=cal,
                  **extra)
    return [_row(task, r.gpu, r.precision, r) for r in s.rows]


def _row(task: Task, gpu: str, precision: str, r) -> dict[str, Any]:
    row = {"model": task.model, "gpu": gpu, "precision": precision, "batch": task.batch,
           "gpu_count": task.gpu_count}
    if not r.ok:
        row.update({c: None for c in COLUMNS if c not in row})
        row["error"] = " ".join(str(r.error).split())
        row["calibration"] = r.calibration
        return row
    row.update({"total_time_s": r.total_time_s, "eager_time_s": r.eager_time_s, "throughput_per_s": r.throughput_per_s,
                **{f"bound_{b}": r.bound_mix.get(b, 0.0) for b in BOUNDS}, "kernels": r.kernels,
                "calibration": r.calibration,
                "unsupported": ";".join(f"{k} x{v}" for k, v in sorted(r.unsupported.items())), "error": None})
    return row


# ------------------------------------------------------------------------------------------ output files
def _is_parquet(path: str) -> bool:
    return path.lower().endswith((".parquet", ".pq"))


def read_done(path: str) -> tuple[set[tuple[str, ...]], list[dict[str, Any]]]:
    """Keys (and rows) of the settings already in ``path`` (none when it does not exist)."""
    if not os.path.exists(path):
        return set(), []
    if _is_parquet(path):
        pq = _pyarrow()
        rows = pq.read_table(path).to_pylist()
    else:
        try:
            with open(path, newline="", encoding="utf-8") as f:
                rows = list(csv.DictReader(f))
        except (OSError, UnicodeDecodeError, csv.Error) as e:
            raise PredictorError(f"cannot read {path} to resume: {e}") from None
        if rows and not set(KEY_COLUMNS) <= set(rows[0]):
            raise PredictorError(f"{path} is not a grid-sweep result (its header lacks {', '.join(KEY_COLUMNS)}): "
                                 f"choose another --out")
    return {key(*(r[c] for c in KEY_COLUMNS)) for r in rows}, rows


def _pyarrow():
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise PredictorError("Parquet output needs pyarrow (pip install pyarrow); or write .csv") from None
    return pq


def _cell(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


class CsvAppender:
    """Rows appended (and flushed) as tasks finish; the header only when the file is new or empty."""

    def __init__(self, path: str):
        new = not os.path.exists(path) or os.path.getsize(path) == 0
        try:
            self.f = open(path, "a", newline="", encoding="utf-8")
        except OSError as e:
            raise PredictorError(f"cannot write {path}: {e.strerror}") from None
        self.w = csv.writer(self.f, lineterminator="\n")
        if new:
            self.w.writerow(COLUMNS)

    def add(self, rows: Iterable[Mapping[str, Any]]) -> None:
        for r in rows:
            self.w.writerow([_cell(r.get(c)) for c in COLUMNS])
        self.f.flush()

    def close(self) -> None:
        self.f.close()


def write_parquet(path: str, rows: Sequence[Mapping[str, Any]]) -> None:
    pq = _pyarrow()
    import pyarrow as pa

    cols = {c: [r.get(c) for r in rows] for c in COLUMNS}
    for c in ("batch", "gpu_count", "kernels"):
        cols[c] = [None if v in (None, "") else int(v) for v in cols[c]]
    for c in ("total_time_s", "eager_time_s", "throughput_per_s") + tuple(f"bound_{b}" for b in BOUNDS):
        cols[c] = [None if v in (None, "") else float(v) for v in cols[c]]
    for c in ("model", "gpu", "precision", "calibration", "unsupported", "error"):
        cols[c] = [None if v in (None, "") else str(v) for v in cols[c]]
    tmp = f"{path}.tmp{os.getpid()}"
    pq.write_table(pa.table(cols), tmp)
    os.replace(tmp, path)


# ------------------------------------------------------------------------------------------ running
@dataclass(frozen=True)
class GridRun:
    settings: int        # in the grid
    skipped: int         # already in the output file
    predicted: int       # rows written by this run
    failed: int          # of those, rows with an error (n/a)
    tasks: int
    wall_s: float
    out: str
    executor: str

    @property
    def settings_per_s(self) -> float:
        return self.predicted / self.wall_s if self.wall_s > 0 else 0.0


def _executor(workers: int, dask: str | None):
    """A function mapping run_task over tasks, yielding each task's rows as it completes."""
    if dask:
        try:
            from dask.distributed import Client, as_completed
        except ImportError:
            raise PredictorError("--dask needs the optional extra dask: pip install 'dask[distributed]' (or "
                                 "pip install 'gpu-roofline-predictor[dask]')") from None

        def run(tasks):
            try:
                client = dask if not isinstance(dask, str) else Client(dask, timeout="10s")
            except OSError as e:
                raise PredictorError(f"--dask {dask}: cannot reach the scheduler ({e})") from None
            try:
                futures = client.map(run_task, tasks, pure=False)
                for fut in as_completed(futures):
                    yield fut.result()
            finally:
                if isinstance(dask, str):
                    client.close()
        return run, f"dask {dask if isinstance(dask, str) else 'client'}"
    if workers <= 1:
        return (lambda tasks: (run_task(t) for t in tasks)), "1 process"

    def run_pool(tasks):
        from concurrent.futures import ProcessPoolExecutor, as_completed

        with ProcessPoolExecutor(max_workers=workers) as pool:
            futures = [pool.submit(run_task, t) for t in tasks]
            for fut in as_completed(futures):
                yield fut.result()
    return run_pool, f"{workers} processes"


def run_grid(grid: Grid, out: str, workers: int = 1, dask: Any = None,
             on_rows: Callable[[int], Any] | None = None) -> GridRun:
    """Predict every setting of ``grid`` not yet in ``out``; rows go to ``out`` (CSV appended, Parquet at the end)."""
    if _is_parquet(out):
        _pyarrow()   # before any work: Parquet is written at the end
    done, old_rows = read_done(out)
    tasks = tasks_of(grid, done)
    skipped = sum(1 for s in grid.settings() if key(*s) in done)
    run, name = _executor(workers, dask)
    t0 = time.perf_counter()
    predicted = failed = 0
    new_rows: list[dict[str, Any]] = []
    appender = None if _is_parquet(out) else CsvAppender(out)
    try:
        for rows in run(tasks) if tasks else ():
            predicted += len(rows)
            failed += sum(1 for r in rows if r.get("error"))
            if appender is not None:
                appender.add(rows)
            else:
                new_rows += rows
            if on_rows is not None:
                on_rows(len(rows))
    finally:
        if appender is not None:
            appender.close()
        elif new_rows:
            write_parquet(out, old_rows + new_rows)
    wall = time.perf_counter() - t0
    return GridRun(grid.size, skipped, predicted, failed, len(tasks), wall, out, name)


def summary_line(r: GridRun) -> str:
    rate = f", {r.settings_per_s:.3g} settings/s" if r.predicted else ""
    return (f"grid sweep: {r.settings} settings, {r.skipped} already in {r.out}, {r.predicted} predicted now "
            f"({r.failed} n/a) in {r.wall_s:.2f} s on {r.executor}{rate} -> {r.out}\n")


# ------------------------------------------------------------------------------------------ CLI
def build_parser():
    from .cli_common import Parser, positive_int as _positive_int

    p = Parser(prog="predict sweep", description="Every combination of a grid file's models, GPUs, precisions, "
                "batches (and GPU counts), one row per setting in a CSV or Parquet file; resumable.")
    p.add_argument("grid", help="GRID.yaml (or .json): models, gpus, precisions, batches, gpu_counts, options")
    p.add_argument("--out", "-o", required=True, help="RESULTS.csv (appended as settings finish) or .parquet "
                   "(needs pyarrow); settings already in it are skipped")
    p.add_argument("--workers", type=_positive_int, default=1, help="processes on this machine (default 1)")
    p.add_argument("--dask", metavar="ADDRESS", help="run on a Dask distributed scheduler (tcp://host:8786); "
                   "needs the extra dask")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    return p


def cli_main(argv: list[str]) -> int:
    from .progress import bar, wanted

    args = build_parser().parse_args(argv)
    if args.workers > 1 and args.dask:
        raise PredictorError("--workers and --dask exclude each other (the Dask cluster has its own workers)")
    if os.path.abspath(args.out) == os.path.abspath(args.grid):
        raise PredictorError("--out must not be the grid file")
    if not args.out.lower().endswith((".csv", ".parquet", ".pq")):
        raise PredictorError(f"--out {args.out}: the file name must end in .csv or .parquet")
    grid = read_grid(args.grid)
    with bar(grid.size, "grid sweep", enabled=wanted(args.quiet)) as b:
        r = run_grid(grid, args.out, workers=args.workers, dask=args.dask, on_rows=b.update)
    import sys

    sys.stdout.write(summary_line(r))
    return 0


def rows_text(rows: Sequence[Mapping[str, Any]]) -> str:
    """Rows as CSV text (tests and the API)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(COLUMNS)
    for r in rows:
        w.writerow([_cell(r.get(c)) for c in COLUMNS])
    return buf.getvalue()
