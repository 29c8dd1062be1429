"""Kernel tables of eager forwards under torch.autocast next to the module-cast precision, for the
kernel-to-op mapping of mixed precision (which casts autocast launches, which layout transforms remain).

    python3 -m calibration.networks.amp_kernels --out DIR [--names resnet50,bert_base] [--batches 1,32]

Per (network, batch, mode) with mode in fp16 (module and inputs cast, as timing.py), amp and amp_bf16
(fp32 module under autocast, as whatif.py): cudnn.benchmark on, inference mode, 3 warm-up forwards, one
profiled forward with module ranges (calibration/networks/kernel_table.py). Writes DIR/amp_kernels.json:
environment, options and one entry per case with its kernel rows (name, duration, module path, aten op).
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import asdict

from calibration.networks import gpu_common, zoo
from calibration.networks.timing import _profile, command_line, prepare_module, sweep_cases

MODES = {"fp16": ("fp16", ""), "amp": ("fp32", "float16"), "amp_bf16": ("fp32", "bfloat16")}


def case_rows(name: str, batch: int, mode: str) -> dict:
    import torch

    from calibration.networks.kernel_table import kernel_rows
    from calibration.networks.whatif import _module_classes

    cast, autocast = MODES[mode]
    gpu_common.set_precision_flags("fp32")
    model, _, _ = zoo.build(name, batch, "fp32", gpu_common.DEVICE)
    model = prepare_module(model, cast)
    if autocast:
        model = _module_classes()[0](model, getattr(torch, autocast))
    inputs = zoo.make_inputs(zoo.NETWORKS[name], batch, cast, gpu_common.DEVICE)
    with torch.inference_mode():
        for _ in range(3):
            model(*inputs)
        prof = _profile(lambda: model(*inputs), model, record_shapes=False)
    rows = [asdict(r) for r in kernel_rows(prof)]
    return {"network": name, "batch": batch, "mode": mode, "split": zoo.NETWORKS[name].split,
            "n_kernels": len(rows), "kernel_sum_s": sum(r["duration_us"] for r in rows) * 1e-6, "rows": rows}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python3 -m calibration.networks.amp_kernels", description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True)
    p.add_argument("--names", default="resnet50,resnet18,bert_base,mobilenet_v3_large,vit_b_16")
    p.add_argument("--batches", default="1,32")
    p.add_argument("--modes", default="fp16,amp,amp_bf16")
    a = p.parse_args(argv)
    from pathlib import Path

    from calibration.networks.gpu_common import environment

    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    doc = {"environment": environment(command_line("calibration.networks.amp_kernels", argv)),
           "options": vars(a), "cases": []}
    jobs = [({"network": name, "batch": batch, "mode": mode}, lambda n=name, b=batch, m=mode: case_rows(n, b, m))
            for name in a.names.split(",") for batch in (int(b) for b in a.batches.split(","))
            for mode in a.modes.split(",")]
    sweep_cases(out / "amp_kernels.json", doc, jobs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
