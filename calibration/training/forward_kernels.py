"""Kernel tables of one forward in training mode next to one in inference mode (H200 GPU machine).

    python3 -m calibration.training.forward_kernels --out DIR [--names a,b] [--precisions fp32,tf32] [--batch 32]

Per network and precision: the fp32 module in train() with gradients enabled (the forward of a training step, as
calibration/training/measure.py runs it, before the loss) and in eval() under inference_mode (the accuracy
benchmark's forward); cudnn.benchmark on, 3 warm-up forwards each, one profiled forward with module ranges
(calibration/networks/kernel_table.py). Writes DIR/forward_kernels.json: environment, options and per case its
kernel rows (name, duration, module path, aten op). It shows what a training-mode forward launches that an inference
forward does not (batch-norm statistics, other convolution algorithms, stochastic depth, dropout).
"""
from __future__ import annotations

import argparse
from dataclasses import asdict
from pathlib import Path

from calibration.networks import gpu_common, zoo
from calibration.networks.timing import _profile, command_line, sweep_cases

DEFAULT_NAMES = "mobilenet_v3_large,efficientnet_b0,resnet18,regnet_y_1_6gf"


def case_rows(name: str, batch: int, precision: str, mode: str) -> dict:
    import torch

    from calibration.networks.kernel_table import kernel_rows

    gpu_common.set_precision_flags(precision)
    model, inputs, _ = zoo.build(name, batch, "fp32", gpu_common.DEVICE)
    train = mode == "train"
    model.train(train)
    ctx = torch.enable_grad if train else torch.inference_mode
    with ctx():
        for _ in range(3):
            model(*inputs)
        prof = _profile(lambda: model(*inputs), model, record_shapes=False)
    rows = [asdict(r) for r in kernel_rows(prof)]
    return {"network": name, "precision": precision, "batch": batch, "mode": mode, "split": zoo.NETWORKS[name].split,
            "n_kernels": len(rows), "kernel_sum_s": sum(r["duration_us"] for r in rows) * 1e-6, "rows": rows}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python3 -m calibration.training.forward_kernels",
                                description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True)
    p.add_argument("--names", default=DEFAULT_NAMES)
    p.add_argument("--precisions", default="fp32,tf32")
    p.add_argument("--batch", type=int, default=32)
    a = p.parse_args(argv)
    from calibration.networks.gpu_common import environment

    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    doc = {"environment": environment(command_line("calibration.training.forward_kernels", argv)),
           "options": vars(a), "cases": []}
    jobs = [({"network": name, "precision": prec, "batch": a.batch, "mode": mode},
             lambda n=name, p=prec, m=mode: case_rows(n, a.batch, p, m))
            for name in a.names.split(",") for prec in a.precisions.split(",") for mode in ("train", "inference")]
    sweep_cases(out / "forward_kernels.json", doc, jobs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
