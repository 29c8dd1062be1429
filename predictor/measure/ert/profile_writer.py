"""Raw ERT data + datasheet -> machine profile dict in the bundled format (schema_version 1).

Every ``value`` carries a ``source`` naming an entry of ``sources``: ``ert-<date>`` for what this
run measured, ``datasheet`` for what it did not (the datasheet numbers are also kept, as plain
numbers, under ``datasheet``). Units: FLOP/s (int8: OP/s), bytes/s, bytes, seconds, Hz.

The datasheet argument is a plain dict (see H200_DATASHEET for the shape); ``datasheet_from_profile``
turns a bundled profile (value/source entries) into that shape. A bundled profile can also be
passed whole as ``fallback_profile``: its non-datasheet entries (derived, assumed) then fill what
this run did not measure, with their own source records, so the result always validates.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

from .summary import summarise

SCHEMA_VERSION = 1
PRECISIONS = ("fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "int8")
UNITS = ("cuda", "tensor")
LEVELS = ("L1", "L2", "HBM")
SCALARS = ("sm_count", "sm_clock_hz", "l2_bytes", "hbm_bytes", "launch_overhead_s", "kernel_gap_s")
IDENTITY = ("full_name", "aliases", "arch", "compute_capability")

# Dense (no sparsity) numbers from NVIDIA's H200 SXM datasheet, as listed in
# shared/reference/ROOFLINE_FACTS.md; used only when no datasheet dict is given.
H200_DATASHEET = {
    "full_name": "NVIDIA H200",
    "aliases": ["h200-sxm", "h200-sxm-141gb"],
    "arch": "hopper",
    "compute_capability": "9.0",
    "sm_count": 132,
    "sm_clock_hz": 1.98e9,
    "l2_bytes": 62914560,
    "hbm_bytes": 1.41e11,
    "peak_flops_per_s": {
        "fp64": {"cuda": 3.4e13, "tensor": 6.7e13},
        "fp32": {"cuda": 6.7e13},
        "tf32": {"tensor": 4.94e14},
        "fp16": {"tensor": 9.89e14},
        "bf16": {"tensor": 9.89e14},
        "fp8": {"tensor": 1.979e15},
        "int8": {"tensor": 1.979e15},
    },
    "bandwidth_Bps": {"HBM": 4.8e12},
    "reference": "NVIDIA H200 Tensor Core GPU datasheet (dense figures)",
}

_ARCH = {6: "pascal", 7: "volta", 8: "ampere", 9: "hopper", 10: "blackwell", 12: "blackwell"}

# Series the ceilings come from when the caller did not choose (the bundled profiles' choice, see
# calibration/scripts/bundle_h200_profile.sh): L2 and HBM from the float4 copy sweep, L1 from the first plateau of
# the float4 read sweep. ERT's canonical scalar read-modify-write kernel (rmw_fp32) stays in the raw data but
# under-reports HBM on Hopper (2.70 TB/s against 3.95 TB/s for vectorised copies, as PyTorch's own copies reach).
PREFERRED_BANDWIDTH_SERIES = "copy_fp32x4"
PREFERRED_L1_SERIES = "read_fp32x4"
# the read-only stream's HBM plateau (profile field hbm_read_bandwidth_Bps: reads are priced at it, writes at what
# makes a copy run at the copy figure); written where the run has this series and HBM came from a copy series
HBM_READ_SERIES = "read_fp32x4"


def preferred_config(raw: dict) -> dict:
    """The raw run's config with the preferred series where the run measured them (without error)."""
    cfg = dict(raw.get("config", {}) or {})
    bw = raw.get("bandwidth", {}) or {}

    def ok(name: str) -> bool:
        return isinstance(bw.get(name), dict) and not bw[name].get("error") and bool(bw[name].get("points"))

    if ok(PREFERRED_BANDWIDTH_SERIES):
        cfg["canonical_series"] = PREFERRED_BANDWIDTH_SERIES
    if ok(PREFERRED_L1_SERIES):
        cfg["l1_series"] = PREFERRED_L1_SERIES
    return cfg


def _uses_run_defaults(raw: dict, summary: dict) -> bool:
    """True when ``summary`` took L2/HBM from the run's own configured series (no series was chosen)."""
    from .summary import CANONICAL_SERIES

    canon = (raw.get("config", {}) or {}).get("canonical_series", CANONICAL_SERIES)
    used = {rec.get("series") for lv, rec in summary.get("levels", {}).items() if lv in ("L2", "HBM")}
    return not used or used == {canon}


def arch_name(compute_capability: str) -> str | None:
    """'9.0' -> 'hopper' ('7.5' -> 'turing', '8.9' -> 'ada'); None when unknown."""
    try:
        major, minor = (int(x) for x in compute_capability.split(".")[:2])
    except (ValueError, AttributeError):
        return None
    if (major, minor) == (7, 5):
        return "turing"
    if (major, minor) == (8, 9):
        return "ada"
    return _ARCH.get(major)


def datasheet_from_profile(profile: dict) -> dict:
    """A bundled profile -> datasheet dict: its ``datasheet`` section, then every value whose
    source is the datasheet, then its identity fields."""
    sources = profile.get("sources", {}) or {}

    def is_sheet(entry) -> bool:
        src = entry.get("source")
        return src == "datasheet" or (sources.get(src, {}) or {}).get("kind") == "datasheet"

    out: dict = json.loads(json.dumps(profile.get("datasheet", {}) or {}))
    for key in SCALARS:
        e = profile.get(key)
        if isinstance(e, dict) and "value" in e and is_sheet(e) and key not in out:
            out[key] = e["value"]
    for prec, units in (profile.get("peak_flops_per_s", {}) or {}).items():
        for unit, e in (units or {}).items():
            if isinstance(e, dict) and "value" in e and is_sheet(e):
                out.setdefault("peak_flops_per_s", {}).setdefault(prec, {}).setdefault(unit, e["value"])
    for level, e in (profile.get("bandwidth_Bps", {}) or {}).items():
        if isinstance(e, dict) and "value" in e and is_sheet(e):
            out.setdefault("bandwidth_Bps", {}).setdefault(level, e["value"])
    for key in IDENTITY:
        if key in profile and key not in out:
            out[key] = profile[key]
    ref = (sources.get("datasheet", {}) or {}).get("reference")
    if ref and "reference" not in out:
        out["reference"] = ref
    return out


def _finite(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v > 0


def _fmt(v: float, unit: str) -> str:
    for scale, prefix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(v) >= scale:
            return f"{v / scale:.3g} {prefix}{unit}"
    return f"{v:.3g} {unit}"


def _notes(raw: dict, summ: dict) -> str:
    parts = []
    lv = summ["levels"]
    if "L1" in lv:
        l1 = lv["L1"]
        where = (f"up to {l1['per_sm_max_bytes'] / 1024:.0f} KiB per SM"
                 if "per_sm_max_bytes" in l1 else f"up to {l1['max_bytes'] / 2**20:.1f} MiB")
        how = ("block-local read kernel: each block re-reads a private slice via __ldg, so it measures L1 load "
               "bandwidth only" if str(l1["series"]).startswith("l1_") else
               "first plateau of a global read sweep: working sets small enough that re-reads hit each SM's L1")
        parts.append(f"L1 {_fmt(l1['bandwidth_Bps'], 'B/s')} from series {l1['series']} ({where}); {how}")
    for name in ("L2", "HBM"):
        if name in lv:
            r = lv[name]
            kind = ("copy: one read and one write per element" if str(r["series"]).startswith("copy")
                    else "ERT read-modify-write, 2 accesses per element")
            parts.append(f"{name} {_fmt(r['bandwidth_Bps'], 'B/s')} over working sets "
                         f"{r['min_bytes'] / 2**20:.2f}-{r['max_bytes'] / 2**20:.1f} MiB "
                         f"({r['series']}: {kind})")
    for name, why in summ["missing_levels"].items():
        parts.append(f"{name} not measured: {why}")
    parts.append("CUDA-core peaks: max of the ERT FLOPs-per-element sweep (FMA)")
    tp = summ["tensor_peaks"]
    if tp:
        parts.append("tensor peaks: median of large library GEMMs (" + ", ".join(
            f"{p}: {r['case']}" for p, r in sorted(tp.items())) + ")")
    wm = summ["tensor_other"].get("wmma_fp16")
    if wm:
        parts.append(f"own WMMA fp16 kernel reached {_fmt(wm, 'FLOP/s')}; not used as the ceiling "
                     "because networks run library GEMMs (Hopper warpgroup MMA), not mma.sync")
    for name, rec in (raw.get("tensor", {}) or {}).items():
        if isinstance(rec, dict) and rec.get("error"):
            parts.append(f"tensor {name} not measured: {rec['error'][:160]}")
    parts.append("launch_overhead_s: back-to-back eager empty-kernel launches from Python (host "
                 "issue cost); kernel_gap_s: per kernel inside a CUDA-graph replay")
    if raw.get("errors"):
        parts.append("errors: " + "; ".join(str(e)[:160] for e in raw["errors"]))
    return ". ".join(parts)


def _fallback_entry(fallback: dict | None, path: tuple[str, ...]):
    """The bundled profile's {"value", "source"} at ``path`` and its source record, or None."""
    if not fallback:
        return None
    node = fallback
    for key in path:
        node = node.get(key) if isinstance(node, dict) else None
    if not (isinstance(node, dict) and _finite(node.get("value"))):
        return None
    src = node.get("source")
    rec = (fallback.get("sources", {}) or {}).get(src)
    if not isinstance(src, str) or not isinstance(rec, dict):
        return None
    return node["value"], src, rec


def datasheet_ratios(profile: dict) -> dict[str, float]:
    """measured / datasheet for every measured value that has a datasheet number (a review aid:
    a ratio well above 1 means the kernel did less work than counted, or the sheet is wrong)."""
    sheet = profile.get("datasheet", {}) or {}
    sources = profile.get("sources", {}) or {}

    def measured(e) -> bool:
        return isinstance(e, dict) and (sources.get(e.get("source"), {}) or {}).get("kind") == "ert"

    out = {}
    for prec, units in (profile.get("peak_flops_per_s", {}) or {}).items():
        for unit, e in units.items():
            ref = ((sheet.get("peak_flops_per_s", {}) or {}).get(prec, {}) or {}).get(unit)
            if measured(e) and _finite(ref):
                out[f"peak_flops_per_s.{prec}.{unit}"] = e["value"] / ref
    for level, e in (profile.get("bandwidth_Bps", {}) or {}).items():
        ref = (sheet.get("bandwidth_Bps", {}) or {}).get(level)
        if measured(e) and _finite(ref):
            out[f"bandwidth_Bps.{level}"] = e["value"] / ref
    return out


def build_profile(raw: dict, datasheet: dict | None = None, *, name: str = "h200",
                  raw_data: str | None = None, summary: dict | None = None,
                  fallback_profile: dict | None = None, series: dict | None = None) -> dict:
    """The profile dict. ``raw_data`` is the raw JSON's path relative to the profile file.

    Each value: measured by this run (source ``ert-<date>``), else the ``fallback_profile`` entry
    with its own source record copied (e.g. the bundled profile's derived L1 or assumed launch
    overhead), else the plain ``datasheet`` number (source ``datasheet``), else what the run saw of the
    device (SM clock: nvidia-smi's max SM clock; memory: CUDA's total memory; source ``device-<date>``),
    else left out. Without a chosen series (``summary`` None, or computed on the run's own configured
    series), L2/HBM come from PREFERRED_BANDWIDTH_SERIES and L1 from PREFERRED_L1_SERIES where the run has
    them; ``series`` ({"canonical_series": name or None, "l1_series": name or None}) names the caller's explicit
    choices, which are kept while the other level takes the preferred series;
    a given ``summary`` dict is then updated in place to the one used, so the caller's report shows the
    ceilings the profile holds.
    """
    sheet = datasheet if datasheet is not None else {}
    explicit = {k: v for k, v in (series or {}).items() if v}
    if series is not None or summary is None or _uses_run_defaults(raw, summary):
        chosen = summarise({**raw, "config": {**preferred_config(raw), **explicit}})
        if summary is not None:
            summary.clear()
            summary.update(chosen)
        summary = chosen
    summ = summary
    prov = raw.get("provenance", {}) or {}
    gpu = prov.get("gpu_info", {}) or {}
    date = str(prov.get("date", "unknown"))
    src = f"ert-{date[:10]}"
    used: dict[str, dict] = {}

    def entry(path: tuple[str, ...], measured, sheet_value) -> dict | None:
        if _finite(measured):
            used[src] = {}
            value = int(measured) if isinstance(measured, int) else float(measured)
            return {"value": value, "source": src}
        fb = _fallback_entry(fallback_profile, path)
        if fb is not None:
            used[fb[1]] = fb[2]
            return {"value": fb[0], "source": fb[1]}
        if _finite(sheet_value):
            used.setdefault("datasheet", {})
            return {"value": sheet_value, "source": "datasheet"}
        return None

    cc = gpu.get("compute_capability") or sheet.get("compute_capability")
    profile: dict = {
        "schema_version": SCHEMA_VERSION,
        "name": name,
        "full_name": gpu.get("name") or prov.get("gpu") or sheet.get("full_name") or name,
        "aliases": list(sheet.get("aliases", [])),
        "arch": arch_name(cc) or sheet.get("arch"),
        "compute_capability": cc,
    }
    measured_scalars = {"sm_count": gpu.get("sm_count"), "l2_bytes": gpu.get("l2_bytes"),
                        "launch_overhead_s": summ.get("launch_overhead_s"),
                        "kernel_gap_s": summ.get("kernel_gap_s")}
    device = _device_facts(raw)
    dev_src = f"device-{date[:10]}"
    for key in SCALARS:
        e = entry((key,), measured_scalars.get(key), sheet.get(key))
        if e is None and _finite(device.get(key)):  # no datasheet: what the run saw of the device
            used[dev_src] = {}
            e = {"value": device[key], "source": dev_src}
        if e is not None:
            profile[key] = e
    if not sheet and "memory_bytes" in device and _finite(device["memory_bytes"]):  # no datasheet: as the run saw
        used[dev_src] = {}
        profile["memory_bytes"] = {"value": device["memory_bytes"], "source": dev_src}

    sheet_flops = sheet.get("peak_flops_per_s", {}) or {}
    cuda = summ.get("compute_peaks", {})
    tensor = summ.get("tensor_peaks", {})
    flops: dict = {}
    for prec in PRECISIONS:
        units = {}
        for unit in UNITS:
            m = (cuda.get(prec, {}) or {}).get("cuda") if unit == "cuda" else \
                (tensor.get(prec, {}) or {}).get("flops_per_s")
            e = entry(("peak_flops_per_s", prec, unit), m,
                      (sheet_flops.get(prec, {}) or {}).get(unit))
            if e is not None:
                units[unit] = e
        if units:
            flops[prec] = units
    profile["peak_flops_per_s"] = flops

    sheet_bw = sheet.get("bandwidth_Bps", {}) or {}
    bw = {}
    for level in LEVELS:
        e = entry(("bandwidth_Bps", level), (summ["levels"].get(level) or {}).get("bandwidth_Bps"),
                  sheet_bw.get(level))
        if e is not None:
            bw[level] = e
    profile["bandwidth_Bps"] = bw
    hbm_rec = summ["levels"].get("HBM") or {}
    read_series = (raw.get("bandwidth", {}) or {}).get(HBM_READ_SERIES)
    if "HBM" in bw and bw["HBM"]["source"] == src and str(hbm_rec.get("series", "")).startswith("copy") \
            and isinstance(read_series, dict) and not read_series.get("error") and read_series.get("points"):
        read = summarise({**raw, "config": {**preferred_config(raw), "canonical_series": HBM_READ_SERIES}})
        value = (read["levels"].get("HBM") or {}).get("bandwidth_Bps")
        if _finite(value) and value >= bw["HBM"]["value"]:
            profile["hbm_read_bandwidth_Bps"] = {"value": float(value), "source": src}

    profile["datasheet"] = {k: v for k, v in sheet.items()
                            if k in SCALARS or k in ("peak_flops_per_s", "bandwidth_Bps")}
    clocks = raw.get("clocks", {}) or {}
    driver = next((c.get("driver_version") for c in clocks.values()
                   if isinstance(c, dict) and c.get("driver_version")), None)
    sources: dict = {}
    if "datasheet" in used or profile["datasheet"]:
        fb_sheet = ((fallback_profile or {}).get("sources", {}) or {}).get("datasheet", {}) or {}
        sources["datasheet"] = {"kind": "datasheet", "reference": sheet.get(
            "reference", fb_sheet.get("reference", "vendor datasheet"))}
    for key, rec in used.items():
        if key not in (src, "datasheet"):
            sources[key] = dict(rec)
    sources[src] = {
        "kind": "ert", "date": date, "command": prov.get("command"), "gpu": profile["full_name"],
        "driver": driver or "unknown", "cuda_runtime": prov.get("cuda_runtime"),
        "cupy": prov.get("cupy"), "clocks_seen": clocks, "raw_data": raw_data,
        "notes": _notes(raw, summ),
    }
    if dev_src in used:
        sources[dev_src] = {"kind": "measured", "date": date, "reference": (
            "seen on the device by the ERT run: SM clock = nvidia-smi clocks.max.sm "
            f"({device.get('sm_clock_hz', 0) / 1e6:.0f} MHz), memory = CUDA total memory "
            f"({device.get('memory_bytes', 0):.0f} B) (raw data: provenance.gpu_info, clocks)")}
    profile["sources"] = sources
    high = {k: r for k, r in datasheet_ratios(profile).items() if r > 1.1}
    if high:
        sources[src]["notes"] += ". CHECK: above the datasheet: " + ", ".join(
            f"{k} x{r:.2f}" for k, r in sorted(high.items()))
    return profile


def _device_facts(raw: dict) -> dict:
    """SM clock (nvidia-smi's max SM clock over the run's clock samples) and device memory (CUDA's total)."""
    out = {}
    clocks = [c.get("max_sm_clock_mhz") for c in (raw.get("clocks", {}) or {}).values() if isinstance(c, dict)]
    clocks = [c for c in clocks if _finite(c)]
    if clocks:
        out["sm_clock_hz"] = float(max(clocks)) * 1e6
    mem = ((raw.get("provenance", {}) or {}).get("gpu_info", {}) or {}).get("total_mem_bytes")
    if _finite(mem):
        out["hbm_bytes"] = float(mem)
        out["memory_bytes"] = int(mem)
    return out


def sanitise(obj):
    """JSON-safe copy: tuples -> lists, non-finite floats -> None."""
    if isinstance(obj, dict):
        return {str(k): sanitise(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [sanitise(v) for v in obj]
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if hasattr(obj, "item") and not isinstance(obj, (str, bytes)):  # numpy scalars
        try:
            return sanitise(obj.item())
        except Exception:
            return str(obj)
    return obj


def write_json(obj, path: Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(sanitise(obj), indent=2, allow_nan=False) + "\n")
    tmp.replace(path)
    return path


def output_paths(profile_path: Path) -> dict:
    """Where the raw data and charts go, beside the profile: <stem>_ert_raw.json, <stem>_ert_*."""
    p = Path(profile_path)
    return {"profile": p, "raw": p.with_name(f"{p.stem}_ert_raw.json"),
            "chart_prefix": p.with_name(f"{p.stem}_ert")}


def write_profile(raw: dict, profile_path: Path, datasheet: dict | None = None, *,
                  name: str = "h200", fallback_profile: dict | None = None) -> dict:
    """Write the raw JSON and the profile beside it; returns the profile dict."""
    paths = output_paths(profile_path)
    write_json(raw, paths["raw"])
    profile = build_profile(raw, datasheet, name=name, raw_data=paths["raw"].name,
                            fallback_profile=fallback_profile)
    write_json(profile, paths["profile"])
    return profile
