"""What each parameter of the kernel time model means, its unit and its physical bounds (lmfit-style specs).

An efficiency is a fraction in (0, 1] of the ceiling it names (the profile's ERT-measured compute peak of the unit,
HBM or L2 bandwidth). Library GEMM/convolution classes move their operands at a good share of HBM bandwidth, so a
compute-heavy kernel cannot be explained by a tiny memory efficiency: their ``eff_memory`` is bounded below by
``GEMM_LIKE_MIN_MEMORY``. The fit (calibration/fit/fit.py) takes its bounds and starting values from here, and the
calibration file records, per parameter, whether the data determined it.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ParamSpec:
    """One parameter of the time model: meaning, unit, start, bounds."""

    name: str
    unit: str
    lower: float
    upper: float
    start: float
    meaning: str


PARAMS: dict[str, ParamSpec] = {p.name: p for p in (
    ParamSpec("t0_s", "s", 2e-7, 5e-5, 3e-6, "fixed cost of one kernel beyond the graph-replay gap (prologue, "
              "epilogue, tail of the last wave)"),
    ParamSpec("eff_compute", "fraction", 0.005, 1.0, 0.7, "achieved fraction of the compute ceiling of the unit the "
              "work runs on (tensor cores: the cuBLAS GEMM of the ERT run; CUDA cores: the FMA sweep)"),
    ParamSpec("eff_memory", "fraction", 0.02, 1.0, 0.6, "achieved fraction of the ERT HBM (copy) bandwidth on the "
              "traffic model's HBM bytes"),
    ParamSpec("eff_l2", "fraction", 0.01, 1.0, 1.0, "achieved fraction of the ERT L2 bandwidth on the traffic "
              "model's L2 requests"),
    ParamSpec("row_s", "s", 1e-10, 1e-5, 1e-7, "cost per row per SM of a kernel giving each row a thread block "
              "(per byte walked for block-walk kernels, per loop iteration for thread-loop kernels, per query block "
              "for fused attention kernels)"),
    ParamSpec("block_s", "s", 0.0, 1e-4, 0.0, "cost per wave of walking thread blocks"),
)}

# classes whose kernels are library GEMMs / implicit-GEMM convolutions (and their attention and recurrent relatives)
GEMM_LIKE = ("conv", "gemm", "attention", "grouped", "gemm_unaligned", "rnn", "rnn_gemv", "gemv")
GEMM_LIKE_MIN_MEMORY = 0.5
# tensor-core GEMMs and convolutions reach most of the ceiling (itself a cuBLAS GEMM): their small-problem losses are
# tiles, waves, K-loop overheads and fixed costs, not a low asymptote
TENSOR_CLASSES = ("conv", "gemm")
TENSOR_PRECISIONS = ("tf32", "fp16", "bf16")
MIN_TENSOR_EFFICIENCY = 0.6


def param_bounds(name: str, cls: str = "", precision: str = "") -> tuple[float, float]:
    """(lower, upper) of parameter ``name`` for kernel class ``cls`` at ``precision``."""
    spec = PARAMS[name]
    lower = spec.lower
    if name == "eff_memory" and cls in GEMM_LIKE:
        lower = GEMM_LIKE_MIN_MEMORY
    if name == "eff_compute" and cls in TENSOR_CLASSES and precision in TENSOR_PRECISIONS:
        lower = MIN_TENSOR_EFFICIENCY
    return lower, spec.upper
