"""Raw ERT data -> levels and peaks (pure Python + numpy; runs on a JSON file, no GPU).

``summarise(raw)`` is the one entry point; tests call it on committed sweep data.
Levels:
- L2 and HBM: plateaus of the canonical global sweep (``raw["config"]["canonical_series"]``,
  default ``rmw_fp32``, the ERT kernel), named with the L2 size and the L1-kernel level as hints.
- L1: the first plateau of the block-local L1 sweep, if it stands at least ``drop`` above L2;
  else the global sweep's own L1 plateau, if it shows one; else missing, with the reason.
Peaks: CUDA-core = max of the FMA and add sweeps (the FMA one in practice); tensor = the
fastest library GEMM per precision (median time of its runs); the WMMA kernel is reported apart.
"""
from __future__ import annotations

import math

from .plateaus import Plateau, Staircase, detect_plateaus, name_levels

CANONICAL_SERIES = "rmw_fp32"
L1_SERIES = "l1_read_fp32x4"
DEFAULT_PLATEAU_PARAMS = {"tolerance": 0.05, "min_points": 6, "drop": 0.15, "max_outliers": 1}
DEFAULT_L1_MATCH = 0.6  # a global-sweep plateau at >= 60% of the L1-kernel level is L1


def _finite(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v > 0


def _xy(series: dict) -> tuple[list[float], list[float]]:
    pts = [p for p in series.get("points", []) if _finite(p.get("bandwidth_Bps"))]
    return [float(p["working_set_bytes"]) for p in pts], [float(p["bandwidth_Bps"]) for p in pts]


def _plateaus(series: dict, params: dict) -> tuple[Plateau, ...]:
    x, y = _xy(series)
    return detect_plateaus(x, y, **{k: params[k] for k in DEFAULT_PLATEAU_PARAMS})


def _level(p: Plateau, series_name: str, sm_count: int | None = None) -> dict:
    """A level as a dict; with ``sm_count`` (block-local sweep) also the bytes per SM, assuming
    the resident blocks spread evenly over the SMs."""
    rec = {"bandwidth_Bps": p.bandwidth_Bps, "min_bytes": p.min_bytes, "max_bytes": p.max_bytes,
           "n_points": p.n_points, "series": series_name}
    if sm_count:
        rec["per_sm_min_bytes"] = p.min_bytes / sm_count
        rec["per_sm_max_bytes"] = p.max_bytes / sm_count
    return rec


def _bandwidth_levels(raw: dict, params: dict) -> tuple[dict, dict, dict]:
    bw = raw.get("bandwidth", {}) or {}
    config = raw.get("config", {}) or {}
    canon_name = config.get("canonical_series", CANONICAL_SERIES)
    l1_name = config.get("l1_series", L1_SERIES)
    gpu = (raw.get("provenance", {}) or {}).get("gpu_info", {}) or {}
    l2_bytes = gpu.get("l2_bytes") or None
    sm_count = gpu.get("sm_count") or None

    l1_series = bw.get(l1_name) if isinstance(bw.get(l1_name), dict) else None
    l1_kernel = None
    if l1_series and not l1_series.get("error"):
        ps = _plateaus(l1_series, params)
        l1_kernel = ps[0] if ps else None

    per_series: dict = {}
    for name, series in bw.items():
        if not isinstance(series, dict) or series.get("error"):
            continue
        hint = l1_kernel.bandwidth_Bps if l1_kernel else None
        per_series[name] = name_levels(_plateaus(series, params), l2_bytes=l2_bytes,
                                       l1_bandwidth_Bps=hint, first_is_l1=(name == l1_name),
                                       l1_match=params.get("l1_match", DEFAULT_L1_MATCH))

    levels: dict = {}
    missing: dict = {}
    canon = per_series.get(canon_name)
    if canon is None:
        reason = f"canonical series '{canon_name}' missing or failed"
        missing.update({"L2": reason, "HBM": reason})
        canon = Staircase(())
    for lv in ("L2", "HBM"):
        p = canon.level(lv)
        if p is not None:
            levels[lv] = _level(p, canon_name)
        elif lv not in missing:
            missing[lv] = dict(canon.missing).get(lv, "not found")
    l2 = canon.level("L2")
    drop = params.get("drop", DEFAULT_PLATEAU_PARAMS["drop"])
    if l1_kernel is not None and (l2 is None or l1_kernel.bandwidth_Bps >= (1 + drop) * l2.bandwidth_Bps):
        levels["L1"] = _level(l1_kernel, l1_name, sm_count=l1_series.get("sm_count") or sm_count)
    elif canon.level("L1") is not None:
        levels["L1"] = _level(canon.level("L1"), canon_name)
    elif l1_kernel is not None:
        missing["L1"] = ("the L1 kernel's first plateau ({:.3g} B/s) is not {:.0%} above L2"
                         .format(l1_kernel.bandwidth_Bps, drop))
    else:
        missing["L1"] = ("no L1 sweep plateau" if l1_series else "no L1 sweep in the data")
    series_out = {name: s.to_dict() for name, s in per_series.items()}
    order = ("L1", "L2", "HBM")
    levels = {k: levels[k] for k in order if k in levels}
    missing = {k: missing[k] for k in order if k in missing}
    return levels, missing, series_out


def _compute_peaks(raw: dict) -> dict:
    peaks: dict = {}
    for sweep in raw.get("compute", []) or []:
        pts = [p for p in sweep.get("points") or [] if _finite(p.get("flops_per_s"))]
        if sweep.get("error") or not pts:
            continue
        prec, op = sweep["precision"], sweep["op"]
        best = max(pts, key=lambda p: p["flops_per_s"])
        rec = peaks.setdefault(prec, {})
        rec[op] = {"flops_per_s": best["flops_per_s"], "kernel": best.get("kernel"),
                   "flops_per_element": best.get("flops_per_element")}
    out = {}
    for prec, ops in peaks.items():
        top = max(ops.values(), key=lambda r: r["flops_per_s"])
        out[prec] = {"cuda": top["flops_per_s"], "by_op": ops}
    return out


def _tensor_peaks(raw: dict) -> tuple[dict, dict]:
    ceilings: dict = {}
    others: dict = {}
    for name, rec in (raw.get("tensor", {}) or {}).items():
        if not isinstance(rec, dict) or rec.get("error") or not _finite(rec.get("flops_per_s")):
            continue
        if name.startswith("wmma") or rec.get("unit") != "tensor":
            others[name] = rec["flops_per_s"]
            continue
        prec = rec["precision"]
        cur = ceilings.get(prec)
        if cur is None or rec["flops_per_s"] > cur["flops_per_s"]:
            ceilings[prec] = {"flops_per_s": rec["flops_per_s"], "case": name,
                              "method": rec.get("method")}
    return ceilings, others


def summarise(raw: dict, **plateau_params) -> dict:
    """Levels (L1/L2/HBM with bandwidth and working-set range), compute and tensor peaks, launch
    costs, and every series' named plateaus; plain JSON-able dict.

    ``plateau_params`` override tolerance / min_points / drop / max_outliers / l1_match; defaults
    come from ``raw["config"]["plateaus"]`` when present, else DEFAULT_PLATEAU_PARAMS and
    DEFAULT_L1_MATCH.
    """
    params = dict(DEFAULT_PLATEAU_PARAMS, l1_match=DEFAULT_L1_MATCH)
    params.update(((raw.get("config", {}) or {}).get("plateaus", {}) or {}))
    params.update(plateau_params)
    levels, missing, series = _bandwidth_levels(raw, params)
    tensor, other_tensor = _tensor_peaks(raw)
    launch = raw.get("launch", {}) or {}
    return {
        "levels": levels,
        "missing_levels": missing,
        "series_plateaus": series,
        "compute_peaks": _compute_peaks(raw),
        "tensor_peaks": tensor,
        "tensor_other": other_tensor,
        "launch_overhead_s": launch.get("eager_per_launch_s"),
        "kernel_gap_s": launch.get("graph_per_kernel_s"),
        "plateau_params": params,
    }
