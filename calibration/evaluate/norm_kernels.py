"""Batch-norm kernels as they ran inside the measured networks: rate per input element and per byte, by kernel.

    python -m calibration.evaluate.norm_kernels [--gpu h200] [--min-elements 4000000]

Reads every kernel table under calibration/data/<gpu>/timing (eager rows with the profiler's input shapes) and keeps
the kernels of aten batch-norm calls whose input has at least ``--min-elements`` elements. Per precision and kernel
(cuDNN's ``bn_fw_inf_1C11_kernel_NCHW`` at fp32 and tf32, PyTorch's own ``batch_norm_transform_input_kernel`` for a
16-bit model, and the small elementwise kernels of the same call), the median rate in input elements/s and in
bytes/s (the input read once and the output written once at the case's element size). The small kernels of the
same call (parameter arithmetic: ``vectorized_elementwise_kernel``) carry the call's input shape too, so their rates
mean nothing. Ignores: the per-channel parameters' bytes, autocast's mixed dtypes (not in these tables).
"""
from __future__ import annotations

import argparse
import math

from . import broadcast_kernels
from .broadcast_kernels import ELT


def kernel_rows(gpu: str, min_elements: int) -> list[dict]:
    """One dict per kernel of a batch-norm call on ``min_elements``+ input elements: network, precision, kernel name
    (up to its template arguments), input elements and rates."""
    rows = []
    for r, shapes, dur in broadcast_kernels.eager_kernels(gpu, lambda r: "batch_norm" in (r.get("leaf_op") or "")):
        x = shapes[0] if shapes and isinstance(shapes[0], list) else None
        if not x or dur <= 0 or r["precision"] not in ELT or math.prod(x) < min_elements:
            continue
        n = math.prod(x)
        rows.append({"network": r["network"], "precision": r["precision"],
                     "kernel": r["kernel_name"].split("<")[0].split("(")[0].replace("void ", ""),
                     "elements": n, "elements_per_s": n / dur,
                     "bytes_per_s": 2 * ELT[r["precision"]] * n / dur})
    return rows


def summary(rows: list[dict]) -> dict:
    """Per "precision kernel": kernels, networks and the median rates (G elements/s, TB/s)."""
    return broadcast_kernels.summary(rows, by="kernel")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m calibration.evaluate.norm_kernels", description=__doc__.splitlines()[0])
    ap.add_argument("--gpu", default="h200")
    ap.add_argument("--min-elements", type=int, default=4_000_000)
    a = ap.parse_args(argv)
    broadcast_kernels.print_table(summary(kernel_rows(a.gpu, a.min_elements)), "kernel")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
