"""Parse Nsight Compute CSV output into frozen `KernelSample`s (one per profiled kernel launch).

Both layouts of ``ncu --csv`` are read:

- raw page (``--page raw``): one row per kernel, one column per metric; the first data row is a
  units row (empty ID). Without a units row, values are taken in ncu's base units (ns, byte).
- details page (default ``--page details``): one row per (kernel, metric) with "Metric Name",
  "Metric Unit" and "Metric Value"; rows of one kernel share an "ID".

The delimiter is the one after the header's ID cell (``,``, ``;``, tab or ``|``); a UTF-8 byte order mark is
dropped. Ignored: lines starting with '==' (``==PROF==``, ``==WARNING==``, ...) and blank lines anywhere,
any text before the header (a line whose first cell is ID), details-page rows whose metric name is
not an ncu metric (section display names such as "Duration"), and rule/speed-up columns. Values
"n/a" (and empty cells) become None, never zero. Thousands separators ("1,234,567") are accepted;
other commas are an error (ambiguous locale). Prefixed units (usecond, Mbyte, Kinst) are converted
to base units: seconds for time, bytes for sizes, plain numbers for counts.

A metric of the tables must be a finite number, and a time, byte or count not negative: ``-5``, ``inf`` and
``NaN`` are errors (``n/a`` stays None). Rows with more or fewer cells than the header are errors, as is a
cell over the csv module's field limit (128 KiB).

Malformed input raises `NcuParseError`, whose message is one line naming the line number of the
file (1-based) and the column. ``predict validate`` and the lab (``calibration/ncu``) read through this
module: :func:`read_samples` (the columns the reports use) and :func:`parse_file` (every column).
"""
from __future__ import annotations

import csv
import math
import re
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, Iterable, Mapping, Sequence

from .categories import classify
from .metrics import Kind, Metric, arch_of_cc, flops_by_precision_unit, kind_of, table
from .nvtx import parse_ncu_stack


class NcuParseError(ValueError):
    """Malformed ncu CSV; str() is one line: '<source>: line N, column 'X': problem'."""

    def __init__(self, problem: str, *, row: int | None = None, column: str | None = None,
                 source: str = "ncu csv"):
        self.problem = " ".join(str(problem).split())
        self.row = row
        self.column = column
        self.source = source
        super().__init__(str(self))

    def __str__(self) -> str:
        where = [self.source]
        if self.row is not None:
            where.append(f"line {self.row}")
        if self.column is not None:
            where.append(f"column {self.column!r}")
        return ", ".join(where) + f": {self.problem}"


@dataclass(frozen=True)
class KernelSample:
    """One profiled kernel launch.

    id: ncu's result ID (launch order). nvtx: NVTX push/pop range messages, outermost first.
    flops: (precision, unit) -> FLOPs (`metrics.flops_by_precision_unit`); only collected keys.
    bytes: "L1", "L2", "HBM" -> bytes (None when not collected or n/a).
    launch: grid/block sizes, registers, waves, stream, device, cc (None when absent).
    counters: canonical metric value ('time', 'l2_bytes', ...) -> base-unit value, collected ones.
    raw: every ncu metric column -> base-unit float, or the string itself when not numeric.
    """

    id: int
    name: str
    nvtx: tuple[str, ...]
    time_s: float
    flops: Mapping[tuple[str, str], float | None]
    bytes: Mapping[str, float | None]
    launch: Mapping[str, Any]
    raw: Mapping[str, float | str | None]
    counters: Mapping[str, float | None]

    @property
    def category(self) -> str:
        """Kernel class from the name (see `categories.classify`)."""
        return classify(self.name).value


# ----------------------------------------------------------------------------- units and numbers
_TIME_S = {"nsecond": 1e-9, "ns": 1e-9, "usecond": 1e-6, "us": 1e-6, "msecond": 1e-3, "ms": 1e-3,
           "second": 1.0, "s": 1.0}
_PREFIX = {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}   # ncu prefixes are decimal
_BYTES = {**{f"{p}byte": f for p, f in _PREFIX.items()}, **{f"{p}B": f for p, f in _PREFIX.items()}}
_COUNT_UNIT = re.compile(r"^(?P<prefix>[KMGTP]?)(?P<base>[a-z][a-z_]*(?:/[a-z_]+)?)?$")
_NA = {"", "n/a", "N/A", "na", "nan"}
_THOUSANDS = re.compile(r"^[+-]?\d{1,3}(?:,\d{3})+(?:\.\d*)?(?:[eE][+-]?\d+)?$")


def parse_number(text: str) -> float | None:
    """'1,234,567' -> 1234567.0, '12.5' -> 12.5, 'n/a'/'' -> None; anything else raises ValueError."""
    s = text.strip()
    if s in _NA:
        return None
    if "," in s:
        if not _THOUSANDS.match(s):
            raise ValueError(f"ambiguous number {text!r}")
        s = s.replace(",", "")
    return float(s)


def _count_prefix(unit: str) -> float | None:
    m = _COUNT_UNIT.match(unit)
    return _PREFIX[m.group("prefix")] if m else None


def unit_factor(unit: str, kind: Kind | None) -> float:
    """Factor that turns a value printed in `unit` into base units of `kind`: seconds, bytes, or
    plain numbers for counts ('Kinst' -> 1e3). An empty unit means ncu's base unit (ns for time).

    kind None (a metric outside the tables) is best effort: time, byte and prefixed count units are
    scaled, rates per time unit become per second ('Gbyte/second' -> 1e9), anything else is 1.
    Raises ValueError for a unit that does not fit `kind`.
    """
    u = unit.strip()
    if kind is Kind.TIME:
        if u == "":
            return 1e-9
        if u not in _TIME_S:
            raise ValueError(f"unit {unit!r} is not a time unit")
        return _TIME_S[u]
    if kind is Kind.BYTES:
        if u == "":
            return 1.0
        if u not in _BYTES:
            raise ValueError(f"unit {unit!r} is not a byte unit")
        return _BYTES[u]
    if kind is Kind.PERCENT:
        if u not in ("%", ""):
            raise ValueError(f"unit {unit!r} is not a percentage")
        return 1.0
    if kind is Kind.COUNT:
        if u in _TIME_S or u in _BYTES:
            raise ValueError(f"unit {unit!r} is not a count unit")
        factor = _count_prefix(u)
        if factor is None:
            raise ValueError(f"unknown unit {unit!r} for a count")
        return factor
    num, _, den = u.partition("/")
    factor = _TIME_S.get(num) or _BYTES.get(num) or _count_prefix(num) or 1.0
    return factor / _TIME_S[den] if den in _TIME_S else factor


# ----------------------------------------------------------------------------- reading rows
IDENTITY_COLUMNS = ("ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream",
                    "Block Size", "Grid Size", "Device", "CC")
TIME_METRIC_COLUMN = "gpu__time_duration.sum"
_DETAILS = ("Metric Name", "Metric Unit", "Metric Value")


def _is_nvtx_column(name: str) -> bool:
    return "Push/Pop_Range" in name


def _is_metric_column(name: str) -> bool:
    return "__" in name and not _is_nvtx_column(name)


def _content_lines(text: str) -> list[tuple[int, str]]:
    """(1-based line number, line) for every line that is neither blank nor an '==' log line."""
    return [(i, line) for i, line in enumerate(text.splitlines(), 1)
            if line.strip() and not line.lstrip().startswith("==")]


def _csv_row(line: str, row: int | None = None, source: str = "ncu csv", delimiter: str = ",") -> list[str]:
    try:
        return next(csv.reader([line], delimiter=delimiter))
    except csv.Error as e:  # a cell over the csv module's field limit (128 KiB), ...
        raise NcuParseError(f"unreadable CSV row ({e})", row=row, source=source) from None
    except StopIteration:
        return []


_DELIMITERS = (",", ";", "\t", "|")


def _find_header(lines: list[tuple[int, str]], source: str) -> tuple[int, str]:
    """(index of the header line, its delimiter)."""
    for k, (_, line) in enumerate(lines):
        s = line.lstrip()
        for head in ('"ID"', "ID"):
            if s.startswith(head) and len(s) > len(head) and s[len(head)] in _DELIMITERS:
                return k, s[len(head)]
    first = lines[0][0] if lines else 1
    raise NcuParseError("no ncu CSV header (a line whose first cell is ID)", row=first, column="ID",
                        source=source)


@dataclass(frozen=True)
class _Kernel:
    """Identity cells and metric cells of one kernel, before conversion."""

    line: int
    identity: Mapping[str, str]
    nvtx_cell: str
    metrics: Mapping[str, tuple[str, str, int]]   # ncu name -> (value, unit, line)


def _header_row(header: list[str], line: str, n: int, source: str, delimiter: str) -> dict[str, str]:
    """One data row as {column: cell}; a row of another length than the header is an error naming it."""
    cells = _csv_row(line, n, source, delimiter)
    if len(cells) != len(header):
        raise NcuParseError(f"{len(cells)} cells where the header has {len(header)}", row=n,
                            column=header[min(len(cells), len(header)) - 1] if cells else header[0],
                            source=source)
    return dict(zip(header, cells))


def _raw_kernels(header: list[str], body: list[tuple[int, str]], source: str, delimiter: str = ",",
                 metrics: frozenset[str] | None = None) -> list[_Kernel]:
    metric_cols = [c for c in header if _is_metric_column(c) and (metrics is None or c in metrics)]
    nvtx_col = next((c for c in header if _is_nvtx_column(c)), None)
    units: dict[str, str] = {}
    kernels = []
    for n, line in body:
        row = _header_row(header, line, n, source, delimiter)
        if not row["ID"].strip():
            if kernels or units:
                raise NcuParseError("empty ID in a data row", row=n, column="ID", source=source)
            units = {c: row[c] for c in metric_cols}
            continue
        kernels.append(_Kernel(
            line=n,
            identity={c: row[c] for c in header if c in IDENTITY_COLUMNS},
            nvtx_cell=row[nvtx_col] if nvtx_col else "",
            metrics={c: (row[c], units.get(c, ""), n) for c in metric_cols},
        ))
    return kernels


def _details_kernels(header: list[str], body: list[tuple[int, str]], source: str, delimiter: str = ",",
                     metrics: frozenset[str] | None = None) -> list[_Kernel]:
    nvtx_col = next((c for c in header if _is_nvtx_column(c)), None)
    by_id: dict[str, tuple[int, dict[str, str], str, dict[str, tuple[str, str, int]]]] = {}
    for n, line in body:
        row = _header_row(header, line, n, source, delimiter)
        kid = row["ID"].strip()
        if not kid:
            raise NcuParseError("empty ID", row=n, column="ID", source=source)
        if kid not in by_id:
            by_id[kid] = (n, {c: row[c] for c in header if c in IDENTITY_COLUMNS},
                          row[nvtx_col] if nvtx_col else "", {})
        name = row["Metric Name"].strip()
        if _is_metric_column(name) and (metrics is None or name in metrics):
            by_id[kid][3].setdefault(name, (row["Metric Value"], row["Metric Unit"], n))
    return [_Kernel(line, ident, nvtx, metrics) for line, ident, nvtx, metrics in by_id.values()]


# ----------------------------------------------------------------------------- conversion
def _dims(text: str) -> tuple[int, ...] | None:
    """'(256, 1, 1)' -> (256, 1, 1); '(1,568, 1, 1)' -> (1568, 1, 1); '1,1,1' -> (1, 1, 1)."""
    body = (text or "").strip().strip("()").strip()
    if not body:
        return None
    parts = re.split(r",\s+", body) if ", " in body else body.split(",")
    try:
        return tuple(int(p.replace(",", "")) for p in parts)
    except ValueError:
        return None


def _int_or_none(v: float | None) -> int | float | None:
    if v is None:
        return None
    return int(v) if float(v).is_integer() else v


def _sample(k: _Kernel, canonical: Mapping[str, Metric], source: str) -> KernelSample:
    try:
        kid = int(parse_number(k.identity["ID"]) or 0)
    except (ValueError, OverflowError):  # OverflowError: 'inf', '1e999
        raise NcuParseError(f"ID {k.identity['ID']!r} is not an integer", row=k.line, column="ID",
                            source=source) from None
    name = k.identity.get("Kernel Name", "").strip()
    if not name:
        raise NcuParseError("empty kernel name", row=k.line, column="Kernel Name", source=source)
    raw: dict[str, float | str | None] = {}
    counters: dict[str, float | None] = {}
    for col, (text, unit, line) in k.metrics.items():
        metric = canonical.get(col)
        kind = kind_of(metric) if metric is not None else None
        try:
            value = parse_number(text)
        except ValueError:
            if metric is None:              # a string-valued metric outside our tables: keep it
                raw[col] = text
                continue
            raise NcuParseError(f"value {text!r} is not a number", row=line, column=col,
                                source=source) from None
        try:
            factor = unit_factor(unit, kind)
        except ValueError as e:
            raise NcuParseError(str(e), row=line, column=col, source=source) from None
        value = None if value is None else value * factor
        if metric is not None and value is not None and (not math.isfinite(value) or value < 0):
            raise NcuParseError(f"value {text!r} is not a finite, non-negative number", row=line, column=col,
                                source=source)
        raw[col] = value
        if metric is not None:
            counters[metric.value] = value
    if TIME_METRIC_COLUMN not in k.metrics:
        raise NcuParseError(f"kernel {kid} has no {TIME_METRIC_COLUMN}", row=k.line,
                            column=TIME_METRIC_COLUMN, source=source)
    time_s = raw[TIME_METRIC_COLUMN]
    if not isinstance(time_s, float) or not math.isfinite(time_s) or time_s < 0:
        raise NcuParseError(f"kernel {kid} has no time value", row=k.metrics[TIME_METRIC_COLUMN][2],
                            column=TIME_METRIC_COLUMN, source=source)
    hbm = counters.get(Metric.HBM_BYTES.value)
    if hbm is None and counters.get(Metric.HBM_READ_BYTES.value) is not None \
            and counters.get(Metric.HBM_WRITE_BYTES.value) is not None:
        hbm = counters[Metric.HBM_READ_BYTES.value] + counters[Metric.HBM_WRITE_BYTES.value]
    launch = {
        "grid_size": _int_or_none(counters.get(Metric.GRID_SIZE.value)),
        "block_size": _int_or_none(counters.get(Metric.BLOCK_SIZE.value)),
        "registers_per_thread": _int_or_none(counters.get(Metric.REGISTERS_PER_THREAD.value)),
        "waves_per_sm": counters.get(Metric.WAVES_PER_SM.value),
        "grid_dim": _dims(k.identity.get("Grid Size", "")),
        "block_dim": _dims(k.identity.get("Block Size", "")),
        "stream": k.identity.get("Stream") or None,
        "device": k.identity.get("Device") or None,
        "cc": k.identity.get("CC") or None,
    }
    return KernelSample(
        id=kid,
        name=name,
        nvtx=parse_ncu_stack(k.nvtx_cell),
        time_s=time_s,
        flops=MappingProxyType(flops_by_precision_unit(counters)),
        bytes=MappingProxyType({"L1": counters.get(Metric.L1_BYTES.value),
                                "L2": counters.get(Metric.L2_BYTES.value), "HBM": hbm}),
        launch=MappingProxyType(launch),
        raw=MappingProxyType(raw),
        counters=MappingProxyType(counters),
    )


def _resolve_arch(kernels: Sequence[_Kernel], arch: str | None, header_line: int, source: str) -> str:
    if arch is not None:
        table(arch)                          # raises KeyError for an unknown name
        return arch
    cc = kernels[0].identity.get("CC") if kernels else None
    if cc is None:
        raise NcuParseError("no CC column to tell the GPU architecture; pass arch=", row=header_line,
                            column="CC", source=source)
    found = arch_of_cc(cc)
    if found is None:
        raise NcuParseError(f"compute capability {cc!r} has no metric table; pass arch=",
                            row=kernels[0].line, column="CC", source=source)
    return found


def parse_csv(text: str, arch: str | None = None, source: str = "ncu csv",
              metrics: Iterable[str] | None = None) -> list[KernelSample]:
    """KernelSamples of an ncu CSV text, in file order. `arch` ('volta'/'ampere'/'hopper') picks
    the metric table; by default it follows the CC column (9.0 -> hopper). `metrics`: the only metric
    columns read (None: all; ncu's raw page carries ~300 device attributes per kernel)."""
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = _content_lines(text)
    if not lines:
        raise NcuParseError("empty input", row=1, column="ID", source=source)
    k, delimiter = _find_header(lines, source)
    header_line = lines[k][0]
    header = [c.strip() for c in _csv_row(lines[k][1], header_line, source, delimiter)]
    details = all(c in header for c in _DETAILS)
    required = ("ID", "Kernel Name") + (_DETAILS if details else (TIME_METRIC_COLUMN,))
    for col in required:
        if col not in header:
            raise NcuParseError("required column missing", row=header_line, column=col, source=source)
    body = lines[k + 1:]
    keep = None if metrics is None else frozenset(metrics) | {TIME_METRIC_COLUMN}
    kernels = (_details_kernels if details else _raw_kernels)(header, body, source, delimiter, keep)
    if not kernels:
        return []
    arch = _resolve_arch(kernels, arch, header_line, source)
    canonical = {name: metric for metric, name in table(arch).items()}
    return [_sample(kern, canonical, source) for kern in kernels]


def parse_file(path: str | Path, arch: str | None = None, metrics: Iterable[str] | None = None) -> list[KernelSample]:
    """`parse_csv` of a file (undecodable bytes replaced, a byte order mark dropped)."""
    p = Path(path)
    if p.exists() and not p.is_file():  # a folder, a device (/dev/zero would be read forever), a FIFO
        raise NcuParseError("not a regular file", source=str(p))
    return parse_csv(p.read_text(encoding="utf-8", errors="replace"), arch=arch, source=str(p), metrics=metrics)


def report_metrics() -> frozenset[str]:
    """The metric columns the reports use: the time and every metric of the tables (all architectures)."""
    from .metrics import TABLES

    return frozenset({TIME_METRIC_COLUMN} | {n for t in TABLES.values() for n in t.values()})


def read_samples(path: str | Path, arch: str | None = None) -> list[KernelSample]:
    """`parse_file` reading only the columns the reports use (`report_metrics`): what ``predict validate``
    and ``calibration/ncu/report`` read."""
    return parse_file(path, arch=arch, metrics=report_metrics())


def total_time_s(samples: Iterable[KernelSample]) -> float:
    return sum(s.time_s for s in samples)


def main(argv: Sequence[str] | None = None) -> int:
    """``python3 -m predictor.measure.ncu.parse FILE.csv``: one line per kernel, or the error in one line."""
    import argparse
    import sys

    p = argparse.ArgumentParser(prog="python3 -m predictor.measure.ncu.parse")
    p.add_argument("csv")
    p.add_argument("--arch", default=None)
    args = p.parse_args(argv)
    try:
        samples = parse_file(args.csv, arch=args.arch)
    except NcuParseError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    for s in samples:
        flops = sum(v for v in s.flops.values() if v)
        print(f"{s.id:5d} {s.time_s * 1e6:10.2f} us {flops:12.4g} FLOP  {s.category:11s} {s.name[:80]}")
    print(f"{len(samples)} kernels, {total_time_s(samples) * 1e3:.3f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
