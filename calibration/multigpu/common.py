"""Shared pieces of the multi-GPU scripts: the environment they must keep, sizes, nccl-tests' bus bandwidth,
process-group setup and compact output. No torch at import time."""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from typing import Any, Sequence

# NVLink SHARP / multicast stay off on the lent machines: NCCL's NVLS algorithm, PyTorch symmetric memory's
# multicast and NVSHMEM's NVLS all create multicast objects. Set before torch / NCCL initialise.
SAFE_ENV = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1", "NVSHMEM_DISABLE_NVLS": "1"}
OPS = ("all_reduce", "reduce_scatter", "all_gather")
DTYPES = ("fp32", "bf16")


def apply_safe_env(env: dict | None = None) -> dict:
    """Force SAFE_ENV into ``env`` (default os.environ); returns it."""
    env = os.environ if env is None else env
    env.update(SAFE_ENV)
    return env


def check_safe_env(env: dict | None = None) -> None:
    env = os.environ if env is None else env
    bad = {k: env.get(k) for k, v in SAFE_ENV.items() if env.get(k) != v}
    if bad:
        raise SystemExit(f"error: multicast must stay off: set {', '.join(f'{k}={SAFE_ENV[k]}' for k in bad)}")


def sizes(min_bytes: int = 4096, max_bytes: int = 4 << 30, factor: int = 2) -> list[int]:
    """4 KiB, 8 KiB, ... 4 GiB (nccl-tests' -b 4K -e 4G -f 2)."""
    out, s = [], min_bytes
    while s <= max_bytes:
        out.append(s)
        s *= factor
    return out


def bus_factor(op: str, ranks: int) -> float:
    """nccl-tests (doc/PERFORMANCE.md): busbw = algbw x 2(n-1)/n (all-reduce), (n-1)/n (reduce-scatter,
    all-gather); algbw = size / time with size the larger buffer (all-gather output, reduce-scatter input)."""
    if op == "all_reduce":
        return 2.0 * (ranks - 1) / ranks
    if op in ("reduce_scatter", "all_gather"):
        return (ranks - 1) / ranks
    raise ValueError(op)


def median(xs: Sequence[float]) -> float:
    return float(statistics.median(xs)) if xs else float("nan")


def topo(dry_run: bool) -> str:
    """``nvidia-smi topo -m`` (how the GPUs are linked); a note when it cannot run."""
    if dry_run:
        return "dry run on CPU: no nvidia-smi topology\n"
    try:
        return subprocess.run(["nvidia-smi", "topo", "-m"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError) as e:
        return f"nvidia-smi topo -m failed: {e}\n"


def init_process_group(dry_run: bool):
    """torchrun's env:// rendezvous; NCCL on GPUs (one per process, LOCAL_RANK), gloo for the CPU dry run."""
    import torch
    import torch.distributed as dist

    if not dry_run:
        check_safe_env()
    backend = "gloo" if dry_run else "nccl"
    local = int(os.environ.get("LOCAL_RANK", "0"))
    if not dry_run:
        torch.cuda.set_device(local)
    if not dist.is_initialized():
        dist.init_process_group(backend=backend)
    device = torch.device("cpu") if dry_run else torch.device("cuda", local)
    return dist, device


def write_json(path: str, doc: Any) -> None:
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1)


def launch_dry_run(module: str, argv: list[str], nproc: int = 2) -> int:
    """Run ``python -m module argv`` as ``nproc`` gloo processes on this CPU with torchrun's launcher."""
    env = apply_safe_env(dict(os.environ))
    env.setdefault("OMP_NUM_THREADS", "1")
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={nproc}",
           "-m", module, *argv, "--worker"]
    return subprocess.run(cmd, env=env).returncode
