"""The collective model against published nccl-tests rows, message size by message size.

Reads ``calibration/data/published/nccl_tests_published.json``: tables of ``all_reduce_perf`` rows copied as
printed, each with its source address, the system it is compared on and what that assumes. A row is parsed
from its text (size, then the out-of-place time, algbw and busbw); the model predicts the time of that
collective and the error is ``published time / predicted time - 1`` (= predicted busbw / published busbw - 1,
without the rounding of the printed bandwidths). Errors are summarised per table and per size range
(``latency`` up to 64 KiB, ``medium`` up to 64 MiB, ``large`` beyond), since the model's latency terms and its
bandwidth terms are checked by different rows.
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, replace

from predictor.distributed.collectives import bus_factor, collective_time, layout_for
from predictor.distributed.system import SystemProfile, load_system
from predictor.types import PredictorError

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # calibration/
TABLES = os.path.join(HERE, "data", "published", "nccl_tests_published.json")
RANGES = ("latency", "medium", "large")
_ROW = re.compile(r"^\s*(?:\S*:)?\s*(\d+)\s+(\d+)\s+(\w+)\s+(\w+)\s+(-?\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+(\S+)")


@dataclass(frozen=True)
class Row:
    size_bytes: int
    count: int
    dtype: str
    time_us: float
    algbw_GBps: float
    busbw_GBps: float


def parse_row(text: str) -> Row:
    """One printed ``all_reduce_perf`` row (an optional ``0:`` or ``[1,0]<stdout>:`` prefix allowed)."""
    m = _ROW.match(text)
    if not m:
        raise PredictorError(f"not an nccl-tests row: {text.strip()[:80]!r}")
    return Row(int(m.group(1)), int(m.group(2)), m.group(3), float(m.group(6)), float(m.group(7)), float(m.group(8)))


def consistent(row: Row, ranks: int, op: str = "all_reduce") -> bool:
    """The printed bandwidths follow from size and time (algbw = size / time, busbw = algbw x factor) within
    the rounding of the printout: a guard against a row mistyped when it was copied."""
    if row.time_us <= 0:
        return False
    alg = row.size_bytes / (row.time_us * 1e3)
    bus = alg * bus_factor(op, ranks)

    def close(printed: float, value: float) -> bool:
        return abs(printed - value) <= max(0.011, 0.002 * value)

    return close(row.algbw_GBps, alg) and close(row.busbw_GBps, bus)


def size_range(size_bytes: float, ranges: dict) -> str:
    for name in RANGES:
        lo, hi = ranges[name]
        if lo <= size_bytes <= hi:
            return name
    return RANGES[-1]


def fabric_class(table: dict) -> str:
    """``RDMA`` (one node, InfiniBand, RoCE: NCCL's own network plugin) or the fabric's name (EFA, TCP-based
    fabrics), whose per-message costs NCCL's InfiniBand latencies do not describe."""
    fabric = table.get("fabric", "")
    return "RDMA" if fabric.startswith(("InfiniBand", "RoCE", "none")) else fabric


def table_system(table: dict) -> SystemProfile:
    s = load_system(table["system"])
    for path, value in table.get("system_overrides", {}).items():
        section, key = path.split(".")
        attr = "inter" if section == "inter_node" else "intra"
        part = getattr(s, attr)
        s = replace(s, **{attr: replace(part, **{key: type(getattr(part, key))(value)})})
    return s


def predict_table(table: dict, ranges: dict) -> list[dict]:
    system = table_system(table)
    lay = layout_for(system, table["gpus"])
    out = []
    for text in table["rows"]:
        r = parse_row(text)
        c = collective_time(table["op"], r.size_bytes, system, lay)
        out.append({"table": table["id"], "fabric_class": fabric_class(table), "size_bytes": r.size_bytes, "range": size_range(r.size_bytes, ranges),
                    "published_time_us": r.time_us, "published_busbw_GBps": r.busbw_GBps,
                    "predicted_time_us": c.time_s * 1e6, "predicted_busbw_GBps": c.busbw_Bps / 1e9,
                    "algorithm": f"{c.algorithm}/{c.protocol}", "error": r.time_us / (c.time_s * 1e6) - 1.0})
    return out


def load(path: str = TABLES) -> dict:
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def summarise(rows: list[dict]) -> list[dict]:
    """Per table and size range: rows, mean |error|, the worst error (signed) and the median error."""
    groups: dict[tuple[str, str], list[float]] = {}
    for r in rows:
        groups.setdefault((r["table"], r["range"]), []).append(r["error"])
        groups.setdefault((f"all {r['fabric_class']} tables", r["range"]), []).append(r["error"])
    out = []
    for (table, rng), errs in groups.items():
        errs_sorted = sorted(errs)
        out.append({"table": table, "range": rng, "rows": len(errs),
                    "mean_abs_error": sum(abs(e) for e in errs) / len(errs),
                    "median_error": errs_sorted[len(errs) // 2],
                    "worst_error": max(errs, key=abs)})
    order = {name: i for i, name in enumerate(RANGES)}
    return sorted(out, key=lambda g: (g["table"].startswith("all "), g["table"], order[g["range"]]))


def run(path: str = TABLES) -> tuple[list[dict], list[dict], dict]:
    doc = load(path)
    rows = [r for t in doc["tables"] for r in predict_table(t, doc["size_ranges"])]
    return rows, summarise(rows), doc


def to_markdown(rows: list[dict], groups: list[dict], doc: dict) -> str:
    src = {t["id"]: t for t in doc["tables"]}
    lines = ["| table | size range | rows | median error | mean abs error | worst |",
             "| --- | --- | --- | --- | --- | --- |"]
    for g in groups:
        name = g["table"] if g["table"] not in src else f"[{g['table']}]({src[g['table']]['source']})"
        lines.append(f"| {name} | {g['range']} | {g['rows']} | {g['median_error']:+.1%} | {g['mean_abs_error']:.1%} | "
                     f"{g['worst_error']:+.1%} |")
    lines += ["", "| table | size | published busbw | predicted busbw | algorithm | error |",
              "| --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        size = r["size_bytes"]
        unit = next((u for u, k in (("GiB", 30), ("MiB", 20), ("KiB", 10)) if size >= 1 << k), "B")
        div = {"GiB": 1 << 30, "MiB": 1 << 20, "KiB": 1 << 10, "B": 1}[unit]
        lines.append(f"| {r['table']} | {size / div:g} {unit} | {r['published_busbw_GBps']:.2f} GB/s | "
                     f"{r['predicted_busbw_GBps']:.2f} GB/s | {r['algorithm']} | {r['error']:+.1%} |")
    return "\n".join(lines) + "\n"


__all__ = ["Row", "parse_row", "consistent", "size_range", "fabric_class", "table_system", "predict_table", "summarise", "run",
           "to_markdown", "load", "TABLES", "RANGES"]
