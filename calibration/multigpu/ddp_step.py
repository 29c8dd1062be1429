"""DDP training steps of the zoo networks, one process per GPU, timed with CUDA events.

    torchrun --nproc_per_node=N -m calibration.multigpu.ddp_step --out $OUT/ddp [--names resnet50,bert_base,...]
    python -m calibration.multigpu.ddp_step --out /tmp/ddp --dry-run-cpu      # 2 gloo processes, a tiny net

Per (network, precision, per-GPU batch): the zoo network (calibration/networks/zoo.py) in train() mode,
wrapped in DistributedDataParallel (bucket_cap_mb=--bucket-mb, default 25; one GPU: no wrapper, the
baseline of scaling efficiency), AdamW(fused) and an MSE loss against a fixed random target (as
calibration/training/measure.py); precisions fp32 (TF32 off), tf32 (on), amp (autocast float16 + GradScaler).
``--warmup`` steps, then ``--steps`` steps each between two CUDA events (synchronised): the median, p10
and p90 of the slowest rank (all-reduce MAX of each rank's median); per-GPU peak memory
(max_memory_allocated after reset, MAX over ranks); then one step under torch.profiler: the NCCL kernels
(name, start, duration relative to the step's first kernel), their total time, the part of it that overlaps
compute kernels on other streams, and how far the last NCCL kernel runs past the last compute kernel of
backward (the exposed tail). Rank 0 writes ``ddp_<N>gpu.json`` (cases with the profile summary) and
``ddp_<N>gpu.csv`` (one row per case). Errors (OOM) are recorded per case and the sweep goes on.
Multicast stays off (common.SAFE_ENV); no symmetric memory or multicast object is created.
The dry run replaces the zoo by a tiny conv net (no torchvision needed), uses host timers and gloo.
"""
from __future__ import annotations

import argparse
import csv
import os
import sys
import time

from . import common

MODULE = "calibration.multigpu.ddp_step"
DEFAULT_NAMES = ("resnet50", "bert_base", "vit_b_16", "deepcam_lite")
DEFAULT_BATCHES = {"resnet50": (32, 128), "bert_base": (8, 32), "vit_b_16": (32, 64), "deepcam_lite": (2, 8),
                   "tiny": (2, 4)}
PRECISIONS = ("fp32", "tf32", "amp")


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--names", default=",".join(DEFAULT_NAMES))
    ap.add_argument("--precisions", default=",".join(PRECISIONS))
    ap.add_argument("--batches", default=None, help="per-GPU batches for every network (default: two per network)")
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--bucket-mb", type=float, default=25.0)
    ap.add_argument("--no-profile", action="store_true")
    ap.add_argument("--dry-run-cpu", action="store_true")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    a.names = ["tiny"] if a.dry_run_cpu else [n for n in a.names.split(",") if n]
    a.precisions = ["fp32"] if a.dry_run_cpu else [p for p in a.precisions.split(",") if p]
    for p in a.precisions:
        if p not in PRECISIONS:
            ap.error(f"unknown precision {p!r} (known: {', '.join(PRECISIONS)})")
    a.batches = tuple(int(b) for b in a.batches.split(",")) if a.batches else None
    return a


def _tiny(batch: int, device):
    import torch
    import torch.nn as nn

    torch.manual_seed(0)
    m = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.Conv2d(8, 8, 3, padding=1),
                      nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 10)).to(device)
    return m, (torch.randn(batch, 3, 16, 16, device=device),)


def _build(name: str, batch: int, device):
    if name == "tiny":
        return _tiny(batch, device)
    from calibration.networks import zoo

    module, inputs, _meta = zoo.build(name, batch, "fp32", str(device))
    return module.to(device), tuple(x.to(device) for x in inputs)


def _flags(precision: str, dry: bool) -> None:
    import torch

    if dry:
        return
    tf32 = precision == "tf32"
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    torch.backends.cudnn.benchmark = True


def _output(out):
    if isinstance(out, (tuple, list)):
        out = out[0]
    if hasattr(out, "last_hidden_state"):
        out = out.last_hidden_state
    if hasattr(out, "logits"):
        out = out.logits
    if isinstance(out, dict):
        out = next(iter(out.values()))
    return out


def make_step(model, inputs, precision: str, dry: bool):
    """One training step (zero_grad, forward, loss, backward, optimizer) as a closure."""
    import torch

    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=1e-4, **({} if dry else {"fused": True}))
    amp = precision == "amp" and not dry
    scaler = torch.amp.GradScaler("cuda") if amp else None
    with torch.no_grad():
        target = torch.randn_like(_output(model(*inputs)).float())

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.float16, enabled=amp):
            out = _output(model(*inputs))
        loss = torch.nn.functional.mse_loss(out.float(), target)
        if scaler is not None:
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        else:
            loss.backward()
            opt.step()
    return step


def time_steps(step, n: int, warmup: int, dry: bool) -> list[float]:
    import torch

    for _ in range(warmup):
        step()
    out = []
    if dry:
        for _ in range(n):
            t = time.perf_counter()
            step()
            out.append(time.perf_counter() - t)
        return out
    torch.cuda.synchronize()
    for _ in range(n):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        step()
        b.record()
        b.synchronize()
        out.append(a.elapsed_time(b) * 1e-3)
    return out


def overlap_summary(kernels: list[tuple[str, float, float, int]]) -> dict:
    """From (name, start_us, dur_us, stream) of one step's GPU kernels: NCCL kernel time, the part of it
    overlapping non-NCCL kernels, and the exposed tail (last NCCL end - last compute end, >= 0)."""
    nccl = [k for k in kernels if "nccl" in k[0].lower()]
    comp = sorted((k[1], k[1] + k[2]) for k in kernels if "nccl" not in k[0].lower())
    merged: list[list[float]] = []
    for s, e in comp:
        if merged and s <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], e)
        else:
            merged.append([s, e])
    total = sum(k[2] for k in nccl)
    over = 0.0
    for _n, s, d, _st in nccl:
        e = s + d
        for ms, me in merged:
            over += max(0.0, min(e, me) - max(s, ms))
    t0 = min((k[1] for k in kernels), default=0.0)
    last_comp = max((e for _s, e in comp), default=t0)
    last_nccl = max((s + d for _n, s, d, _st in nccl), default=t0)
    return {"kernels": len(kernels), "nccl_kernels": len(nccl), "nccl_time_us": total,
            "nccl_overlapped_us": over, "overlap_fraction": over / total if total else None,
            "exposed_tail_us": max(0.0, last_nccl - last_comp),
            "nccl": [(n[:80], round(s - t0, 2), round(d, 2), st) for n, s, d, st in nccl[:200]]}


def profile_step(step, dry: bool) -> dict:
    import torch
    from torch.profiler import ProfilerActivity, profile

    acts = [ProfilerActivity.CPU] + ([] if dry else [ProfilerActivity.CUDA])
    with profile(activities=acts) as prof:
        step()
        if not dry:
            torch.cuda.synchronize()
    kernels = []
    for e in prof.events():
        dev = getattr(e, "device_type", None)
        if dev is not None and "CUDA" in str(dev) and getattr(e, "time_range", None) is not None:
            stream = getattr(e, "device_resource_id", getattr(e, "stream", -1))
            kernels.append((e.name, e.time_range.start, e.time_range.end - e.time_range.start, int(stream or -1)))
    s = overlap_summary(kernels)
    if dry:
        s["note"] = "dry run on CPU: no CUDA kernels"
    return s


def run_case(name: str, precision: str, batch: int, a, dist, device, n: int) -> dict:
    import torch

    dry = a.dry_run_cpu
    case = {"network": name, "precision": precision, "batch_per_gpu": batch, "ranks": n, "ddp": n > 1,
            "bucket_mb": a.bucket_mb}
    try:
        _flags(precision, dry)
        model, inputs = _build(name, batch, device)
        model.train()
        if n > 1:
            from torch.nn.parallel import DistributedDataParallel as DDP

            model = DDP(model, device_ids=None if dry else [device.index], bucket_cap_mb=a.bucket_mb)
        step = make_step(model, inputs, precision, dry)
        if not dry:
            torch.cuda.reset_peak_memory_stats(device)
        times = time_steps(step, a.steps, a.warmup, dry)
        med = common.median(times)
        stats = torch.tensor([med, sorted(times)[len(times) // 10], sorted(times)[(9 * len(times)) // 10],
                              0.0 if dry else float(torch.cuda.max_memory_allocated(device))],
                             dtype=torch.float64, device=device)
        dist.all_reduce(stats, op=dist.ReduceOp.MAX)
        case.update(step_median_s=float(stats[0]), step_p10_s=float(stats[1]), step_p90_s=float(stats[2]),
                    peak_memory_bytes=None if dry else float(stats[3]),
                    throughput_per_s=batch * n / float(stats[0]), steps=len(times))
        if not a.no_profile:
            case["profile"] = profile_step(step, dry)
        del model, step
    except (RuntimeError, ValueError, KeyError) as e:
        case["error"] = " ".join(str(e).split())[:300]
    if not dry:
        torch.cuda.empty_cache()
    return case


def worker(a) -> int:
    import torch

    dry = a.dry_run_cpu
    dist, device = common.init_process_group(dry)
    n, rank = dist.get_world_size(), dist.get_rank()
    cases = []
    for name in a.names:
        for precision in a.precisions:
            for batch in a.batches or DEFAULT_BATCHES.get(name, (8, 32)):
                c = run_case(name, precision, batch, a, dist, device, n)
                cases.append(c)
                if rank == 0:
                    print(f"{name} {precision} b{batch} x{n}: "
                          + (c.get("error") or f"{c['step_median_s'] * 1e3:.2f} ms"), flush=True)
    if rank == 0:
        meta = {"command": " ".join(sys.argv), "ranks": n, "backend": "gloo" if dry else "nccl",
                "torch": torch.__version__, "env": {k: os.environ.get(k) for k in common.SAFE_ENV},
                "topology": common.topo(dry), "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "cases": cases}
        common.write_json(os.path.join(a.out, f"ddp_{n}gpu.json"), meta)
        cols = ("network", "precision", "batch_per_gpu", "ranks", "ddp", "step_median_s", "step_p10_s", "step_p90_s",
                "throughput_per_s", "peak_memory_bytes", "nccl_time_us", "overlap_fraction", "exposed_tail_us",
                "error")
        with open(os.path.join(a.out, f"ddp_{n}gpu.csv"), "w", newline="", encoding="utf-8") as f:
            w = csv.writer(f)
            w.writerow(cols)
            for c in cases:
                p = c.get("profile", {})
                w.writerow([c.get(k, p.get(k, "")) if c.get(k, p.get(k)) is not None else "" for k in cols])
    dist.barrier()
    dist.destroy_process_group()
    return 0


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    a = parse_args(argv)
    if a.worker or "WORLD_SIZE" in os.environ:
        return worker(a)
    if a.dry_run_cpu:
        return common.launch_dry_run(MODULE, [x for x in argv if x != "--worker"])
    print("error: launch on GPUs with torchrun --nproc_per_node=N -m calibration.multigpu.ddp_step --out DIR",
          file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
