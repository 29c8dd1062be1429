"""Shared GPU helpers for timing.py and microbench.py: precision flags, event timing, environment.

Imports torch lazily so that the pure helpers (`summarize`, `Budget`) work without it.
"""
from __future__ import annotations

import datetime as _dt
import math
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence

REFERENCE_LAUNCH_S = 0.45e-6   # per-kernel gap added to summed kernel time when the graph program differs

# "cuda" normally; "cpu" is a dry-run mode for smoke-testing the sweep logic on a machine without a GPU
# (host timers instead of events, a CUDA graph is emulated by calling the function).
DEVICE = "cuda"


def use_device(device: str) -> None:
    """Select "cuda" (measurements) or "cpu" (dry run of the code paths, numbers meaningless)."""
    global DEVICE
    if device not in ("cuda", "cpu"):
        raise ValueError(device)
    DEVICE = device


def sync() -> None:
    import torch

    if DEVICE == "cuda":
        torch.cuda.synchronize()


class _HostGraph:
    """Dry-run stand-in for torch.cuda.CUDAGraph: replay() calls the function."""

    def __init__(self, fn: Callable[[], Any]):
        self.fn = fn

    def replay(self) -> None:
        self.fn()


def utc_now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def percentile(values: Sequence[float], q: float) -> float:
    """Linear-interpolated percentile (q in 0..100) of a non-empty sequence; NaN when empty."""
    xs = sorted(values)
    if not xs:
        return math.nan
    pos = (len(xs) - 1) * q / 100.0
    lo, hi = math.floor(pos), math.ceil(pos)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def summarize(times_s: Sequence[float]) -> dict[str, float]:
    """median / p10 / p90 / n of a list of times in seconds."""
    return {"median_s": percentile(times_s, 50), "p10_s": percentile(times_s, 10),
            "p90_s": percentile(times_s, 90), "n": len(times_s)}


@dataclass
class Budget:
    """Wall-clock budget of a whole run (max_seconds <= 0 means unlimited)."""

    max_seconds: float
    start: float = 0.0

    def __post_init__(self) -> None:
        self.start = self.start or time.perf_counter()

    def elapsed_s(self) -> float:
        return time.perf_counter() - self.start

    def left_s(self) -> float:
        return math.inf if self.max_seconds <= 0 else self.max_seconds - self.elapsed_s()

    def over(self) -> bool:
        return self.left_s() <= 0


def set_precision_flags(precision: str) -> dict[str, bool]:
    """fp32: TF32 off for cuBLAS and cuDNN; tf32: both on; fp16/bf16: both off (irrelevant)."""
    import torch

    tf32 = precision == "tf32"
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    torch.backends.cudnn.benchmark = True
    return {"matmul_allow_tf32": torch.backends.cuda.matmul.allow_tf32,
            "cudnn_allow_tf32": torch.backends.cudnn.allow_tf32, "cudnn_benchmark": True}


def time_each(fn: Callable[[], Any], n: int) -> list[float]:
    """GPU time of each of n back-to-back calls of fn, with one CUDA event pair per call (seconds)."""
    import torch

    if DEVICE == "cpu":
        out = []
        for _ in range(n):
            t0 = time.perf_counter()
            fn()
            out.append(time.perf_counter() - t0)
        return out
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    for s, e in zip(starts, ends):
        s.record()
        fn()
        e.record()
    torch.cuda.synchronize()
    return [s.elapsed_time(e) * 1e-3 for s, e in zip(starts, ends)]


def time_each_synced(fn: Callable[[], Any], n: int) -> tuple[list[float], list[float]]:
    """Per call: GPU event time and host wall time of the call, syncing after each call (seconds).

    Event time includes host-dispatch gaps (the GPU idles while the host launches), wall time is
    the host's time inside fn (dispatch only; no sync inside).
    """
    import torch

    gpu, host = [], []
    if DEVICE == "cpu":
        host = time_each(fn, n)
        return list(host), host
    for _ in range(n):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize()
        s.record()
        t0 = time.perf_counter()
        fn()
        host.append(time.perf_counter() - t0)
        e.record()
        torch.cuda.synchronize()
        gpu.append(s.elapsed_time(e) * 1e-3)
    return gpu, host


def capture_graph(fn: Callable[[], Any], warmup: int = 3):
    """Warm fn up on a side stream, then capture one call in a CUDA graph: (graph, output)."""
    import torch

    if DEVICE == "cpu":
        for _ in range(warmup):
            fn()
        return _HostGraph(fn), fn()
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(warmup):
            fn()
    torch.cuda.current_stream().wait_stream(stream)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = fn()
    torch.cuda.synchronize()
    return graph, out


def _pkg_versions(prefixes: Sequence[str]) -> dict[str, str]:
    from importlib import metadata

    out = {}
    for dist in metadata.distributions():
        name = (dist.metadata.get("Name") or "").lower()
        if any(name.startswith(p) for p in prefixes):
            out[name] = dist.version
    return out


def _nvidia_smi() -> dict[str, str]:
    fields = "name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu"
    try:
        line = subprocess.run(["nvidia-smi", f"--query-gpu={fields}", "--format=csv,noheader"],
                              capture_output=True, text=True, timeout=15).stdout.strip().splitlines()[0]
        return dict(zip(fields.split(","), (v.strip() for v in line.split(","))))
    except Exception as exc:  # noqa: BLE001
        return {"error": f"{type(exc).__name__}: {exc}"}


def environment(command: str | None = None) -> dict[str, Any]:
    """Versions, GPU and driver, date and command line of this run."""
    import torch

    env: dict[str, Any] = {"date_utc": utc_now(), "python": sys.version.split()[0],
                           "command": command or " ".join([os.path.basename(sys.executable), *sys.argv]),
                           "torch": torch.__version__, "cuda_runtime": torch.version.cuda,
                           "cudnn": torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None,
                           "libs": _pkg_versions(("nvidia-cublas", "nvidia-cudnn", "nvidia-cuda-runtime",
                                                  "torchvision", "transformers", "timm"))}
    if torch.cuda.is_available():
        p = torch.cuda.get_device_properties(0)
        env.update(gpu_name=p.name, sm_count=p.multi_processor_count, gpu_memory_bytes=p.total_memory,
                   compute_capability=f"{p.major}.{p.minor}", nvidia_smi=_nvidia_smi())
    return env
