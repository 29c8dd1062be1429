"""Machine profiles: a GPU's ceilings as data with provenance for every number.

A profile file is JSON (see predictor/machine/profiles/*.json): each number is
``{"value": x, "source": key}`` and ``sources[key]`` says where it came from (datasheet, an ERT run
with its date, command and raw data, a published measurement, or a stated derivation).
Loading validates every field and names the one that is wrong; nothing in a profile is executed.
"""
from __future__ import annotations

import json
import math
import os
from functools import lru_cache
from typing import Any, Mapping

from ..types import MemLevel, Precision, PredictorError, Unit, frozen_map
from ..frozen import frozen_dataclass
from .arch import arch_info

SCHEMA_VERSION = 1
MAX_PROFILE_BYTES = 1 << 20
MIN_VALUE, MAX_VALUE = 1e-12, 1e21  # plausible range of every number (seconds, bytes, B/s, FLOP/s, Hz, SMs)
_PRECISIONS = {p.value for p in Precision}
_UNITS = {u.value for u in Unit}
_LEVELS = {lv.value for lv in MemLevel}
_SCALARS = ("sm_count", "sm_clock_hz", "l2_bytes", "hbm_bytes", "launch_overhead_s", "kernel_gap_s")


@frozen_dataclass
class MachineProfile:
    """A GPU's ceilings and sizes, every number with its source (see the module text)."""

    name: str
    full_name: str
    aliases: tuple[str, ...]
    arch: str
    sm_count: int
    sm_clock_hz: float
    l2_bytes: float
    hbm_bytes: float
    launch_overhead_s: float  # per kernel launched eagerly back to back
    kernel_gap_s: float  # per kernel inside a CUDA graph replay
    peak_flops_per_s: Mapping[tuple[Precision, Unit], float]
    bandwidth_Bps: Mapping[MemLevel, float]
    provenance: Mapping[str, str]  # dotted field path -> source key
    sources: Mapping[str, Mapping[str, Any]]
    datasheet: Mapping[str, Any]
    path: str = ""
    # device memory a process can address (nvidia-smi's memory.total); profiles without it use hbm_bytes
    memory_bytes: float = 0.0
    # SM clock the GPU holds under sustained load where the vendor publishes one (power-limited parts); 0: not
    # published (the peaks are taken at sm_clock_hz, the boost clock)
    sustained_sm_clock_hz: float = 0.0
    compute_capability: str = ""  # "major.minor" (machine/arch.py SM_ISSUE); "" where a profile does not say
    # HBM bandwidth of a read-only stream (ERT's read series) where measured; 0: not measured (reads are priced at
    # bandwidth_Bps[HBM], the copy series' figure: one read and one write per element)
    hbm_read_bandwidth_Bps: float = 0.0

    @property
    def tensor_core_generation(self) -> int | None:
        """1 Volta, 2 Turing, 3 Ampere, 4 Ada/Hopper, 5 Blackwell, 0 none (Pascal); None for an unknown arch."""
        info = arch_info(self.arch)
        return info.tensor_core_generation if info else None

    def peak(self, precision: Precision, unit: Unit) -> float | None:
        return self.peak_flops_per_s.get((precision, unit))

    def bandwidth(self, level: MemLevel) -> float:
        return self.bandwidth_Bps[level]

    def hbm_time_s(self, bytes_total: float, bytes_written: float) -> float:
        """Seconds the HBM needs for ``bytes_total`` bytes of which ``bytes_written`` are writes: reads at the
        read-only rate and writes at the rate that makes a copy (as many reads as writes) run at the copy figure,
        bandwidth_Bps[HBM]; without a read-only figure, every byte at the copy figure. Ignores: a pure write
        stream's own rate (not measured; priced at the copy-derived write rate)."""
        copy = self.bandwidth_Bps[MemLevel.HBM]
        read_bw = self.hbm_read_bandwidth_Bps
        if read_bw <= copy or bytes_total <= 0.0:
            return bytes_total / copy
        written = min(max(bytes_written, 0.0), bytes_total)
        return (bytes_total - written) / read_bw + written * (2.0 / copy - 1.0 / read_bw)

    def has_tensor(self, precision: Precision) -> bool:
        return (precision, Unit.TENSOR) in self.peak_flops_per_s

    def source_kind(self, field_path: str) -> str:
        key = self.provenance.get(field_path, "")
        return str(self.sources.get(key, {}).get("kind", "unknown"))

    def to_json(self) -> dict:
        """The ``gpu`` object of predict's JSON output."""
        peaks: dict[str, dict[str, float]] = {}
        for (p, u), v in self.peak_flops_per_s.items():
            peaks.setdefault(p.value, {})[u.value] = v
        return {
            "name": self.name,
            "full_name": self.full_name,
            "arch": self.arch,
            "sm_count": self.sm_count,
            "l2_bytes": self.l2_bytes,
            "peak_flops_per_s": peaks,
            "bandwidth_Bps": {lv.value: v for lv, v in self.bandwidth_Bps.items()},
            "launch_overhead_s": self.launch_overhead_s,
            "kernel_gap_s": self.kernel_gap_s,
            "memory_bytes": self.memory_bytes or self.hbm_bytes,
            "provenance": {"fields": dict(self.provenance), "sources": {k: dict(v) for k, v in self.sources.items()}},
        }


# ------------------------------------------------------------------------------------------------
def normalise_name(name: str) -> str:
    """A GPU name as users type it -> the key aliases are matched on: case-insensitive, a leading "NVIDIA" or
    "Tesla" dropped, spaces and underscores as "-" ("Tesla V100-PCIE-32GB" -> "v100-pcie-32gb",
    "NVIDIA A100 80GB PCIe" -> "a100-80gb-pcie")."""
    words = str(name).strip().lower().replace("_", " ").split()
    while len(words) > 1 and words[0] in ("nvidia", "tesla"):
        words = words[1:]
    return "-".join(words)


def bundled_names() -> dict[str, str]:
    """normalised name or alias -> bundled profile file name (see normalise_name)."""
    return dict(_bundled_names())


PROFILES_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "profiles")


def _read_bundled(file_name: str) -> str:
    with open(os.path.join(PROFILES_DIR, file_name), encoding="utf-8") as f:
        return f.read()


@lru_cache(maxsize=1)
def _bundled_names() -> dict[str, str]:
    out: dict[str, str] = {}
    for name in sorted(os.listdir(PROFILES_DIR)):
        if name.endswith(".json"):
            doc = json.loads(_read_bundled(name))
            for alias in [doc.get("name", "")] + list(doc.get("aliases", [])):
                out[normalise_name(alias)] = name
    return out


def load_profile(name_or_path: str) -> MachineProfile:
    """A bundled profile by name or alias (case-insensitive), or a user's profile file by path."""
    looks_like_path = name_or_path.endswith(".json") or os.sep in name_or_path
    if looks_like_path:
        return _load_file(name_or_path)
    key = normalise_name(name_or_path)
    # the file named after the key, when the key is its name or alias, is the one the index of every bundled
    # profile names (no alias names two profiles: tests/machine/test_library.py): read it alone
    own = key + ".json"
    if key and os.sep not in key and os.path.isfile(os.path.join(PROFILES_DIR, own)):
        doc = json.loads(_read_bundled(own))
        if key in {normalise_name(a) for a in [doc.get("name", "")] + list(doc.get("aliases", []))}:
            return parse_profile(doc, f"bundled:{own}")
    names = bundled_names()
    if key not in names:
        known = sorted({f[:-5] for f in names.values()})
        raise PredictorError(f"unknown GPU '{name_or_path}' (known: {', '.join(known)}; or give a profile .json path)")
    return parse_profile(json.loads(_read_bundled(names[key])), f"bundled:{names[key]}")


def _load_file(path: str) -> MachineProfile:
    if not os.path.isfile(path):
        raise PredictorError(f"no such GPU profile file: {path}")
    if os.path.getsize(path) > MAX_PROFILE_BYTES:
        raise PredictorError(f"GPU profile {path} is larger than 1 MB; not a profile")
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f, parse_constant=_reject_constant)
    except (ValueError, UnicodeDecodeError) as e:
        raise PredictorError(f"GPU profile {path} is not valid JSON: {' '.join(str(e).split())[:200]}") from None
    except RecursionError:
        raise PredictorError(f"GPU profile {path} is not valid JSON: nested too deeply") from None
    except OSError as e:
        raise PredictorError(f"cannot read GPU profile {path}: {e.strerror}") from None
    return parse_profile(doc, path)


def _reject_constant(name: str):
    raise ValueError(f"{name} is not a number")


def _bad(where: str, field: str, why: str) -> PredictorError:
    return PredictorError(f"GPU profile {where}: field '{field}' {why}")


def _number(doc: Any, field: str, where: str, sources: Mapping, prov: dict, integer: bool = False) -> float:
    if doc is None:
        raise _bad(where, field, 'is missing (expected {"value": number, "source": key})')
    if not isinstance(doc, dict) or "value" not in doc or "source" not in doc:
        raise _bad(where, field, 'must be an object {"value": number, "source": key}')
    v, src = doc["value"], doc["source"]
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
        raise _bad(where, field, f"must be a finite positive number, got {v!r}")
    if not MIN_VALUE <= v <= MAX_VALUE:
        raise _bad(where, field, f"must be between {MIN_VALUE:g} and {MAX_VALUE:g} (in base units), got {v!r}")
    if integer and int(v) != v:
        raise _bad(where, field, f"must be a whole number, got {v!r}")
    if not isinstance(src, str) or src not in sources:
        raise _bad(where, field, f"names source {src!r}, which is not in 'sources'")
    prov[field] = src
    return int(v) if integer else float(v)


def parse_profile(doc: Any, where: str = "<profile>") -> MachineProfile:
    """Validate a profile document and build a MachineProfile; errors name the field."""
    if not isinstance(doc, dict):
        raise PredictorError(f"GPU profile {where}: top level must be a JSON object")
    if doc.get("schema_version") != SCHEMA_VERSION:
        raise _bad(where, "schema_version", f"must be {SCHEMA_VERSION}")
    for field in ("name", "arch"):
        if not isinstance(doc.get(field), str) or not doc[field]:
            raise _bad(where, field, "must be a non-empty string")
    sources = doc.get("sources")
    if not isinstance(sources, dict) or not sources or not all(isinstance(v, dict) for v in sources.values()):
        raise _bad(where, "sources", "must be an object of source objects")
    aliases = doc.get("aliases", [])
    if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
        raise _bad(where, "aliases", "must be a list of strings")
    prov: dict[str, str] = {}
    scalars = {}
    for field in _SCALARS:
        scalars[field] = _number(doc.get(field), field, where, sources, prov, integer=field == "sm_count")
    peaks_doc = doc.get("peak_flops_per_s")
    if not isinstance(peaks_doc, dict) or not peaks_doc:
        raise _bad(where, "peak_flops_per_s", "must be an object by precision")
    peaks: dict[tuple[Precision, Unit], float] = {}
    for p, by_unit in peaks_doc.items():
        if p not in _PRECISIONS:
            raise _bad(where, f"peak_flops_per_s.{p}", f"is not a precision ({', '.join(sorted(_PRECISIONS))})")
        if not isinstance(by_unit, dict):
            raise _bad(where, f"peak_flops_per_s.{p}", "must be an object by unit (cuda, tensor)")
        for u, num in by_unit.items():
            if u not in _UNITS:
                raise _bad(where, f"peak_flops_per_s.{p}.{u}", "is not a unit (cuda, tensor)")
            peaks[(Precision(p), Unit(u))] = _number(num, f"peak_flops_per_s.{p}.{u}", where, sources, prov)
    if (Precision.FP32, Unit.CUDA) not in peaks:
        raise _bad(where, "peak_flops_per_s.fp32.cuda", "is required")
    info = arch_info(doc["arch"])
    for (p, u) in peaks:
        if info is not None and u is Unit.TENSOR and p.value not in info.tensor_precisions:
            raise _bad(where, f"peak_flops_per_s.{p.value}.tensor",
                       f"is not possible on {info.name} (tensor cores of generation {info.tensor_core_generation} "
                       f"take {', '.join(sorted(info.tensor_precisions)) or 'nothing: no tensor cores'})")
    bw_doc = doc.get("bandwidth_Bps")
    if not isinstance(bw_doc, dict):
        raise _bad(where, "bandwidth_Bps", "must be an object with L1, L2, HBM")
    bw: dict[MemLevel, float] = {}
    for lv in ("L1", "L2", "HBM"):
        bw[MemLevel(lv)] = _number(bw_doc.get(lv), f"bandwidth_Bps.{lv}", where, sources, prov)
    for lv in bw_doc:
        if lv not in _LEVELS:
            raise _bad(where, f"bandwidth_Bps.{lv}", "is not a memory level (L1, L2, HBM)")
    datasheet = doc.get("datasheet", {})
    if not isinstance(datasheet, dict):
        raise _bad(where, "datasheet", "must be an object")
    memory = _number(doc["memory_bytes"], "memory_bytes", where, sources, prov, integer=True) \
        if "memory_bytes" in doc else scalars["hbm_bytes"]
    sustained = _number(doc["sustained_sm_clock_hz"], "sustained_sm_clock_hz", where, sources, prov) \
        if "sustained_sm_clock_hz" in doc else 0.0
    hbm_read = _number(doc["hbm_read_bandwidth_Bps"], "hbm_read_bandwidth_Bps", where, sources, prov) \
        if "hbm_read_bandwidth_Bps" in doc else 0.0
    if hbm_read and not bw[MemLevel.HBM] <= hbm_read < 2.0 * bw[MemLevel.HBM]:
        raise _bad(where, "hbm_read_bandwidth_Bps", f"must be at least bandwidth_Bps.HBM ({bw[MemLevel.HBM]:g}: a "
                   f"copy reads and writes) and below twice it, got {hbm_read:g}")
    cc = doc.get("compute_capability", "")
    if not isinstance(cc, str) or cc and not _is_cc(cc):
        raise _bad(where, "compute_capability", f"must be a string 'major.minor', got {cc!r}"[:200])
    if sustained > scalars["sm_clock_hz"]:
        raise _bad(where, "sustained_sm_clock_hz", f"must not exceed sm_clock_hz ({scalars['sm_clock_hz']:g})")
    return MachineProfile(
        name=doc["name"],
        full_name=str(doc.get("full_name", doc["name"])),
        aliases=tuple(aliases),
        arch=doc["arch"],
        sm_count=scalars["sm_count"],
        sm_clock_hz=scalars["sm_clock_hz"],
        l2_bytes=scalars["l2_bytes"],
        hbm_bytes=scalars["hbm_bytes"],
        launch_overhead_s=scalars["launch_overhead_s"],
        kernel_gap_s=scalars["kernel_gap_s"],
        peak_flops_per_s=frozen_map(peaks),
        bandwidth_Bps=frozen_map(bw),
        provenance=frozen_map(prov),
        sources=frozen_map({k: frozen_map(v) for k, v in sources.items()}),
        datasheet=frozen_map(datasheet),
        path=where,
        memory_bytes=float(memory),
        sustained_sm_clock_hz=float(sustained),
        compute_capability=cc,
        hbm_read_bandwidth_Bps=float(hbm_read),
    )


def _is_cc(text: str) -> bool:
    """``text`` is 'major.minor', each one to three ASCII digits (the regular expression [0-9]{1,3}\\.[0-9]{1,3},
    without compiling one at start-up)."""
    major, dot, minor = text.partition(".")
    return bool(dot) and 0 < len(major) <= 3 and 0 < len(minor) <= 3 and all(c in "0123456789" for c in major + minor)
