"""Canonical profiler metrics and their Nsight Compute names, one table per architecture.

`Metric` names a quantity once (Habitat style); `TABLES[arch]` maps it to the ncu metric that
measures it on that architecture. A metric an architecture lacks is simply absent from its table.
The tables are data: correct a name here and every collector, parser and test follows.

Provenance and doubts (check with ``python3 -m predictor.measure.ncu.metrics --arch hopper --listing
FILE`` against ``ncu --query-metrics --chip gh100`` output):

- hopper: the tensor-path names ``sm__ops_path_tensor_op_{hgmma,hmma}_src_*`` were seen on the H200
  (ncu 2025.3.1, ROOFLINE_FACTS.md), the ``_sparsity_off`` forms in public H100/H200 ncu scripts.
  fp8 (QGMMA; E4M3 and E5M2 are not split by ncu as far as we know), int8 (IGMMA/IMMA) and fp64
  (DMMA) names come from public listings and are unverified on this machine.
- ampere: the ``sm__ops_path_tensor_src_*`` aggregates from public A100 scripts; unverified.
- volta: 512 FLOPs per ``sm__inst_executed_pipe_tensor`` instruction (V100 HMMA only).

Ignored on purpose: sparse tensor-core ops (``_sparsity_on``), integer and conversion instructions,
special-function (XU) work, FP16 packed-pair semantics beyond what ncu's HADD/HMUL/HFMA thread
counts report (NB: if ncu counts an HFMA2 as one thread instruction, fp16 CUDA-core FLOPs are
under-counted by up to 2x; ERT's FP16 kernel counts __hfma2 as 4 FLOPs).
"""
from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from enum import Enum
from typing import Mapping, Sequence


class Metric(str, Enum):
    """One measured quantity per kernel, independent of the profiler version."""

    TIME = "time"                              # seconds (ncu: nanoseconds)
    # CUDA-core thread instructions, predicated on
    DADD = "fp64_add"
    DMUL = "fp64_mul"
    DFMA = "fp64_fma"
    FADD = "fp32_add"
    FMUL = "fp32_mul"
    FFMA = "fp32_fma"
    HADD = "fp16_add"
    HMUL = "fp16_mul"
    HFMA = "fp16_fma"
    # tensor cores
    TENSOR_INST = "tensor_inst"                # Volta: HMMA instructions (x512 FLOPs)
    TENSOR_HGMMA_FP16 = "tensor_hgmma_fp16"    # Hopper warpgroup MMA (wgmma), FLOPs
    TENSOR_HGMMA_BF16 = "tensor_hgmma_bf16"
    TENSOR_HGMMA_TF32 = "tensor_hgmma_tf32"
    TENSOR_HMMA_FP16_FP16 = "tensor_hmma_fp16_dst_fp16"   # warp MMA (mma.sync), FLOPs
    TENSOR_HMMA_FP16_FP32 = "tensor_hmma_fp16_dst_fp32"
    TENSOR_HMMA_BF16 = "tensor_hmma_bf16"
    TENSOR_HMMA_TF32 = "tensor_hmma_tf32"
    TENSOR_FP8 = "tensor_fp8"                  # E4M3 and E5M2 together
    TENSOR_IGMMA_INT8 = "tensor_igmma_int8"    # integer ops, not FLOPs
    TENSOR_IMMA_INT8 = "tensor_imma_int8"
    TENSOR_FP64 = "tensor_fp64"                # DMMA
    # bytes per memory level
    L1_BYTES = "l1_bytes"                      # L1TEX tag stage: LSU global/local, texture
    L2_BYTES = "l2_bytes"
    HBM_BYTES = "hbm_bytes"
    HBM_READ_BYTES = "hbm_read_bytes"
    HBM_WRITE_BYTES = "hbm_write_bytes"
    SHARED_BYTES = "shared_bytes"              # shared memory bytes moved by SASS ld/st (not wgmma/TMA)
    L2_TO_L1_BYTES = "l2_to_l1_bytes"          # xbar -> L1TEX/SMEM read bytes (includes TMA fills, we think)
    # launch
    GRID_SIZE = "grid_size"
    BLOCK_SIZE = "block_size"
    REGISTERS_PER_THREAD = "registers_per_thread"
    WAVES_PER_SM = "waves_per_sm"
    # speed of light
    SM_THROUGHPUT_PCT = "sm_throughput_pct"
    MEMORY_THROUGHPUT_PCT = "memory_throughput_pct"


class Kind(str, Enum):
    """What a value measures, which decides the units it may carry in a CSV."""

    TIME = "time"
    BYTES = "bytes"
    COUNT = "count"
    PERCENT = "percent"


_KIND_BY_METRIC = {
    Metric.TIME: Kind.TIME,
    **{m: Kind.BYTES for m in (Metric.L1_BYTES, Metric.L2_BYTES, Metric.HBM_BYTES, Metric.HBM_READ_BYTES,
                              Metric.HBM_WRITE_BYTES, Metric.SHARED_BYTES, Metric.L2_TO_L1_BYTES)},
    Metric.SM_THROUGHPUT_PCT: Kind.PERCENT,
    Metric.MEMORY_THROUGHPUT_PCT: Kind.PERCENT,
}


def kind_of(metric: Metric) -> Kind:
    return _KIND_BY_METRIC.get(metric, Kind.COUNT)


# ----------------------------------------------------------------------------- ncu names
def _cuda_core(prefix: str = "sm__sass_thread_inst_executed_op_") -> dict[Metric, str]:
    ops = {Metric.DADD: "dadd", Metric.DMUL: "dmul", Metric.DFMA: "dfma",
           Metric.FADD: "fadd", Metric.FMUL: "fmul", Metric.FFMA: "ffma",
           Metric.HADD: "hadd", Metric.HMUL: "hmul", Metric.HFMA: "hfma"}
    return {m: f"{prefix}{op}_pred_on.sum" for m, op in ops.items()}


_COMMON_HEAD = {Metric.TIME: "gpu__time_duration.sum"}
_COMMON_TAIL = {
    Metric.L1_BYTES: "l1tex__t_bytes.sum",
    Metric.L2_BYTES: "lts__t_bytes.sum",
    Metric.HBM_BYTES: "dram__bytes.sum",
    Metric.HBM_READ_BYTES: "dram__bytes_read.sum",
    Metric.HBM_WRITE_BYTES: "dram__bytes_write.sum",
    Metric.GRID_SIZE: "launch__grid_size",
    Metric.BLOCK_SIZE: "launch__block_size",
    Metric.REGISTERS_PER_THREAD: "launch__registers_per_thread",
    Metric.WAVES_PER_SM: "launch__waves_per_multiprocessor",
    Metric.SM_THROUGHPUT_PCT: "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    Metric.MEMORY_THROUGHPUT_PCT: "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
}

VOLTA: dict[Metric, str] = {
    **_COMMON_HEAD, **_cuda_core(),
    Metric.TENSOR_INST: "sm__inst_executed_pipe_tensor.sum",
    **_COMMON_TAIL,
}

AMPERE: dict[Metric, str] = {
    **_COMMON_HEAD, **_cuda_core(),
    # Ampere has only the warp-MMA path: the per-source aggregates are that path (unverified names).
    Metric.TENSOR_HMMA_FP16_FP16: "sm__ops_path_tensor_src_fp16_dst_fp16.sum",
    Metric.TENSOR_HMMA_FP16_FP32: "sm__ops_path_tensor_src_fp16_dst_fp32.sum",
    Metric.TENSOR_HMMA_BF16: "sm__ops_path_tensor_src_bf16_dst_fp32.sum",
    Metric.TENSOR_HMMA_TF32: "sm__ops_path_tensor_src_tf32_dst_fp32.sum",
    Metric.TENSOR_IMMA_INT8: "sm__ops_path_tensor_src_int8.sum",
    Metric.TENSOR_FP64: "sm__ops_path_tensor_src_fp64.sum",
    **_COMMON_TAIL,
    Metric.SHARED_BYTES: "sm__sass_data_bytes_mem_shared.sum",
}

HOPPER: dict[Metric, str] = {
    **_COMMON_HEAD, **_cuda_core(),
    Metric.TENSOR_HGMMA_FP16: "sm__ops_path_tensor_op_hgmma_src_fp16_sparsity_off.sum",
    Metric.TENSOR_HGMMA_BF16: "sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off.sum",
    Metric.TENSOR_HGMMA_TF32: "sm__ops_path_tensor_op_hgmma_src_tf32_dst_fp32_sparsity_off.sum",
    Metric.TENSOR_HMMA_FP16_FP16: "sm__ops_path_tensor_op_hmma_src_fp16_dst_fp16_sparsity_off.sum",
    Metric.TENSOR_HMMA_FP16_FP32: "sm__ops_path_tensor_op_hmma_src_fp16_dst_fp32_sparsity_off.sum",
    Metric.TENSOR_HMMA_BF16: "sm__ops_path_tensor_op_hmma_src_bf16_dst_fp32_sparsity_off.sum",
    Metric.TENSOR_HMMA_TF32: "sm__ops_path_tensor_op_hmma_src_tf32_dst_fp32_sparsity_off.sum",
    Metric.TENSOR_FP8: "sm__ops_path_tensor_src_fp8_sparsity_off.sum",
    Metric.TENSOR_IGMMA_INT8: "sm__ops_path_tensor_op_igmma_src_int8_sparsity_off.sum",
    Metric.TENSOR_IMMA_INT8: "sm__ops_path_tensor_op_imma_src_int8_sparsity_off.sum",
    Metric.TENSOR_FP64: "sm__ops_path_tensor_src_fp64.sum",
    **_COMMON_TAIL,
    # TMA/wgmma kernels bypass l1tex__t_bytes (12 KB for a 4096^3 GEMM on the H200): these two see
    # SASS shared-memory traffic and L2->SM fills respectively; neither counts wgmma operand reads.
    Metric.SHARED_BYTES: "sm__sass_data_bytes_mem_shared.sum",
    Metric.L2_TO_L1_BYTES: "l1tex__m_xbar2l1tex_read_bytes.sum",
}

TABLES: dict[str, dict[Metric, str]] = {"volta": VOLTA, "ampere": AMPERE, "hopper": HOPPER}
CHIPS: dict[str, str] = {"volta": "gv100", "ampere": "ga100", "hopper": "gh100"}


def table(arch: str) -> dict[Metric, str]:
    try:
        return TABLES[arch]
    except KeyError:
        raise KeyError(f"unknown architecture {arch!r}; known: {', '.join(TABLES)}") from None


# what the hierarchical roofline needs and nothing else: fewer counters mean fewer replay passes per kernel
CORE_EXCLUDED = frozenset({
    Metric.DADD, Metric.DMUL, Metric.DFMA, Metric.TENSOR_FP8, Metric.TENSOR_IGMMA_INT8, Metric.TENSOR_IMMA_INT8,
    Metric.TENSOR_FP64, Metric.SM_THROUGHPUT_PCT, Metric.MEMORY_THROUGHPUT_PCT, Metric.SHARED_BYTES,
    Metric.L2_TO_L1_BYTES, Metric.HBM_BYTES,
})
METRIC_SETS = ("full", "core")


def metric_names(arch: str, metric_set: str = "full") -> list[str]:
    """The ncu metric names to collect on `arch`, in table order, without duplicates.

    ``core`` keeps time, fp32/fp16 CUDA-core FLOPs, the fp16/bf16/tf32 tensor paths, bytes per level and
    launch attributes (fp64, fp8, int8 and throughput percentages left out: fewer replay passes).
    """
    if metric_set not in METRIC_SETS:
        raise KeyError(f"unknown metric set {metric_set!r}; known: {', '.join(METRIC_SETS)}")
    items = table(arch).items()
    if metric_set == "core":
        items = [(m, n) for m, n in items if m not in CORE_EXCLUDED]
    return list(dict.fromkeys(n for _, n in items))


def arch_of_cc(cc: str) -> str | None:
    """'9.0' -> 'hopper', '8.0'/'8.6'/'8.9' -> 'ampere', '7.0'/'7.2' -> 'volta'; else None."""
    m = re.fullmatch(r"\s*(\d+)\.(\d+)\s*", cc or "")
    if not m:
        return None
    major, minor = int(m.group(1)), int(m.group(2))
    if major == 9:
        return "hopper"
    if major == 8:
        return "ampere"
    if major == 7 and minor in (0, 2):
        return "volta"
    return None


# ----------------------------------------------------------------------------- FLOPs
# metric -> (precision, unit, FLOPs per count). An FMA counts 2; tensor `ops_path` metrics count
# FLOPs already; Volta's HMMA instruction does 512.
FLOP_TERMS: dict[Metric, tuple[str, str, float]] = {
    Metric.DADD: ("fp64", "cuda", 1.0), Metric.DMUL: ("fp64", "cuda", 1.0), Metric.DFMA: ("fp64", "cuda", 2.0),
    Metric.FADD: ("fp32", "cuda", 1.0), Metric.FMUL: ("fp32", "cuda", 1.0), Metric.FFMA: ("fp32", "cuda", 2.0),
    Metric.HADD: ("fp16", "cuda", 1.0), Metric.HMUL: ("fp16", "cuda", 1.0), Metric.HFMA: ("fp16", "cuda", 2.0),
    Metric.TENSOR_INST: ("fp16", "tensor", 512.0),
    Metric.TENSOR_HGMMA_FP16: ("fp16", "tensor", 1.0),
    Metric.TENSOR_HMMA_FP16_FP16: ("fp16", "tensor", 1.0),
    Metric.TENSOR_HMMA_FP16_FP32: ("fp16", "tensor", 1.0),
    Metric.TENSOR_HGMMA_BF16: ("bf16", "tensor", 1.0),
    Metric.TENSOR_HMMA_BF16: ("bf16", "tensor", 1.0),
    Metric.TENSOR_HGMMA_TF32: ("tf32", "tensor", 1.0),
    Metric.TENSOR_HMMA_TF32: ("tf32", "tensor", 1.0),
    Metric.TENSOR_FP8: ("fp8", "tensor", 1.0),
    Metric.TENSOR_IGMMA_INT8: ("int8", "tensor", 1.0),
    Metric.TENSOR_IMMA_INT8: ("int8", "tensor", 1.0),
    Metric.TENSOR_FP64: ("fp64", "tensor", 1.0),
}


def flops_by_precision_unit(row: Mapping[Metric | str, float | None]) -> dict[tuple[str, str], float | None]:
    """FLOPs per (precision, unit) from canonical counter values (keys: `Metric` or its value).

    A (precision, unit) key appears when at least one of its metrics is in `row`. Terms whose
    value is None (ncu printed n/a) are skipped; the key is None when all its terms are None.
    """
    values = {Metric(k) if not isinstance(k, Metric) else k: v for k, v in row.items()
              if isinstance(k, Metric) or k in Metric._value2member_map_}
    out: dict[tuple[str, str], float | None] = {}
    for metric, (precision, unit, weight) in FLOP_TERMS.items():
        if metric not in values:
            continue
        key = (precision, unit)
        v = values[metric]
        if v is None:
            out.setdefault(key, None)
        else:
            out[key] = (out.get(key) or 0.0) + weight * float(v)
    return out


# ----------------------------------------------------------------------------- validation
# Launch attributes and device attributes are not hardware counters: `ncu --query-metrics`
# does not list them, so a listing can neither confirm nor refute them.
UNLISTED_PREFIXES = ("launch__", "device__", "profiler__")
_NAME = re.compile(r"^[a-z][a-z0-9_]*__[A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*$")


def listed_metric_names(listing: str) -> frozenset[str]:
    """Metric names in ``ncu --query-metrics`` text (any --query-metrics-mode): each line's first
    token when it looks like a metric (``unit__counter[.suffix]``); headers and descriptions ignored."""
    names = set()
    for line in listing.splitlines():
        parts = line.split()
        if parts and _NAME.match(parts[0]):
            names.add(parts[0])
    return frozenset(names)


@dataclass(frozen=True)
class TableCheck:
    """Result of checking one table against a metric listing."""

    arch: str
    present: tuple[str, ...]
    missing: tuple[str, ...]
    unchecked: tuple[str, ...]   # launch/device attributes the listing does not carry

    @property
    def ok(self) -> bool:
        return not self.missing

    def report(self) -> str:
        lines = [f"{self.arch}: {len(self.present)} present, {len(self.missing)} missing, "
                 f"{len(self.unchecked)} not checkable (launch/device attributes)"]
        lines += [f"  missing: {name}" for name in self.missing]
        return "\n".join(lines)


def check_table(arch: str, listing: str, names: Sequence[str] | None = None) -> TableCheck:
    """Which of `arch`'s ncu names (or `names`) a ``--query-metrics`` listing lacks.

    A name counts as present when the full name or its base (the part before the first '.')
    is listed, so the default base-mode listing and the suffix-mode listing both work.
    """
    listed = listed_metric_names(listing)
    present, missing, unchecked = [], [], []
    for name in (names if names is not None else metric_names(arch)):
        base = name.split(".", 1)[0]
        if name in listed or base in listed:
            present.append(name)
        elif name.startswith(UNLISTED_PREFIXES):
            unchecked.append(name)
        else:
            missing.append(name)
    return TableCheck(arch, tuple(present), tuple(missing), tuple(unchecked))


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python3 -m predictor.measure.ncu.metrics",
                                description="Print or check the ncu metric table of an architecture.")
    p.add_argument("--arch", default="hopper", choices=sorted(TABLES))
    p.add_argument("--listing", help="file with `ncu --query-metrics --chip <chip>` output to check against")
    args = p.parse_args(argv)
    if not args.listing:
        for metric, name in table(args.arch).items():
            print(f"{metric.value:28s} {name}")
        return 0
    with open(args.listing, encoding="utf-8", errors="replace") as f:
        result = check_table(args.arch, f.read())
    print(result.report())
    return 0 if result.ok else 1


if __name__ == "__main__":
    sys.exit(main())
