"""Per-kernel profile of the serving benchmark's decode steps (the cases ``calibration.llm.serving`` times as a whole).

    python3 -m calibration.llm.decode_profile --out DIR [--cases gpt2:64:8192,opt:16:8192,...] [--precision fp16]
        [--steps 5] [--dry-run-cpu]

Each case (architecture, batch, context) builds the serving decoder (calibration/llm/decoders.py, random weights),
a static KV cache of context + 1 positions per layer, and runs ``decode_static`` eagerly: 3 warm-up steps, then
``--steps`` steps under torch.profiler (CUDA activities). Writes DIR/decode_kernels.csv (case, kernel name, calls
per step, mean us per call, us per step, the ATen op that launched it) and DIR/decode_profile.json (environment,
configs, per case the kernel sum per step and the eager step time by CUDA events). The kernels are those the
serving benchmark's CUDA graph replays (the same calls, captured); their sum says where a decode step's time goes.
Beside calibration/llm/decode_kernels.py (one profiled step per case, every kernel row with its module path and
shapes; same decoder and cache, from its ``decode_step``): kernels summed over several steps per (kernel, ATen op),
the eager step time, and long contexts by default.
"""
from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from collections import defaultdict
from pathlib import Path

DEFAULT_CASES = "gpt2:64:8192,gpt2:16:2048,opt:16:8192,opt:64:2048,llama:64:8192,llama:16:2048,gpt2:1:128"


def _cases(arg: str) -> list[tuple[str, int, int]]:
    out = []
    for item in arg.split(","):
        arch, b, c = item.strip().split(":")
        out.append((arch, int(b), int(c)))
    return out


def profile_case(arch: str, batch: int, context: int, precision: str, steps: int, dry: bool) -> tuple[dict, list]:
    import torch
    from torch.profiler import ProfilerActivity, profile

    from . import decoders
    from .decode_kernels import decode_step

    _, cfg, dtype, step = decode_step(arch, batch, context, precision, dry, slack=1)
    with torch.inference_mode():
        for _ in range(3):
            step()
        step_s = None
        if not dry:
            torch.cuda.synchronize()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(steps):
                step()
            end.record()
            torch.cuda.synchronize()
            step_s = start.elapsed_time(end) / 1e3 / steps
        acts = [ProfilerActivity.CPU] + ([] if dry else [ProfilerActivity.CUDA])
        with profile(activities=acts) as prof:
            for _ in range(steps):
                step()
            if not dry:
                torch.cuda.synchronize()
    per: dict[tuple[str, str], list[float]] = defaultdict(list)
    if not dry:
        from calibration.networks.kernel_table import kernel_rows

        for r in kernel_rows(prof):
            per[(r.kernel_name, r.aten_op)].append(r.duration_us)
    rows = []
    total_us = 0.0
    for (name, op), durs in sorted(per.items(), key=lambda kv: -sum(kv[1])):
        us_step = sum(durs) / steps
        total_us += us_step
        rows.append({"arch": arch, "batch": batch, "context": context, "precision": precision,
                     "kernel": name[:200], "aten_op": op, "calls_per_step": len(durs) / steps,
                     "mean_us": round(sum(durs) / len(durs), 3), "us_per_step": round(us_step, 3)})
    case = {"arch": arch, "batch": batch, "context": context, "precision": precision, "steps": steps,
            "kernel_sum_per_step_s": total_us / 1e6, "eager_step_s": step_s, "config": cfg.to_dict(),
            "kv_cache_bytes": decoders.kv_cache_bytes(cfg, batch, context, torch.finfo(dtype).bits // 8)}
    return case, rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m calibration.llm.decode_profile", description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--cases", default=DEFAULT_CASES)
    ap.add_argument("--precision", default="fp16", choices=("fp16", "bf16"))
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--max-seconds", type=float, default=240.0)
    ap.add_argument("--dry-run-cpu", action="store_true")
    a = ap.parse_args(argv)
    try:
        cases = _cases(a.cases)
    except ValueError:
        print(f"error: --cases wants arch:batch:context,... (got {a.cases!r})", file=sys.stderr)
        return 2
    from calibration.networks.gpu_common import environment

    a.out.mkdir(parents=True, exist_ok=True)
    doc = {"command": "python3 -m calibration.llm.decode_profile " + " ".join(sys.argv[1:] if argv is None else argv),
           "environment": environment(), "cases": [], "errors": []}
    all_rows: list[dict] = []
    t0 = time.time()
    for arch, b, c in cases:
        if time.time() - t0 > a.max_seconds:
            doc["errors"].append(f"{arch}:{b}:{c}: over budget")
            continue
        try:
            case, rows = profile_case(arch, b, c, a.precision, a.steps, a.dry_run_cpu)
        except Exception as exc:  # noqa: BLE001 - recorded per case
            doc["errors"].append(f"{arch}:{b}:{c}: {type(exc).__name__}: {str(exc)[:300]}")
            continue
        doc["cases"].append(case)
        all_rows += rows
        print(f"  {arch} b{b} c{c}: kernels {case['kernel_sum_per_step_s'] * 1e6:.1f} us/step, eager step "
              f"{(case['eager_step_s'] or 0) * 1e6:.1f} us", flush=True)
        import torch
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
    (a.out / "decode_profile.json").write_text(json.dumps(doc, indent=1, default=str) + "\n")
    with open(a.out / "decode_kernels.csv", "w", newline="") as f:
        fields = ["arch", "batch", "context", "precision", "kernel", "aten_op", "calls_per_step", "mean_us",
                  "us_per_step"]
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(all_rows)
    return 0 if doc["cases"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
