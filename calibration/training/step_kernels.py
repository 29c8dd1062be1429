"""Kernel table of one whole training step, each kernel labelled with its phase (H200 GPU machine).

    python3 -m calibration.training.step_kernels --out DIR [--names bert_base,gpt2] [--precisions tf32,amp]
        [--batch 32] [--dry-run-cpu]

Per network and precision: the step calibration/training/measure.py times (train() mode, fp32 parameters, MSE loss,
fused AdamW, autocast with GradScaler for amp, bfloat16 without one for amp_bf16; cudnn.benchmark on), 3 warm-up
steps, then one step profiled with module ranges and the phase ranges, synchronizing before each phase range closes
(measure.py's attribution: a kernel belongs to the phase whose CPU interval holds its GPU start). Writes
DIR/step_kernels.json: environment, options and per case its kernel rows (name, duration, module path, aten op,
phase). measure.py keeps only each phase's kernel count and sum; these rows say which kernels make a phase's time
(what autocast adds to a backward, how the weight-gradient GEMMs run).
"""
from __future__ import annotations

import argparse
from dataclasses import asdict
from pathlib import Path

from calibration.networks import gpu_common, zoo
from calibration.networks.timing import command_line, prepare_module, sweep_cases

DEFAULT_NAMES = "bert_base,gpt2"


def case_rows(name: str, batch: int, precision: str) -> dict:
    from calibration.networks.kernel_table import kernel_rows
    from calibration.networks.timing import _profile
    from calibration.training.measure import PRECISION_MODES, Trainer, _NoClock, kernel_phases

    mode = PRECISION_MODES[precision]
    gpu_common.set_precision_flags(mode.flags)
    model, _, _ = zoo.build(name, 1, "fp32", gpu_common.DEVICE)
    model = prepare_module(model.train(), "fp32")
    spec = zoo.NETWORKS[name]
    tr = Trainer(model, zoo.make_inputs(spec, batch, "fp32", gpu_common.DEVICE), mode, "adamw")
    for _ in range(3):
        tr.step(_NoClock())
    gpu_common.sync()
    prof = _profile(lambda: tr.step(_NoClock(), sync_phases=True), model, record_shapes=True)
    rows = [asdict(r) | {"phase": ph} for r, ph in zip(kernel_rows(prof), kernel_phases(prof))]
    per_phase: dict[str, list] = {}
    for r in rows:
        n_us = per_phase.setdefault(r["phase"] or "unattributed", [0, 0.0])
        n_us[0] += 1
        n_us[1] += r["duration_us"]
    return {"network": name, "precision": precision, "batch": batch, "split": spec.split,
            "n_kernels": len(rows), "kernel_sum_s": sum(r["duration_us"] for r in rows) * 1e-6,
            "phases": {k: {"kernels": n, "kernel_sum_us": round(us, 3)} for k, (n, us) in per_phase.items()},
            "rows": rows}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python3 -m calibration.training.step_kernels",
                                description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True)
    p.add_argument("--names", default=DEFAULT_NAMES)
    p.add_argument("--precisions", default="tf32,amp")
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--dry-run-cpu", action="store_true", help="exercise the code on CPU (no kernels)")
    a = p.parse_args(argv)
    gpu_common.use_device("cpu" if a.dry_run_cpu else "cuda")
    from calibration.networks.gpu_common import environment

    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    doc = {"environment": environment(command_line("calibration.training.step_kernels", argv)),
           "options": vars(a), "cases": []}
    jobs = [({"network": name, "precision": prec, "batch": a.batch},
             lambda n=name, pr=prec: case_rows(n, a.batch, pr))
            for name in a.names.split(",") for prec in a.precisions.split(",")]
    sweep_cases(out / "step_kernels.json", doc, jobs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
