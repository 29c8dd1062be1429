"""Transfer of a calibration fitted on one GPU (the H200) to another GPU: what carries over, and how.

A fitted calibration (predictor/fitted.py) holds efficiencies that are fractions of *measured* (ERT)
ceilings, fixed costs per kernel, and hidden-kernel counts. On another GPU, per parameter:

* **SM count, wave quantisation**: not parameters. GEMM wave efficiency (``fitted.gemm_wave``), block-walk
  waves, rows per SM and the traffic model's wave-filled tiles (``graph.traffic.traffic_for``) all use the
  target profile's ``sm_count``.
* **Tensor-core generation, precisions**: the target profile's peaks; a precision the GPU has no ceiling for is
  the usual n/a error (profiles are validated against ``machine/arch.py``: no bf16/tf32 before Ampere, fp8 from
  Ada/Hopper). cuBLAS/cuDNN tile shapes: the H200-fitted tile choice (``fitted.TENSOR_TILES``); the traffic
  model takes the TMA path on Hopper/Blackwell only and a two-partition L2 on A100/Hopper/Blackwell.
* **L2 capacity**: the target's ``l2_bytes`` sets the traffic model's residency window.
* **Ceilings** (peaks, L1/L2/HBM bandwidth): a ceiling measured on the target (source kind ``ert``,
  ``measured``, ``derived-measured``) is used as it is. A ceiling that is a datasheet figure (kind
  ``datasheet``, or ``derived`` from datasheet figures such as L1 = bytes/clock x SMs x clock) is multiplied by
  the *achievable fraction* of that ceiling, measured / datasheet on a reference GPU: for Volta, Turing and
  Pascal the published V100 SXM2 ERT run over the V100 datasheet (``v100`` profile, for the ceilings it has),
  otherwise, and for every ceiling the V100 lacks, the H200 ERT run over the H200 datasheet (``h200`` over
  ``h200-datasheet``). 16-bit CUDA-core peaks are taken relative to the fp32 one instead (datasheets list them
  at 1x, 2x or 4x the fp32 rate; the H200's ERT 16-bit kernels reached 1.03x its fp32 rate, the V100's 1.93x):
  achievable = min(datasheet, achievable fp32 x the reference's measured 16-bit / fp32 ratio). So an H100 (datasheet) gets the H200's measured compute and L1/L2 rates and 0.823 x its
  3.35 TB/s HBM: never faster than the H200 where only memory differs.
* **Read-only HBM ceiling** (``hbm_read_bandwidth_Bps``: reads priced at it, writes at what makes a copy run at the
  copy ceiling): the target's own where measured (scaled as its HBM ceiling is; the H100's ERT float4 sweeps give
  3.18 / 2.89 TB/s = 1.10), else its transferred HBM ceiling times the source GPU's measured read / copy ratio (the
  H200's: 4.64 / 3.95 TB/s = 1.17).
* **SM count of a measurement**: compute peaks and L1/L2 bandwidth are the SMs' (each SM its share). A measured
  ceiling taken from a GPU with another SM count (its source record names ``sm_count``, or is the source GPU's own
  record: a profile made from the H200's by editing ``sm_count``) is scaled to the profile's SMs: per-SM rate x SMs.
  Latency terms (rows per SM, block-walk waves) already grow as SMs are removed. So fewer SMs are never faster.
* **Clocks**: peaks are at the profile's boost clock; where a profile publishes a sustained (power-limited)
  clock, compute and L1/L2 ceilings are further scaled by sustained / boost.
* **Power-limited boards** (datasheet board power <= 75 W, POWER_LIMITED_W: what a PCIe x16 slot supplies, so
  single-slot cards without a power connector: T4 70 W, L4 72 W, P4 75 W) that publish no sustained clock: their
  boost clock is not held under sustained math at that power (NVIDIA, on the T4's sustained cuBLAS rate: 'arising
  due to power capping'). They take the measured sustained / boost clock of the reference board of the kind, the
  T4 (900 / 1590 MHz = 0.566, ``t4`` profile, source ``sustained-clock``), as the achievable fraction of their
  datasheet (boost) clock, the way datasheet ceilings take a reference GPU's measured / datasheet fraction.
* **FP32 issue width** (``machine/arch.py`` SM_ISSUE, by compute capability): the fp32 efficiency of the library
  GEMM-like classes (FP32_ISSUE_CLASSES: SGEMM, implicit-GEMM convolutions, batched matmuls on CUDA cores) is an
  issue rate. A warp instruction is dispatched per clock per SM partition; on Hopper, Ada, GA10x and Blackwell the
  FP32 lanes equal that width (headroom 1), so every load, address or loop instruction of the kernel takes an
  FFMA's slot and the H200 fit (0.73 of the FMA ceiling for SGEMM) holds that share (so does Pascal, whose
  dual issue is not counted: arch.SMIssue.headroom); on Volta, Turing and GA100 an FFMA occupies a partition's
  16 lanes for two clocks (headroom 2), so the other instructions issue beside the FFMAs. Transferred:
  eff x headroom(target) / headroom(source), at most 1 (fp32 only; other precisions and classes as fitted).
* **Fitted as on the H200, not scaled**: per-class efficiencies (but the fp32 issue rule above), t0 and
  per-row/per-wave costs, hidden kernels, ``gemm_k_half``, the CUDA-graph kernel gap and host dispatch costs.
  Ignores: other libraries' kernels on other generations (e.g. cuDNN's pre-Hopper kernels), clock differences in
  fixed costs.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import lru_cache
from typing import Mapping

from ..types import MemLevel, Precision, Unit, frozen_map
from .arch import sm_issue
from .profile import MachineProfile, load_profile

DATASHEET_KINDS = frozenset({"datasheet", "derived"})  # ceilings the achievable fraction applies to
VOLTA_FAMILY = frozenset({"volta", "turing", "pascal"})
CLOCKED_LEVELS = (MemLevel.L1, MemLevel.L2)  # bandwidths that scale with the SM clock
POWER_LIMITED_W = 75.0  # board power a PCIe x16 slot supplies (PCIe CEM spec): slot-powered, power-capped boards
POWER_LIMITED_REFERENCE = "t4"  # the power-limited board with a published measured sustained clock
# calibration classes whose fp32 kernels are FFMA-issue-bound library GEMMs (cuBLAS SGEMM, cuDNN implicit GEMM,
# batched matmuls of attention); their fp32 efficiency follows the SM's issue headroom (module text)
FP32_ISSUE_CLASSES = frozenset({"gemm", "conv", "attention", "gemm_unaligned"})


@dataclass(frozen=True)
class Transfer:
    """The target GPU's profile with achievable ceilings, and what was done to each ceiling."""

    source_gpu: str
    target: MachineProfile
    profile: MachineProfile  # ceilings the transferred calibration is applied to
    factors: Mapping[str, float]  # profile field -> factor applied (absent: used as it is)
    reasons: Mapping[str, str]  # profile field -> why
    fp32_issue_factor: float = 1.0  # headroom(target) / headroom(source) for FP32_ISSUE_CLASSES at fp32
    fp32_issue_why: str = ""
    clock_factor: float = 1.0  # sustained / boost SM clock the compute and L1/L2 ceilings are scaled by
    clock_why: str = ""

    def efficiency(self, cls: str, precision: str, eff_compute: float) -> float:
        """A fitted compute efficiency on the target: the fp32 issue rule for FP32_ISSUE_CLASSES, else as fitted."""
        if precision != "fp32" or cls not in FP32_ISSUE_CLASSES or self.fp32_issue_factor == 1.0:
            return eff_compute
        return min(1.0, eff_compute * self.fp32_issue_factor)

    def to_json(self) -> dict:
        """The ``transfer`` object of predict's JSON output."""
        return {
            "from_gpu": self.source_gpu,
            "to_gpu": self.target.name,
            "ceilings": {f: {"factor": self.factors[f], "why": self.reasons[f]} for f in sorted(self.factors)},
            "unchanged": sorted(set(self.target.provenance) - set(self.factors)
                                - {"sm_count", "sm_clock_hz", "l2_bytes", "hbm_bytes", "memory_bytes",
                                   "launch_overhead_s", "kernel_gap_s", "sustained_sm_clock_hz"}),
            "as_profile": ["sm_count (waves, tiles, rows per SM)", "l2_bytes (residency)",
                           "tensor-core precisions (n/a where the GPU has none)"],
            "as_fitted": ["class efficiencies", "t0_s, row_s, block_s", "hidden kernels", "gemm_k_half",
                          "kernel_gap_s", "host dispatch"],
            "sm_clock": {"factor": self.clock_factor, "why": self.clock_why or "boost clock (not power-limited)"},
            "fp32_issue": {"classes": sorted(FP32_ISSUE_CLASSES), "factor": self.fp32_issue_factor,
                           "why": self.fp32_issue_why, "rule": "eff_compute x factor, at most 1 (fp32 only)"},
        }

    def summary(self) -> str:
        """One line for the table report."""
        issue = f" but fp32 GEMM-like x{self.fp32_issue_factor:.3g} (issue width)" if self.fp32_issue_factor != 1 else ""
        if self.clock_factor != 1:
            issue += f"; SM clock x{self.clock_factor:.3g} (sustained)"
        if not self.factors:
            return (f"calibration of {self.source_gpu} transferred to {self.target.name}: ceilings as measured; "
                    f"efficiencies as fitted{issue}")
        n = len(self.factors)
        field = "bandwidth_Bps.HBM" if "bandwidth_Bps.HBM" in self.factors else next(iter(self.factors))
        example = field.removeprefix("bandwidth_Bps.").removeprefix("peak_flops_per_s.")
        return (f"calibration of {self.source_gpu} transferred to {self.target.name}: {n} datasheet ceiling"
                f"{'s' if n != 1 else ''} scaled to achievable (e.g. {example} x{self.factors[field]:.3g}"
                f"); SM count, L2 size and precisions from the profile; efficiencies as fitted{issue}")


def _fields(p: MachineProfile) -> dict[str, float]:
    out = {f"peak_flops_per_s.{pr.value}.{u.value}": v for (pr, u), v in p.peak_flops_per_s.items()}
    out.update({f"bandwidth_Bps.{lv.value}": v for lv, v in p.bandwidth_Bps.items()})
    return out


def _sheet_fields(p: MachineProfile) -> dict[str, float]:
    """The plain datasheet numbers a profile keeps under ``datasheet``."""
    out = {}
    for prec, units in (p.datasheet.get("peak_flops_per_s") or {}).items():
        for unit, v in (units or {}).items():
            out[f"peak_flops_per_s.{prec}.{unit}"] = float(v)
    for lv, v in (p.datasheet.get("bandwidth_Bps") or {}).items():
        out[f"bandwidth_Bps.{lv}"] = float(v)
    return out


@lru_cache(maxsize=None)
def achievable_fractions(family: str) -> Mapping[str, float]:
    """measured / datasheet per ceiling on the reference GPU of ``family`` ("volta" or "default")."""
    h200, sheet = load_profile("h200"), load_profile("h200-datasheet")
    measured, listed = _fields(h200), _fields(sheet)
    out = {f: measured[f] / listed[f] for f in listed if f in measured}
    out.update({f"ratio16.{p}": measured[f"peak_flops_per_s.{p}.cuda"] / measured["peak_flops_per_s.fp32.cuda"]
                for p in ("fp16", "bf16")})
    if family == "volta":
        v100 = load_profile("v100")
        measured, listed = _fields(v100), _sheet_fields(v100)
        out.update({f: measured[f] / listed[f] for f in listed if f in measured})
        out["ratio16.fp16"] = measured["peak_flops_per_s.fp16.cuda"] / measured["peak_flops_per_s.fp32.cuda"]
    return frozen_map(out)


_CUDA16 = {"peak_flops_per_s.fp16.cuda": "fp16", "peak_flops_per_s.bf16.cuda": "bf16"}


@lru_cache(maxsize=None)
def power_limited_clock_fraction() -> float:
    """Measured sustained / boost SM clock of the reference power-limited board (T4: 900 / 1590 MHz)."""
    ref = load_profile(POWER_LIMITED_REFERENCE)
    return ref.sustained_sm_clock_hz / ref.sm_clock_hz


def sustained_clock(target: MachineProfile) -> tuple[float, str]:
    """(sustained / boost SM clock, why) of ``target``: its published sustained clock, else the reference
    fraction for a power-limited board (datasheet board power <= POWER_LIMITED_W), else (1.0, "")."""
    if target.sustained_sm_clock_hz:
        return target.sustained_sm_clock_hz / target.sm_clock_hz, "sustained / boost clock"
    tdp = target.datasheet.get("tdp_w")
    if isinstance(tdp, (int, float)) and 0 < tdp <= POWER_LIMITED_W:
        x = power_limited_clock_fraction()
        return x, (f"power-limited board ({tdp:g} W <= {POWER_LIMITED_W:g} W) without a published sustained clock: "
                   f"the {POWER_LIMITED_REFERENCE.upper()}'s measured sustained / boost clock")
    return 1.0, ""


def transfer_profile(target: MachineProfile, source_gpu: str = "h200") -> Transfer:
    """The ceilings a calibration fitted on ``source_gpu`` is applied to on ``target`` (see the module text)."""
    fractions = achievable_fractions("volta" if target.arch.lower() in VOLTA_FAMILY else "default")
    clock, clock_why = sustained_clock(target)
    factors: dict[str, float] = {}
    reasons: dict[str, str] = {}
    values = _fields(target)
    for field, value in values.items():
        x, why = 1.0, []
        measured_sms = _measured_sm_count(target, field, source_gpu)
        if measured_sms and measured_sms != target.sm_count and _sm_side(field):
            x *= target.sm_count / measured_sms
            why.append(f"measured on {measured_sms} SMs: its per-SM rate x {target.sm_count} SMs")
        fp32 = "peak_flops_per_s.fp32.cuda"
        if field in _CUDA16 and target.source_kind(field) in DATASHEET_KINDS and fp32 in values:
            base = values[fp32] * (fractions[fp32] if target.source_kind(fp32) in DATASHEET_KINDS else 1.0)
            ratio = fractions[f"ratio16.{_CUDA16[field]}"]
            x = min(value, base * ratio) / value
            why.append(f"min(datasheet, achievable fp32 x {ratio:.3g}, the reference's measured 16-bit / fp32 "
                       f"CUDA-core ratio)")
        elif target.source_kind(field) in DATASHEET_KINDS:
            frac = fractions.get(field)
            if frac is None:  # a precision/unit no reference measured: the fraction of its fp32 CUDA-core peak
                frac = fractions["peak_flops_per_s.fp32.cuda"]
                why.append("achievable fraction of the reference's fp32 CUDA-core peak (none measured for this one)")
            else:
                ref = "V100 ERT / V100 datasheet" if target.arch.lower() in VOLTA_FAMILY and field in \
                    _sheet_fields(load_profile("v100")) else "H200 ERT / H200 datasheet"
                why.append(f"achievable fraction {ref}")
            x *= frac
        clocked = field.startswith("peak_flops_per_s.") or field in ("bandwidth_Bps.L1", "bandwidth_Bps.L2")
        if clock != 1.0 and clocked:
            x *= clock
            why.append(f"{clock_why} {clock:.3g}")
        if why:
            factors[field], reasons[field] = x, "; ".join(why)
    peaks = {(p, u): v * factors.get(f"peak_flops_per_s.{p.value}.{u.value}", 1.0)
             for (p, u), v in target.peak_flops_per_s.items()}
    bw = {lv: v * factors.get(f"bandwidth_Bps.{lv.value}", 1.0) for lv, v in target.bandwidth_Bps.items()}
    read = hbm_read_ceiling(target, bw[MemLevel.HBM], factors.get("bandwidth_Bps.HBM", 1.0), source_gpu)
    profile = dataclasses.replace(target, peak_flops_per_s=frozen_map(peaks), bandwidth_Bps=frozen_map(bw),
                                  hbm_read_bandwidth_Bps=read) \
        if factors or read != target.hbm_read_bandwidth_Bps else target
    issue, why = fp32_issue_factor(target, load_profile(source_gpu))
    return Transfer(source_gpu, target, profile, frozen_map(factors), frozen_map(reasons), issue, why, clock,
                    clock_why)


def hbm_read_ceiling(target: MachineProfile, hbm_Bps: float, hbm_factor: float, source_gpu: str) -> float:
    """The read-only HBM ceiling on ``target`` whose transferred copy ceiling is ``hbm_Bps``: its own read figure
    times the HBM factor where it has one, else ``hbm_Bps`` times the source GPU's measured read / copy ratio (0
    where the source has none: reads at the copy ceiling)."""
    if target.hbm_read_bandwidth_Bps:
        return target.hbm_read_bandwidth_Bps * hbm_factor
    source = load_profile(source_gpu)
    copy = source.bandwidth_Bps[MemLevel.HBM]
    return hbm_Bps * source.hbm_read_bandwidth_Bps / copy if source.hbm_read_bandwidth_Bps > copy else 0.0


def fp32_issue_factor(target: MachineProfile, source: MachineProfile) -> tuple[float, str]:
    """(headroom(target) / headroom(source), why): 1 where either compute capability is not in SM_ISSUE."""
    t, s = sm_issue(target.compute_capability), sm_issue(source.compute_capability)
    if t is None or s is None:
        return 1.0, (f"no FP32 lane / dispatch figures for compute capability "
                     f"{(target if t is None else source).compute_capability or '(not given)'}: as fitted")
    x = t.headroom / s.headroom
    return x, (f"dispatch / FP32 lanes per SM: {t.dispatch_threads}/{t.fp32_lanes} on {target.name} "
               f"(sm_{target.compute_capability.replace('.', '')}) against {s.dispatch_threads}/{s.fp32_lanes} on "
               f"{source.name}")


def _sm_side(field: str) -> bool:
    """Ceilings the SMs deliver, each its share: compute peaks, L1 and L2 bandwidth (HBM's is the memory's)."""
    return field.startswith("peak_flops_per_s.") or field in ("bandwidth_Bps.L1", "bandwidth_Bps.L2")


def _measured_sm_count(target: MachineProfile, field: str, source_gpu: str) -> int | None:
    """SMs of the GPU a measured ceiling of ``target`` was measured on, when the profile says so and it is not the
    profile's own: the source record's ``sm_count``, or the source GPU's when the record is the source GPU's own
    (a profile made from the H200's by changing its SM count). None for datasheet figures and the profile's own
    measurements."""
    if target.source_kind(field) in DATASHEET_KINDS:
        return None
    key = target.provenance.get(field, "")
    record = target.sources.get(key) or {}
    if isinstance(record.get("sm_count"), int) and record["sm_count"] > 0:
        return int(record["sm_count"])
    try:
        source = load_profile(source_gpu)
    except Exception:  # noqa: BLE001 (a source GPU without a bundled profile: nothing to compare with)
        return None
    if key in source.sources and dict(source.sources[key]) == dict(record):
        return source.sm_count
    return None


_MARK = " (transferred to another GPU)"


def transfer_of(calibration_name: str, profile: MachineProfile) -> Transfer | None:
    """The transfer behind a prediction whose calibration is named ``fitted:GPU (transferred to another GPU)``
    (predictor/fitted.py); None for a calibration on its own GPU or the pure roofline."""
    if not calibration_name.startswith("fitted:") or not calibration_name.endswith(_MARK):
        return None
    return transfer_profile(profile, calibration_name[len("fitted:"):-len(_MARK)])


__all__ = ["transfer_of", "Transfer", "achievable_fractions", "transfer_profile", "Precision", "Unit"]
