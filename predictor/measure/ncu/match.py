"""Whether an ncu CSV was measured from the prediction it is compared with: the same precision, batch and network.

``predict validate`` compares a prediction with kernels someone profiled; a CSV of the same network at another
precision or batch maps onto the graph's nodes as well as the right one does, and would be compared silently
(ResNet-50 fp32 against its fp16 CSV: "-50%"). Three checks, each on what both sides count:

* precision: the FLOPs of each side by numeric format (ncu's tensor-pipe and CUDA-core instruction counters;
  the prediction's FLOPs by precision): fp32 and tf32 are one format ("32-bit", fp32 storage), fp16, bf16,
  8-bit (fp8, int8), fp64. When each side has a format with at least ``DOMINANT`` of its FLOPs and the two
  differ, the CSV is of another precision. A CSV without FLOP counters is judged by its GEMM kernels' names
  (``f16f16``, ``__half``, ``hsh``, ``bf16``, ``f32f32``, ``<float``, ``sss``, ``i8``...), by time, against the
  prediction's matrix FLOPs.
* FLOPs: measured over predicted network FLOPs outside [1 / ``FLOPS_RATIO``, ``FLOPS_RATIO``]: another batch or
  network (the committed H200 CSVs of each network give 1.00-1.13: ncu counts the tile padding a kernel executes).
* time: measured over predicted network time outside [1 / ``TIME_RATIO``, ``TIME_RATIO``] (the committed CSVs of
  the right precision give 0.96-1.9).

Thresholds were set on the committed samples (calibration/data/h200/ncu: 8 networks x precision, every right
pair passes, every swapped precision and another batch fails). Ignores: a CSV of another network with the same
module names and FLOPs (nothing in the counters tells them apart).
"""
from __future__ import annotations

import re
from typing import Iterable, Mapping

DOMINANT = 0.6
FLOPS_RATIO = 2.0
TIME_RATIO = 5.0

_FORMAT = {"fp32": "32-bit", "tf32": "32-bit", "fp16": "fp16", "bf16": "bf16", "fp8": "8-bit", "int8": "8-bit",
           "fp64": "fp64"}
# GEMM kernel names -> format (first match wins: a half-precision kernel may also say "sgemm", as cuDNN's
# implicit_convolve_sgemm<__half, ...> does)
_NAME_FORMATS = (
    ("bf16", re.compile(r"bf16|bfloat16|_bsb_|_bss_", re.IGNORECASE)),
    ("fp16", re.compile(r"f16f16|__half|_hsh_|_hss_|_h_|h884|h1688|h16816|hgemm|fp16", re.IGNORECASE)),
    ("8-bit", re.compile(r"i8i8|int8|imma|e4m3|e5m2|fp8|_s8_", re.IGNORECASE)),
    ("32-bit", re.compile(r"f32f32|<float|_sss_|sgemm|s1688|s16816|tf32", re.IGNORECASE)),
)


def format_of(precision: str) -> str | None:
    return _FORMAT.get(str(precision).lower())


def dominant(shares: Mapping[str, float]) -> tuple[str, float] | None:
    """The format holding at least DOMINANT of the total, with its share; None without one."""
    total = sum(shares.values())
    if total <= 0:
        return None
    fmt, v = max(shares.items(), key=lambda kv: kv[1])
    return (fmt, v / total) if v / total >= DOMINANT else None


def flops_by_format(items: Iterable[tuple[str, float | None]]) -> dict[str, float]:
    """{format: FLOPs} of (precision, FLOPs) pairs (precisions without a format, and None, left out)."""
    out: dict[str, float] = {}
    for precision, v in items:
        fmt = format_of(precision)
        if fmt is not None and v:
            out[fmt] = out.get(fmt, 0.0) + float(v)
    return out


def name_format(kernel_name: str) -> str | None:
    for fmt, pattern in _NAME_FORMATS:
        if pattern.search(kernel_name):
            return fmt
    return None


def measured_formats(samples) -> tuple[dict[str, float], str]:
    """{format: amount} of the measured kernels and what the amount is: FLOPs from the counters, else the time of
    GEMM-class kernels by their names."""
    flops = flops_by_format((p, v) for s in samples for (p, _u), v in s.flops.items())
    if flops:
        return flops, "FLOPs"
    from .kernels import KernelCategory, classify

    by_time: dict[str, float] = {}
    for s in samples:
        if classify(s.name) in (KernelCategory.GEMM, KernelCategory.ATTENTION, KernelCategory.RNN):
            fmt = name_format(s.name)
            if fmt is not None:
                by_time[fmt] = by_time.get(fmt, 0.0) + s.time_s
    return by_time, "GEMM kernel time (by kernel names: the CSV has no FLOP counters)"


def predicted_formats(pred, matrix_only: bool = False) -> dict[str, float]:
    """{format: FLOPs} of a prediction (only the FLOPs on tensor cores and of GEMM-like ops with ``matrix_only``)."""
    from ...graph.opclass import op_class

    pairs = []
    for o in pred.ops:
        if matrix_only and op_class(o.cost.op_type) not in ("conv", "gemm", "attention", "rnn"):
            continue
        for f in o.cost.flops:
            pairs.append((f.precision.value, f.flops))
    return flops_by_format(pairs)


def mismatch(samples, pred, measured_time_s: float, measured_flops: float) -> str | None:
    """Why the CSV's kernels cannot be of ``pred``'s network, precision and batch (one line), or None."""
    measured, what = measured_formats(samples)
    expected = predicted_formats(pred, matrix_only=what != "FLOPs")
    m, p = dominant(measured), dominant(expected)
    if m is not None and p is not None and m[0] != p[0]:
        return (f"the CSV's kernels run at {m[0]} ({m[1]:.0%} of their {what}) but the prediction at {p[0]} "
                f"(--precision {pred.precision}): a CSV of another precision")
    pf, pt = pred.total_flops, pred.total_time_s
    if pf > 0 and measured_flops > 0 and not 1 / FLOPS_RATIO <= measured_flops / pf <= FLOPS_RATIO:
        return (f"the CSV's kernels execute {measured_flops / pf:.2g}x the model's FLOPs ({measured_flops:.3g} vs "
                f"{pf:.3g}): a CSV of another batch size or network")
    if pt > 0 and measured_time_s > 0 and not 1 / TIME_RATIO <= measured_time_s / pt <= TIME_RATIO:
        return (f"the CSV's kernels take {measured_time_s / pt:.2g}x the predicted time ({measured_time_s * 1e3:.3g} "
                f"vs {pt * 1e3:.3g} ms): a CSV of another precision, batch size or network")
    return None
