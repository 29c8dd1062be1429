"""Broadcasting elementwise kernels as they ran inside the measured networks: rate per output element and per byte.

    python -m calibration.evaluate.broadcast_kernels [--gpu h200] [--min-elements 1000000]

Reads every kernel table under calibration/data/<gpu>/timing (eager rows with the profiler's input shapes) and keeps
the binary arithmetic kernels (aten add/sub/mul/div) whose two tensor operands differ in shape (a broadcast: PyTorch's
generic ``elementwise_kernel``) with at least ``--min-elements`` output elements. Per precision and operand layout
(a value per row, a vector over the last dim, a channel of NCHW, or other), the median rate in output elements/s and
in bytes/s (operands read once, the output written once, at the case's element size; autocast's mixed inputs are not
in these tables). The layouts are the broadcast microbenchmark's (calibration/networks/microbench.py
BROADCAST_SHAPES). Rows where neither operand has the output's shape are left out: there the recorded shapes are often
another op's (a convolution's input and weight recorded on its bias add), so outer-product broadcasts are not in this
table. Ignores in-place variants' aliasing and scalar operands (a number, not a tensor).
"""
from __future__ import annotations

import argparse
import csv
import gzip
import json
import math
import statistics
from collections import defaultdict
from pathlib import Path

from ..fit.dataset import DATA

OPS = frozenset({"aten::add", "aten::sub", "aten::mul", "aten::div", "aten::add_", "aten::sub_", "aten::mul_",
                 "aten::div_"})
ELT = {"fp32": 4, "tf32": 4, "fp16": 2, "bf16": 2}


def broadcast_shape(a: list[int], b: list[int]) -> tuple[int, ...] | None:
    """numpy's broadcast of two shapes, None where they do not broadcast."""
    n = max(len(a), len(b))
    pa, pb = [1] * (n - len(a)) + list(a), [1] * (n - len(b)) + list(b)
    out = []
    for x, y in zip(pa, pb):
        if x != y and 1 not in (x, y):
            return None
        out.append(max(x, y))
    return tuple(out)


def layout(a: list[int], b: list[int], out: tuple[int, ...]) -> str:
    """Which operand pattern: 'row' (one value per row: [..., 1]), 'lastdim' (a vector over the last dim), 'channel'
    (NCHW's [1, C, 1, 1]), 'outer' (both operands broadcast), else 'other'."""
    n = len(out)
    pa, pb = [1] * (n - len(a)) + list(a), [1] * (n - len(b)) + list(b)
    full_a, full_b = tuple(pa) == out, tuple(pb) == out
    if not full_a and not full_b:
        return "outer"
    small = pb if full_a else pa
    if small[-1] == 1 and math.prod(small) == math.prod(out) // out[-1]:
        return "row"
    if small[-1] == out[-1] and math.prod(small) == out[-1]:
        return "lastdim"
    if n == 4 and small[0] == 1 and small[2] == 1 and small[3] == 1 and small[1] == out[1]:
        return "channel"
    return "other"


def eager_kernels(gpu: str, keep):
    """(row, input shapes, duration s) of every eager kernel of ``gpu``'s kernel tables whose row ``keep(row)``
    accepts and whose shapes and duration parse."""
    for path in sorted((DATA / gpu / "timing").glob("**/kernels.csv.gz")):
        with gzip.open(path, "rt", newline="") as fh:
            for r in csv.DictReader(fh):
                if r.get("source", "eager") != "eager" or not keep(r):
                    continue
                try:
                    shapes = json.loads(r["input_shapes"])
                    dur = float(r["duration_us"]) * 1e-6
                except (ValueError, KeyError):
                    continue
                yield r, shapes, dur


def kernel_rows(gpu: str, min_elements: int) -> list[dict]:
    """One dict per broadcasting binary kernel of ``gpu``'s kernel tables (see the module text): network, precision,
    batch, aten op (in-place folded), the two operand shapes, duration, layout and rates."""
    rows = []
    for r, shapes, dur in eager_kernels(gpu, lambda r: r.get("leaf_op") in OPS
                                        and "vectorized" not in r["kernel_name"]):
        tensors = [s for s in shapes[:2] if isinstance(s, list) and s]
        if len(tensors) != 2 or tensors[0] == tensors[1] or dur <= 0 or r["precision"] not in ELT:
            continue
        out = broadcast_shape(*tensors)
        if out is None or math.prod(out) < min_elements or tuple(out) not in map(tuple, tensors):
            continue
        n_out = math.prod(out)
        nbytes = ELT[r["precision"]] * (math.prod(tensors[0]) + math.prod(tensors[1]) + n_out)
        rows.append({"network": r["network"], "precision": r["precision"], "batch": int(r["batch"]),
                     "op": r["leaf_op"].rstrip("_"), "shapes": (tuple(tensors[0]), tuple(tensors[1])),
                     "duration_s": dur, "layout": layout(*tensors, out), "rank": len(out),
                     "elements": n_out, "elements_per_s": n_out / dur, "bytes_per_s": nbytes / dur})
    return rows


def summary(rows: list[dict], by: str = "layout") -> dict:
    """Per "precision <row[by]>": kernels, networks and the median rates (G elements/s, TB/s)."""
    groups: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for r in rows:
        groups[(r["precision"], r[by])].append(r)
    return {f"{p} {k}": {"kernels": len(g), "networks": len({r["network"] for r in g}),
                         "G_elements_per_s": round(statistics.median(r["elements_per_s"] for r in g) / 1e9, 1),
                         "TB_per_s": round(statistics.median(r["bytes_per_s"] for r in g) / 1e12, 2)}
            for (p, k), g in sorted(groups.items())}


def print_table(s: dict, label: str) -> None:
    """A summary as a markdown table, its first column headed "precision <label>"."""
    print(f"| precision {label} | kernels | networks | G elements/s | TB/s |\n| --- | --- | --- | --- | --- |")
    for k, v in s.items():
        print(f"| {k} | {v['kernels']} | {v['networks']} | {v['G_elements_per_s']} | {v['TB_per_s']} |")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m calibration.evaluate.broadcast_kernels", description=__doc__.splitlines()[0])
    ap.add_argument("--gpu", default="h200")
    ap.add_argument("--min-elements", type=int, default=1_000_000)
    a = ap.parse_args(argv)
    print_table(summary(kernel_rows(a.gpu, a.min_elements)), "layout")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
