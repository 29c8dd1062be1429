"""Kernel tables of LLM decode steps (H200 GPU machine): which kernels a step of calibration/llm/serving.py runs.

    python3 -m calibration.llm.decode_kernels --out DIR [--archs llama,gpt2,opt] [--precision fp16]
        [--batches 1,16] [--contexts 2048] [--dry-run-cpu]

Per architecture, batch and context: the decoder of calibration/llm/decoders.py (random weights), a static KV cache
of context + 64 positions, 3 warm-up decode steps, then one step profiled with module ranges (the eager kernels
the step's CUDA graph replays; calibration/networks/kernel_table.py). Writes DIR/decode_kernels.json: environment,
configs and per case its kernel rows (name, duration, module path, aten op, input shapes). What it is for: decode
steps were predicted 5-18% fast (2026-12-06) while their attention kernel alone was predicted slow (microbenchmark
run 10), so other kernels of the step were under-priced; these rows say which (the append copies and the rotary
tables: predictor/serve.mark_kv_appends, graph/runtime.py const_fold; calibration/data/llm/h200/accuracy.json).
"""
from __future__ import annotations

import argparse
from dataclasses import asdict
from pathlib import Path


def decode_step(arch: str, batch: int, context: int, precision: str, dry: bool, slack: int = 64):
    """(decoder, config, dtype, step): the serving decoder with random weights, a static KV cache of context + slack
    positions per layer, and one ``decode_static`` step at position ``context`` as a closure."""
    import torch

    from . import decoders

    device = "cpu" if dry else "cuda"
    cfg = (decoders.TINY if dry else decoders.CONFIGS)[arch]
    dtype = torch.float32 if dry else {"fp16": torch.float16, "bf16": torch.bfloat16}[precision]
    torch.backends.cuda.matmul.allow_tf32 = False
    model = decoders.build(cfg, device, dtype)
    shape = (batch, cfg.kv_heads, context + slack, cfg.head_dim)
    kc = [torch.randn(shape, device=device, dtype=dtype) for _ in range(cfg.layers)]
    vc = [torch.randn(shape, device=device, dtype=dtype) for _ in range(cfg.layers)]
    ids = torch.randint(0, cfg.vocab, (batch, 1), device=device)
    return model, cfg, dtype, lambda: model.decode_static(ids, kc, vc, context)


def case_rows(arch: str, batch: int, context: int, precision: str, dry: bool) -> dict:
    import torch

    from calibration.networks.kernel_table import kernel_rows
    from calibration.networks.timing import _profile

    model, cfg, _, step = decode_step(arch, batch, context, precision, dry)
    with torch.inference_mode():
        for _ in range(3):
            step()
        prof = _profile(step, model, record_shapes=True)
    rows = [asdict(r) for r in kernel_rows(prof)]
    return {"arch": arch, "batch": batch, "context": context, "precision": precision, "config": cfg.to_dict(),
            "n_kernels": len(rows), "kernel_sum_s": sum(r["duration_us"] for r in rows) * 1e-6, "rows": rows}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python3 -m calibration.llm.decode_kernels", description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True)
    p.add_argument("--archs", default="llama,gpt2,opt")
    p.add_argument("--precision", default="fp16", choices=("fp16", "bf16"))
    p.add_argument("--batches", default="1,16")
    p.add_argument("--contexts", default="2048")
    p.add_argument("--dry-run-cpu", action="store_true", help="exercise the code on CPU (no kernels)")
    a = p.parse_args(argv)
    from calibration.networks import gpu_common
    from calibration.networks.gpu_common import environment
    from calibration.networks.timing import command_line, sweep_cases

    gpu_common.use_device("cpu" if a.dry_run_cpu else "cuda")
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    doc = {"environment": environment(command_line("calibration.llm.decode_kernels", argv)), "options": vars(a),
           "cases": []}
    jobs = [({"arch": arch, "batch": b, "context": c},
             lambda ar=arch, bb=b, cc=c: case_rows(ar, bb, cc, a.precision, a.dry_run_cpu))
            for arch in a.archs.split(",") for b in (int(x) for x in a.batches.split(","))
            for c in (int(x) for x in a.contexts.split(","))]
    sweep_cases(out / "decode_kernels.json", doc, jobs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
