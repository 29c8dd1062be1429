"""NCCL collectives' bus bandwidth per message size, as nccl-tests measures it, through torch.distributed.

    torchrun --nproc_per_node=N -m calibration.multigpu.nccl_sweep --out $OUT/nccl      # on N GPUs
    python -m calibration.multigpu.nccl_sweep --out /tmp/nccl --dry-run-cpu             # 2 gloo processes

Per op (all_reduce, reduce_scatter, all_gather), dtype (fp32, bf16) and size (4 KiB .. 4 GiB, x2): warm-up,
then ``--iters`` launches timed one by one with CUDA events on the current stream (host timers in the dry
run); a size's time is the median over iterations, the slowest rank's (all-reduce MAX across ranks).
``size`` is nccl-tests' size: the all-reduce buffer, the reduce-scatter input, the all-gather output;
algbw = size / time, busbw = algbw x 2(n-1)/n (all-reduce) or (n-1)/n. Rank 0 writes
``nccl_<N>gpu.csv`` (op, dtype, size_bytes, ranks, time_us, algbw_GBps, busbw_GBps, note) and
``nccl_<N>gpu.json`` (settings, environment, ``nvidia-smi topo -m``). NCCL_NVLS_ENABLE=0,
TORCH_SYMM_MEM_DISABLE_MULTICAST=1 and NVSHMEM_DISABLE_NVLS=1 must be set (the script refuses otherwise on
GPUs); it only uses plain NCCL collectives (no symmetric memory, no multicast objects). The gloo dry run
emulates reduce-scatter (all-reduce + slice) and all-gather (list all-gather) where gloo lacks them.
"""
from __future__ import annotations

import argparse
import csv
import os
import sys
import time

from . import common

MODULE = "calibration.multigpu.nccl_sweep"
DRY_SIZES = (4096, 16384, 65536)


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="output directory (e.g. $OUT/nccl)")
    ap.add_argument("--ops", default=",".join(common.OPS))
    ap.add_argument("--dtypes", default=",".join(common.DTYPES))
    ap.add_argument("--min-bytes", type=int, default=4096)
    ap.add_argument("--max-bytes", type=int, default=4 << 30)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--dry-run-cpu", action="store_true", help="2 gloo processes on the CPU (code paths only)")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    a.ops = [o for o in a.ops.split(",") if o]
    a.dtypes = [d for d in a.dtypes.split(",") if d]
    for o in a.ops:
        if o not in common.OPS:
            ap.error(f"unknown op {o!r} (known: {', '.join(common.OPS)})")
    for d in a.dtypes:
        if d not in common.DTYPES:
            ap.error(f"unknown dtype {d!r} (known: {', '.join(common.DTYPES)})")
    return a


def _dtype(name: str):
    import torch

    return {"fp32": torch.float32, "bf16": torch.bfloat16}[name]


def _op_fn(dist, op: str, size: int, dtype, device, n: int, dry: bool):
    """A function launching one collective of nccl-tests' ``size`` bytes, and a note (emulation in the dry run)."""
    import torch

    elem = torch.tensor([], dtype=dtype).element_size()
    count = max(n, size // elem // n * n)
    if op == "all_reduce":
        buf = torch.ones(count, dtype=dtype, device=device)
        return (lambda: dist.all_reduce(buf)), ""
    if op == "reduce_scatter":
        inp = torch.ones(count, dtype=dtype, device=device)
        out = torch.empty(count // n, dtype=dtype, device=device)
        if not dry:
            return (lambda: dist.reduce_scatter_tensor(out, inp)), ""

        def emulated():
            dist.all_reduce(inp)
            out.copy_(inp.narrow(0, dist.get_rank() * (count // n), count // n))
        return emulated, "gloo: all_reduce + slice"
    out = torch.empty(count, dtype=dtype, device=device)
    inp = torch.ones(count // n, dtype=dtype, device=device)
    if not dry:
        return (lambda: dist.all_gather_into_tensor(out, inp)), ""
    parts = list(out.chunk(n))
    return (lambda: dist.all_gather(parts, inp)), "gloo: list all_gather"


def _time(fn, iters: int, warmup: int, dry: bool, dist) -> float:
    import torch

    for _ in range(warmup):
        fn()
    times = []
    if dry:
        for _ in range(iters):
            dist.barrier()
            t = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t)
    else:
        torch.cuda.synchronize()
        for _ in range(iters):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            fn()
            b.record()
            b.synchronize()
            times.append(a.elapsed_time(b) * 1e-3)
    return common.median(times)


def worker(a) -> int:
    import torch

    dry = a.dry_run_cpu
    dist, device = common.init_process_group(dry)
    n, rank = dist.get_world_size(), dist.get_rank()
    sizes = DRY_SIZES if dry else common.sizes(a.min_bytes, a.max_bytes)
    rows = []
    for op in a.ops:
        for dname in a.dtypes:
            for size in sizes:
                note = ""
                try:
                    fn, note = _op_fn(dist, op, size, _dtype(dname), device, n, dry)
                    t = _time(fn, a.iters, a.warmup, dry, dist)
                    tt = torch.tensor([t], dtype=torch.float64, device=device)
                    dist.all_reduce(tt, op=dist.ReduceOp.MAX)
                    t = float(tt.item())
                    del fn
                except (RuntimeError, ValueError) as e:  # unsupported dtype on gloo, out of memory
                    t, note = float("nan"), f"error: {' '.join(str(e).split())[:160]}"
                    if not dry:
                        torch.cuda.empty_cache()
                alg = size / t if t == t and t > 0 else float("nan")
                rows.append({"op": op, "dtype": dname, "size_bytes": size, "ranks": n, "time_us": t * 1e6,
                             "algbw_GBps": alg / 1e9, "busbw_GBps": alg * common.bus_factor(op, n) / 1e9,
                             "note": note})
    if rank == 0:
        os.makedirs(a.out, exist_ok=True)
        path = os.path.join(a.out, f"nccl_{n}gpu.csv")
        with open(path, "w", newline="", encoding="utf-8") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            for r in rows:
                w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in r.items()})
        env = {k: os.environ.get(k) for k in list(common.SAFE_ENV) + ["NCCL_ALGO", "NCCL_PROTO", "NCCL_DEBUG"]}
        meta = {"command": " ".join(sys.argv), "ranks": n, "backend": "gloo" if dry else "nccl",
                "torch": torch.__version__, "nccl": None if dry else ".".join(map(str, torch.cuda.nccl.version())),
                "iters": a.iters, "warmup": a.warmup, "env": env, "topology": common.topo(dry),
                "devices": [] if dry else [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())],
                "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "csv": os.path.basename(path)}
        common.write_json(os.path.join(a.out, f"nccl_{n}gpu.json"), meta)
        print(f"wrote {path} ({len(rows)} rows)")
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
    print("error: launch on GPUs with torchrun --nproc_per_node=N -m calibration.multigpu.nccl_sweep --out DIR",
          file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
