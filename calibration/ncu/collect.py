"""Collect Nsight Compute samples of one network forward pass per case (run ON the GPU machine).

One case, from the repository root:
    python3 -m calibration.ncu.collect --network resnet50 --precision fp16 --batch 32 --out DIR
A plan of cases, each under its own ncu process with its own time limit, all within a budget:
    python3 -m calibration.ncu.collect --plan calibration/ncu/plans/h200_samples.json --out DIR

Per case the driver launches ``ncu ... python3 -m calibration.ncu.collect --worker ...``; the worker
builds the network (`calibration.networks.zoo.build`, or the tiny builders here), sets the
precision, runs warm-up forwards, then exactly one forward between ``torch.cuda.profiler.start()``
and ``stop()`` (ncu runs with ``--profile-from-start off``), with one NVTX range per module call
(`nvtx.ModuleRange`: qualified name, class, TorchScript ONNX scope) and, inside, one NVTX range per
aten op (``emit_nvtx(record_shapes=True)``). Outputs in DIR: ``<network>_<precision>_b<batch>.csv``
(ncu raw page, base units), ``.meta.json`` (worker: torch/cuDNN versions, settings),
``.stdout.txt``/``.stderr.txt``, and ``manifest.json`` (rewritten after every case): commands,
ncu/torch/cuDNN/driver versions, GPU, dates, durations, exit status, kernel counts, ncu passes.
A failed or timed-out case is recorded and the plan goes on.

Cache control defaults to ``none``: with ``all`` ncu flushes L1/L2 before every replay pass, so
each kernel starts cold and its HBM bytes are an upper bound, whereas back to back a producer's
output (up to the H200's ~60 MB L2) is usually still in L2 for its consumer. With ``none`` the
first pass sees the cache left by the previous kernel, later passes the cache left by the
previous pass and by ncu's memory save/restore: closer to a real run, still not identical.
``--replay-mode application`` with ``none`` is the closest (every pass reruns the whole forward)
but needs the same kernel sequence in every run (cuDNN autotuning may break that) and costs one
full run per pass. Clock control is ``none`` (the Firecracker VM cannot lock clocks).
"""
from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from contextlib import nullcontext
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Sequence

from predictor.measure.ncu.metrics import CHIPS, Metric, check_table, metric_names, table

REPO_ROOT = Path(__file__).resolve().parents[2]
NCU_FALLBACK_PATHS = ("/opt/nvidia/nsight-compute/2025.3.1/ncu",)
PRECISIONS = ("fp32", "tf32", "fp16", "bf16")
CACHE_CONTROLS = ("none", "all")
REPLAY_MODES = ("kernel", "application")
MANIFEST = "manifest.json"
BUDGET_MARGIN_S = 20.0     # kept free for ending a timed-out case (SIGTERM, then SIGKILL)
MIN_CASE_S = 30.0          # a case is not started with less time than this left


# ----------------------------------------------------------------------------- plan
@dataclass(frozen=True)
class Case:
    network: str
    precision: str
    batch: int
    timeout_s: float = 150.0
    mode: str = "infer"  # "train": one training step (calibration/training/measure.py), phases as NVTX ranges

    @property
    def name(self) -> str:
        return f"{self.network}_{self.precision}_b{self.batch}" + ("_train" if self.mode == "train" else "")


@dataclass(frozen=True)
class Options:
    """How every case of a run is collected."""

    arch: str = "hopper"
    cache_control: str = "none"
    clock_control: str = "none"
    replay_mode: str = "kernel"
    warmup: int = 3
    aten_ranges: bool = True
    max_kernels: int = 3000          # ncu --launch-count: a bound on one case's work
    budget_s: float = 0.0            # whole-run budget; 0 = none. Cases that cannot start are skipped
    ncu: str = ""                    # path; '' = ncu on PATH, then NCU_FALLBACK_PATHS
    listing: str = ""                # `ncu --query-metrics` output to filter metrics; '' = query ncu
    metric_set: str = "full"         # "core": the hierarchical-roofline counters only (fewer replay passes)


_CASE_KEYS = {"network", "precision", "batch", "timeout_s", "mode"}
MODES = ("infer", "train")
TRAIN_PRECISIONS = ("fp32", "tf32", "amp", "amp_bf16")  # calibration/training/measure.py PRECISION_MODES
_OPTION_KEYS = {f for f in Options.__dataclass_fields__}


def make_case(d: dict[str, Any], default_timeout_s: float = 150.0) -> Case:
    unknown = set(d) - _CASE_KEYS
    if unknown:
        raise ValueError(f"case {d}: unknown keys {sorted(unknown)}")
    network, precision, batch = d.get("network"), d.get("precision"), d.get("batch")
    if not isinstance(network, str) or not network:
        raise ValueError(f"case {d}: 'network' must be a non-empty string")
    mode = d.get("mode", "infer")
    if mode not in MODES:
        raise ValueError(f"case {d}: 'mode' must be one of {MODES}")
    allowed = TRAIN_PRECISIONS if mode == "train" else PRECISIONS
    if precision not in allowed:
        raise ValueError(f"case {d}: 'precision' must be one of {allowed}")
    if not isinstance(batch, int) or isinstance(batch, bool) or batch < 1:
        raise ValueError(f"case {d}: 'batch' must be a positive integer")
    timeout_s = float(d.get("timeout_s", default_timeout_s))
    if timeout_s <= 0:
        raise ValueError(f"case {d}: 'timeout_s' must be positive")
    return Case(network, precision, batch, timeout_s, mode)


def load_plan(obj: dict[str, Any] | list[Any]) -> tuple[list[Case], dict[str, Any]]:
    """(cases, option overrides) from a plan: a list of cases, or {"options": {...}, "cases": [...]}.
    Each case: network, precision, batch and optionally timeout_s; options: `Options` fields plus
    default_timeout_s."""
    if isinstance(obj, list):
        obj = {"cases": obj}
    if not isinstance(obj, dict) or not isinstance(obj.get("cases"), list) or not obj["cases"]:
        raise ValueError("a plan needs a non-empty 'cases' list")
    unknown = set(obj) - {"cases", "options", "comment"}
    if unknown:
        raise ValueError(f"plan: unknown keys {sorted(unknown)}")
    options = dict(obj.get("options") or {})
    default_timeout_s = float(options.pop("default_timeout_s", 150.0))
    bad = set(options) - _OPTION_KEYS
    if bad:
        raise ValueError(f"plan options: unknown keys {sorted(bad)}")
    cases = [make_case(c, default_timeout_s) for c in obj["cases"]]
    names = [c.name for c in cases]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError(f"plan: duplicate cases {dup}")
    return cases, options


def validate_options(opts: Options) -> Options:
    table(opts.arch)
    if opts.cache_control not in CACHE_CONTROLS:
        raise ValueError(f"cache_control must be one of {CACHE_CONTROLS}")
    if opts.replay_mode not in REPLAY_MODES:
        raise ValueError(f"replay_mode must be one of {REPLAY_MODES}")
    if opts.warmup < 0 or opts.max_kernels < 1 or opts.budget_s < 0:
        raise ValueError("warmup >= 0, max_kernels >= 1 and budget_s >= 0 are required")
    return opts


# ----------------------------------------------------------------------------- commands
def ncu_command(python_cmd: Sequence[str], metrics: Sequence[str], out_csv: str | Path, *, ncu: str = "ncu",
                cache_control: str = "none", clock_control: str = "none", replay_mode: str = "kernel",
                launch_count: int | None = None) -> list[str]:
    """The ncu command line that profiles `python_cmd` and writes the raw page as CSV to `out_csv`.

    ``--log-file`` sends all of ncu's output there (``==PROF==`` lines included, which the parser
    skips) and leaves the application's stdout alone; ``--print-units base`` prints ns and bytes;
    ``--nvtx`` adds the push/pop range column; ``--profile-from-start off`` waits for
    cudaProfilerStart.
    """
    cmd = [ncu, "--profile-from-start", "off", "--nvtx",
           "--clock-control", clock_control, "--cache-control", cache_control, "--replay-mode", replay_mode,
           "--metrics", ",".join(metrics),
           "--csv", "--page", "raw", "--print-units", "base", "--print-kernel-base", "demangled",
           "--log-file", str(out_csv)]
    if launch_count is not None:
        cmd += ["--launch-count", str(launch_count)]
    return cmd + list(python_cmd)


def worker_command(case: Case, meta_out: str | Path, opts: Options, python: str = sys.executable) -> list[str]:
    cmd = [python, "-m", "calibration.ncu.collect", "--worker", "--network", case.network,
           "--precision", case.precision, "--batch", str(case.batch), "--warmup", str(opts.warmup),
           "--meta-out", str(meta_out)] + (["--mode", case.mode] if case.mode != "infer" else [])
    return cmd + ([] if opts.aten_ranges else ["--no-aten-ranges"])


def find_ncu(path: str = "") -> str:
    if path:
        return path
    found = shutil.which("ncu")
    if found:
        return found
    for p in NCU_FALLBACK_PATHS:
        if os.path.exists(p):
            return p
    return "ncu"


# ----------------------------------------------------------------------------- metrics selection
def select_metrics(arch: str, listing: str | None, metric_set: str = "full") -> tuple[list[str], list[str], str]:
    """(metrics to collect, dropped names, report). With a listing, names it lacks are dropped
    (an unknown name makes ncu refuse the whole run); the time metric is never dropped."""
    names = metric_names(arch, metric_set)
    if not listing:
        return names, [], "no metric listing: every table name collected unchecked"
    check = check_table(arch, listing)
    keep_always = {table(arch)[Metric.TIME]}
    dropped = [n for n in check.missing if n not in keep_always]
    return [n for n in names if n not in dropped], dropped, check.report()


def query_listing(ncu: str, arch: str, out_path: Path) -> tuple[str | None, str]:
    """Run ``ncu --query-metrics`` for the arch's chip; save and return its text (None on failure)."""
    chip = CHIPS[arch]
    attempts = ([ncu, "--query-metrics", "--chips", chip], [ncu, "--query-metrics", "--chip", chip],
                [ncu, "--query-metrics"])
    for cmd in attempts:
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if r.returncode == 0 and "__" in r.stdout:
            out_path.write_text(r.stdout)
            return r.stdout, shlex.join(cmd)
    return None, ""


# ----------------------------------------------------------------------------- running
def _utc_now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def _run_subprocess(cmd: Sequence[str], timeout_s: float, stdout_path: Path, stderr_path: Path) -> tuple[int | None, bool]:
    """(exit code, timed out). On timeout the whole process group (ncu and the worker) is ended."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH", "")) if p)
    with open(stdout_path, "wb") as out, open(stderr_path, "wb") as err:
        proc = subprocess.Popen(list(cmd), stdout=out, stderr=err, cwd=REPO_ROOT, env=env, start_new_session=True)
        try:
            return proc.wait(timeout=timeout_s), False
        except subprocess.TimeoutExpired:
            for sig, wait_s in ((signal.SIGTERM, 15), (signal.SIGKILL, 15)):
                try:
                    os.killpg(proc.pid, sig)
                except ProcessLookupError:
                    break
                try:
                    proc.wait(timeout=wait_s)
                    break
                except subprocess.TimeoutExpired:
                    continue
            return proc.returncode, True


_PASSES = re.compile(r"==PROF==.*?(\d+)\s+pass")


def summarize_log(text: str) -> dict[str, Any]:
    """ncu's own messages in a log: max passes per kernel, errors and warnings (first 20)."""
    passes = [int(m.group(1)) for m in _PASSES.finditer(text)]
    msgs = [ln.strip() for ln in text.splitlines() if ln.startswith(("==ERROR==", "==WARNING=="))]
    return {"profiled_messages": len(passes), "passes_max": max(passes) if passes else None,
            "ncu_messages": msgs[:20]}


@dataclass
class CollectionResult:
    """One manifest entry."""

    name: str
    network: str
    precision: str
    batch: int
    status: str = "pending"         # ok | failed | timeout | skipped
    exit_code: int | None = None
    command: list = field(default_factory=list)
    command_str: str = ""
    csv: str = ""
    start_utc: str = ""
    duration_s: float = 0.0
    timeout_s: float = 0.0
    kernels: int | None = None
    kernel_time_s: float | None = None
    truncated: bool = False
    passes_max: int | None = None
    ncu_messages: list = field(default_factory=list)
    parse_error: str = ""
    note: str = ""
    meta: dict = field(default_factory=dict)


def _has_header(path: Path) -> bool:
    if not path.exists():
        return False
    with open(path, errors="replace") as f:
        return any(line.lstrip().startswith(('"ID"', "ID,")) for line in f)


def _results_from_stdout(csv_path: Path, stdout_path: Path) -> None:
    """Should this ncu print its results to stdout rather than to --log-file, move them: the
    log becomes <case>.ncu.log and the CSV is taken from the captured stdout."""
    if _has_header(csv_path) or not _has_header(stdout_path):
        return
    if csv_path.exists():
        csv_path.replace(csv_path.with_suffix(".ncu.log"))
    stdout_path.replace(csv_path)


def run_case(case: Case, out_dir: Path, opts: Options, metrics: Sequence[str], timeout_s: float) -> CollectionResult:
    """Profile one case under its own ncu process; never raises for a failed case."""
    from predictor.measure.ncu.parse import NcuParseError, parse_file, total_time_s

    csv_path = out_dir / f"{case.name}.csv"
    meta_path = out_dir / f"{case.name}.meta.json"
    for p in (csv_path, meta_path):
        if p.exists():
            p.unlink()
    cmd = ncu_command(worker_command(case, meta_path, opts), metrics, csv_path, ncu=find_ncu(opts.ncu),
                      cache_control=opts.cache_control, clock_control=opts.clock_control,
                      replay_mode=opts.replay_mode, launch_count=opts.max_kernels)
    res = CollectionResult(case.name, case.network, case.precision, case.batch, command=cmd, command_str=shlex.join(cmd),
                     csv=csv_path.name, start_utc=_utc_now(), timeout_s=timeout_s)
    t0 = time.monotonic()
    try:
        code, timed_out = _run_subprocess(cmd, timeout_s, out_dir / f"{case.name}.stdout.txt",
                                          out_dir / f"{case.name}.stderr.txt")
    except OSError as e:
        code, timed_out, res.note = None, False, f"could not start: {e}"
    res.duration_s = round(time.monotonic() - t0, 3)
    res.exit_code = code
    res.status = "timeout" if timed_out else ("ok" if code == 0 else "failed")
    if meta_path.exists():
        try:
            res.meta = json.loads(meta_path.read_text())
        except ValueError as e:
            res.note = f"unreadable worker meta: {e}"
    _results_from_stdout(csv_path, out_dir / f"{case.name}.stdout.txt")
    if csv_path.exists():
        ncu_log = csv_path.with_suffix(".ncu.log")
        log = csv_path.read_text(errors="replace") + (ncu_log.read_text(errors="replace") if ncu_log.exists() else "")
        info = summarize_log(log)
        res.passes_max, res.ncu_messages = info["passes_max"], info["ncu_messages"]
        try:
            samples = parse_file(csv_path, arch=opts.arch)
            res.kernels, res.kernel_time_s = len(samples), total_time_s(samples)
            res.truncated = len(samples) >= opts.max_kernels
        except NcuParseError as e:
            res.parse_error = str(e)
        if res.status == "ok" and (res.parse_error or not res.kernels):
            res.status = "failed"
            res.note = res.note or "ncu exited 0 but the CSV has no kernels"
    elif res.status == "ok":
        res.status, res.note = "failed", "no CSV written"
    return res


def environment(ncu: str) -> dict[str, Any]:
    """ncu version, GPU name and driver version (nvidia-smi), Python; missing tools give None."""
    def first_line(cmd: Sequence[str]) -> str | None:
        try:
            r = subprocess.run(list(cmd), capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            return None
        lines = [ln.strip() for ln in r.stdout.splitlines() if ln.strip()]
        return lines[-1] if r.returncode == 0 and lines else None

    gpu = first_line(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"])
    name, _, driver = (gpu or "").partition(",")
    return {"ncu_path": ncu, "ncu_version": first_line([ncu, "--version"]),
            "gpu_name": name.strip() or None, "driver_version": driver.strip() or None,
            "python": sys.version.split()[0]}


def run_plan(cases: Sequence[Case], out_dir: Path, opts: Options,
             case_runner: Callable[..., CollectionResult] = run_case) -> dict[str, Any]:
    """Run every case in order within the budget, rewriting DIR/manifest.json after each."""
    opts = validate_options(opts)
    out_dir.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    ncu = find_ncu(opts.ncu)
    listing_file, listing_cmd, listing = opts.listing, "", None
    if opts.listing:
        listing = Path(opts.listing).read_text(errors="replace")
    else:
        path = out_dir / f"query_metrics_{CHIPS[opts.arch]}.txt"
        listing, listing_cmd = query_listing(ncu, opts.arch, path)
        listing_file = path.name if listing else ""
    metrics, dropped, check_report = select_metrics(opts.arch, listing, opts.metric_set)
    manifest: dict[str, Any] = {
        "tool": "calibration.ncu.collect",
        "date_utc": _utc_now(),
        "environment": environment(ncu),
        "options": asdict(opts),
        "metric_listing": listing_file,
        "metric_listing_command": listing_cmd,
        "metric_check": check_report,
        "metrics": metrics,
        "metrics_dropped": dropped,
        "cases": [],
        "duration_s": 0.0,
    }

    def write() -> None:
        manifest["duration_s"] = round(time.monotonic() - t0, 3)
        tmp = out_dir / (MANIFEST + ".tmp")
        tmp.write_text(json.dumps(manifest, indent=1, default=str) + "\n")
        tmp.replace(out_dir / MANIFEST)

    write()
    for case in cases:
        timeout_s = case.timeout_s
        if opts.budget_s:
            left = opts.budget_s - (time.monotonic() - t0) - BUDGET_MARGIN_S
            if left < MIN_CASE_S:
                res = CollectionResult(case.name, case.network, case.precision, case.batch, status="skipped",
                                 note=f"budget: {max(left, 0):.0f} s left of {opts.budget_s:.0f} s")
                manifest["cases"].append(asdict(res))
                write()
                continue
            timeout_s = min(timeout_s, left)
        res = case_runner(case, out_dir, opts, metrics, timeout_s)
        manifest["cases"].append(asdict(res))
        if res.meta and "versions" in res.meta and "torch" not in manifest:
            manifest["torch"] = res.meta["versions"]
        write()
    return manifest


# ----------------------------------------------------------------------------- worker (needs torch)
def _tiny_mlp(batch: int) -> tuple[Any, tuple]:
    import torch
    from torch import nn

    return nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 256)), (torch.randn(batch, 256),)


def _tiny_cnn(batch: int) -> tuple[Any, tuple]:
    import torch
    from torch import nn

    module = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
                           nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 10))
    return module, (torch.randn(batch, 3, 32, 32),)


# Smoke-test networks that need no zoo entry (seconds under ncu).
FALLBACK_NETWORKS: dict[str, Callable[[int], tuple[Any, tuple]]] = {"tiny_mlp": _tiny_mlp, "tiny_cnn": _tiny_cnn}


def build_network(name: str, batch: int, precision: str) -> tuple[Any, tuple, dict]:
    """(module, example_inputs, meta): the fallback table first, then `calibration.networks.zoo`."""
    if name in FALLBACK_NETWORKS:
        import torch

        torch.manual_seed(0)
        module, inputs = FALLBACK_NETWORKS[name](batch)
        return module.eval(), inputs, {"network": name, "batch": batch, "precision": precision, "source": "fallback"}
    from calibration.networks import zoo

    return zoo.build(name, batch, precision)


def configure_precision(torch: Any, precision: str) -> dict[str, Any]:
    """TF32 only for 'tf32' (PyTorch lets cuDNN use TF32 by default: 'fp32' switches it off);
    cuDNN autotuning on. Returns the settings read back."""
    tf32 = precision == "tf32"
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    torch.backends.cudnn.benchmark = True
    return {"matmul_allow_tf32": bool(torch.backends.cuda.matmul.allow_tf32),
            "cudnn_allow_tf32": bool(torch.backends.cudnn.allow_tf32),
            "cudnn_benchmark": bool(torch.backends.cudnn.benchmark)}


def cast_inputs(x: Any, device: Any, dtype: Any) -> Any:
    """Move tensors (in tuples, lists, dicts) to `device`; floating tensors to `dtype` if given."""
    import torch

    if isinstance(x, torch.Tensor):
        x = x.to(device)
        return x.to(dtype) if dtype is not None and x.is_floating_point() else x
    if isinstance(x, (list, tuple)):
        return type(x)(cast_inputs(v, device, dtype) for v in x)
    if isinstance(x, dict):
        return {k: cast_inputs(v, device, dtype) for k, v in x.items()}
    return x


def install_module_ranges(module: Any, tracker: Any, push: Callable[[str], Any], pop: Callable[[], Any]) -> list:
    """Forward pre/post hooks on every module that push/pop its `nvtx.ModuleRange`; returns handles."""
    handles = []
    for name, sub in module.named_modules():
        cls = type(sub).__name__

        def pre(_mod: Any, _args: Any, _name: str = name, _cls: str = cls) -> None:
            push(tracker.enter(_name, _cls).text())

        def post(_mod: Any, _args: Any, _out: Any) -> None:
            pop()
            tracker.exit()

        handles.append(sub.register_forward_pre_hook(pre))
        handles.append(sub.register_forward_hook(post, always_call=True))
    return handles


def run_train_worker(network: str, precision: str, batch: int, warmup: int, meta_out: str) -> int:
    """Build, warm up, then one profiled training step (forward + MSE loss, backward, fused AdamW, as
    calibration/training/measure.py) with module NVTX ranges in the forward and `phase::<name>` ranges
    around each phase; writes the worker meta JSON."""
    import torch

    from calibration.networks import gpu_common, zoo
    from calibration.networks.timing import prepare_module
    from calibration.training.measure import PRECISION_MODES, Trainer, _NoClock

    from predictor.measure.ncu.nvtx import ScopeTracker

    t0 = time.monotonic()
    mode = PRECISION_MODES[precision]
    settings = gpu_common.set_precision_flags(mode.flags)
    model, _, _ = zoo.build(network, batch, "fp32", "cuda")
    model = prepare_module(model.train(), "fp32")
    tr = Trainer(model, zoo.make_inputs(zoo.NETWORKS[network], batch, "fp32", "cuda"), mode, "adamw")
    for _ in range(warmup):
        tr.step(_NoClock())
    torch.cuda.synchronize()
    tracker = ScopeTracker()
    handles = install_module_ranges(model, tracker, torch.cuda.nvtx.range_push, torch.cuda.nvtx.range_pop)
    try:
        torch.cuda.profiler.start()
        tr.step(_NoClock())
        torch.cuda.synchronize()
        torch.cuda.profiler.stop()
    finally:
        for h in handles:
            h.remove()
    record = {"network": network, "precision": precision, "batch": batch, "warmup": warmup, "mode": "train",
              "optimizer": tr.optimizer_kwargs, "loss": "mse", "settings": settings,
              "versions": {"torch": torch.__version__, "cuda": torch.version.cuda,
                           "cudnn": torch.backends.cudnn.version(), "gpu": torch.cuda.get_device_name()},
              "worker_s": round(time.monotonic() - t0, 3)}
    Path(meta_out).write_text(json.dumps(record, indent=1, default=str) + "\n")
    return 0


def run_worker(network: str, precision: str, batch: int, warmup: int, aten_ranges: bool, meta_out: str) -> int:
    """Build, warm up, then one profiled forward with NVTX ranges; writes the worker meta JSON."""
    import torch

    from predictor.measure.ncu.nvtx import ScopeTracker

    t0 = time.monotonic()
    module, inputs, meta = build_network(network, batch, precision)
    settings = configure_precision(torch, precision)
    dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}.get(precision)
    device = torch.device("cuda")
    module = module.to(device).eval()
    if dtype is not None:
        module = module.to(dtype)
    inputs = cast_inputs(tuple(inputs), device, dtype)
    tracker = ScopeTracker()
    pushed = {"n": 0}

    def push(text: str) -> None:
        pushed["n"] += 1
        torch.cuda.nvtx.range_push(text)

    with torch.inference_mode():
        for _ in range(warmup):
            module(*inputs)
        torch.cuda.synchronize()
        handles = install_module_ranges(module, tracker, push, torch.cuda.nvtx.range_pop)
        ranges = torch.autograd.profiler.emit_nvtx(record_shapes=True) if aten_ranges else nullcontext()
        try:
            with ranges:
                torch.cuda.profiler.start()
                module(*inputs)
                torch.cuda.synchronize()
                torch.cuda.profiler.stop()
        finally:
            for h in handles:
                h.remove()
    record = {
        "network": network, "precision": precision, "batch": batch, "warmup": warmup,
        "aten_ranges": aten_ranges, "module_ranges_pushed": pushed["n"], "settings": settings,
        "dtype": str(dtype or torch.float32), "build_meta": meta,
        "versions": {"torch": torch.__version__, "cuda": torch.version.cuda,
                     "cudnn": torch.backends.cudnn.version(),
                     "gpu": torch.cuda.get_device_name(), "cc": ".".join(map(str, torch.cuda.get_device_capability()))},
        "worker_s": round(time.monotonic() - t0, 3),
    }
    Path(meta_out).write_text(json.dumps(record, indent=1, default=str) + "\n")
    return 0


# ----------------------------------------------------------------------------- CLI
def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python3 -m calibration.ncu.collect", description=__doc__.split("\n\n")[0])
    p.add_argument("--network")
    p.add_argument("--precision", choices=PRECISIONS + TRAIN_PRECISIONS[2:])
    p.add_argument("--mode", choices=MODES, default="infer", help="train: one training step (phases as NVTX ranges)")
    p.add_argument("--batch", type=int)
    p.add_argument("--plan", help="JSON plan: a list of cases or {'options': {...}, 'cases': [...]}")
    p.add_argument("--out", help="output directory")
    p.add_argument("--timeout-s", type=float, default=None, help="per-case limit (default 150, or the plan's)")
    p.add_argument("--budget-s", type=float, default=None, help="whole-run limit; later cases are skipped")
    p.add_argument("--arch", choices=sorted(CHIPS), default=None)
    p.add_argument("--cache-control", choices=CACHE_CONTROLS, default=None)
    p.add_argument("--replay-mode", choices=REPLAY_MODES, default=None)
    p.add_argument("--warmup", type=int, default=None)
    p.add_argument("--max-kernels", type=int, default=None)
    p.add_argument("--no-aten-ranges", action="store_true", help="module NVTX ranges only")
    p.add_argument("--ncu", default=None, help=f"ncu executable (default: PATH, then {NCU_FALLBACK_PATHS[0]})")
    p.add_argument("--listing", default=None, help="saved `ncu --query-metrics` output (default: query ncu)")
    p.add_argument("--dry-run", action="store_true", help="print the ncu commands and exit")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--meta-out", help=argparse.SUPPRESS)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.worker and args.mode == "train":
        return run_train_worker(args.network, args.precision, args.batch,
                                Options().warmup if args.warmup is None else args.warmup, args.meta_out)
    if args.worker:
        return run_worker(args.network, args.precision, args.batch,
                          Options().warmup if args.warmup is None else args.warmup,
                          not args.no_aten_ranges, args.meta_out)
    if not args.out:
        print("error: --out DIR is required", file=sys.stderr)
        return 2
    overrides: dict[str, Any] = {}
    if args.plan:
        try:
            cases, overrides = load_plan(json.loads(Path(args.plan).read_text()))
        except (OSError, ValueError) as e:
            print(f"error: plan {args.plan}: {e}", file=sys.stderr)
            return 2
    elif args.network and args.precision and args.batch:
        try:
            cases = [make_case({"network": args.network, "precision": args.precision, "batch": args.batch,
                                "mode": args.mode})]
        except ValueError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
    else:
        print("error: give --plan PLAN.json, or --network, --precision and --batch", file=sys.stderr)
        return 2
    cli = {"arch": args.arch, "cache_control": args.cache_control, "replay_mode": args.replay_mode,
           "warmup": args.warmup, "max_kernels": args.max_kernels, "budget_s": args.budget_s,
           "ncu": args.ncu, "listing": args.listing}
    overrides.update({k: v for k, v in cli.items() if v is not None})
    if args.no_aten_ranges:
        overrides["aten_ranges"] = False
    if args.timeout_s is not None:
        cases = [replace(c, timeout_s=args.timeout_s) for c in cases]
    try:
        opts = validate_options(Options(**overrides))
    except (TypeError, ValueError, KeyError) as e:
        print(f"error: options: {e}", file=sys.stderr)
        return 2
    out_dir = Path(args.out)
    if args.dry_run:
        for c in cases:
            cmd = ncu_command(worker_command(c, out_dir / f"{c.name}.meta.json", opts), metric_names(opts.arch, opts.metric_set),
                              out_dir / f"{c.name}.csv", ncu=find_ncu(opts.ncu), cache_control=opts.cache_control,
                              clock_control=opts.clock_control, replay_mode=opts.replay_mode,
                              launch_count=opts.max_kernels)
            print(shlex.join(cmd))
        return 0
    manifest = run_plan(cases, out_dir, opts)
    for c in manifest["cases"]:
        t = f"{c['kernel_time_s'] * 1e3:.2f} ms" if c.get("kernel_time_s") is not None else "-"
        print(f"{c['name']:32s} {c['status']:8s} {c['duration_s']:7.1f} s  kernels={c['kernels']}  "
              f"kernel time={t}  passes={c['passes_max']}  {c['parse_error'] or c['note']}")
    print(f"manifest: {out_dir / MANIFEST} ({manifest['duration_s']:.0f} s)")
    return 0 if all(c["status"] == "ok" for c in manifest["cases"]) else 1


if __name__ == "__main__":
    sys.exit(main())
