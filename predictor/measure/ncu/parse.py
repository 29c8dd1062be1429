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
from typing import Any, Iterable, Iterator, Mapping, Sequence

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


def _content_lines(lines: Iterable[tuple[int, str]]) -> Iterator[tuple[int, str]]:
    """The (1-based line number, line) pairs of ``lines`` that are neither blank nor an '==' log line."""
    for i, line in lines:
        if line.strip() and not line.lstrip().startswith("=="):
            yield i, line


def _text_lines(text: str) -> Iterator[tuple[int, str]]:
    return enumerate(text.splitlines(), 1)


def _file_lines(f) -> Iterator[tuple[int, str]]:
    """(1-based line number, line) of a text file opened with ``newline=""``, one physical line at a time: the
    lines and numbers ``str.splitlines`` gives on the whole text (a byte order mark dropped)."""
    n = 0
    first = True
    for physical in f:
        if first:
            first = False
            if physical.startswith("\ufeff"):
                physical = physical[1:]
        for line in physical.splitlines():
            n += 1
            yield n, line


def _csv_row(line: str, row: int | None = None, source: str = "ncu csv", delimiter: str = ",") -> list[str]:
    try:
        return next(csv.reader([line], delimiter=delimiter))
    except csv.Error as e:  # a cell over the csv module's field limit (128 KiB), ...
        raise NcuParseError(f"unreadable CSV row ({e})", row=row, source=source) from None
    except StopIteration:
        return []


_DELIMITERS = (",", ";", "\t", "|")


def _header_delimiter(line: str) -> str | None:
    """The delimiter after the ID cell when ``line`` is a header (its first cell is ID), else None."""
    s = line.lstrip()
    for head in ('"ID"', "ID"):
        if s.startswith(head) and len(s) > len(head) and s[len(head)] in _DELIMITERS:
            return s[len(head)]
    return None


@dataclass(frozen=True)
class _Kernel:
    """Identity cells and metric cells of one kernel, before conversion."""

    line: int
    identity: Mapping[str, str]
    nvtx_cell: str
    metrics: Mapping[str, tuple[str, str, int]]   # ncu name -> (value, unit, line)


class _Columns:
    """Where each column of a header is (a name given twice: its last cell, as a dict of the row keeps)."""

    def __init__(self, header: list[str], metrics: frozenset[str] | None):
        self.header = header
        self.n = len(header)
        at = {c: k for k, c in enumerate(header)}
        names = list(dict.fromkeys(header))
        self.at = at
        self.identity = [(c, at[c]) for c in names if c in IDENTITY_COLUMNS]
        nvtx = next((c for c in header if _is_nvtx_column(c)), None)
        self.nvtx = at[nvtx] if nvtx is not None else None
        self.metrics = [(c, at[c]) for c in names if _is_metric_column(c) and (metrics is None or c in metrics)]

    def cells(self, line: str, n: int, source: str, delimiter: str) -> list[str]:
        """One data row's cells; a row of another length than the header is an error naming it."""
        cells = _csv_row(line, n, source, delimiter)
        if len(cells) != self.n:
            header = self.header
            raise NcuParseError(f"{len(cells)} cells where the header has {len(header)}", row=n,
                                column=header[min(len(cells), len(header)) - 1] if cells else header[0],
                                source=source)
        return cells

    def identity_of(self, cells: list[str]) -> dict[str, str]:
        return {c: cells[k] for c, k in self.identity}

    def nvtx_of(self, cells: list[str]) -> str:
        return cells[self.nvtx] if self.nvtx is not None else ""


def _raw_kernels(cols: _Columns, body: Iterable[tuple[int, str]], source: str,
                 delimiter: str = ",") -> Iterator[_Kernel]:
    """The kernels of a raw page as its rows come (a units row first, when there is one)."""
    id_at = cols.at["ID"]
    units: dict[str, str] = {}
    seen = False
    for n, line in body:
        cells = cols.cells(line, n, source, delimiter)
        if not cells[id_at].strip():
            if seen or units:
                raise NcuParseError("empty ID in a data row", row=n, column="ID", source=source)
            units = {c: cells[k] for c, k in cols.metrics}
            continue
        seen = True
        yield _Kernel(line=n, identity=cols.identity_of(cells), nvtx_cell=cols.nvtx_of(cells),
                      metrics={c: (cells[k], units.get(c, ""), n) for c, k in cols.metrics})


def _details_kernels(cols: _Columns, body: Iterable[tuple[int, str]], source: str, delimiter: str = ",",
                     metrics: frozenset[str] | None = None) -> list[_Kernel]:
    """The kernels of a details page, one per ID (its rows are gathered as they come: one row per metric, and
    only the metrics read are kept)."""
    at = cols.at
    id_at, name_at, value_at, unit_at = at["ID"], at["Metric Name"], at["Metric Value"], at["Metric Unit"]
    by_id: dict[str, tuple[int, dict[str, str], str, dict[str, tuple[str, str, int]]]] = {}
    for n, line in body:
        cells = cols.cells(line, n, source, delimiter)
        kid = cells[id_at].strip()
        if not kid:
            raise NcuParseError("empty ID", row=n, column="ID", source=source)
        entry = by_id.get(kid)
        if entry is None:
            entry = by_id[kid] = (n, cols.identity_of(cells), cols.nvtx_of(cells), {})
        name = cells[name_at].strip()
        if _is_metric_column(name) and (metrics is None or name in metrics) and name not in entry[3]:
            entry[3][name] = (cells[value_at], cells[unit_at], n)
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


class _Converter:
    """Turns _Kernels into KernelSamples under one metric table. What repeats from kernel to kernel is worked out
    once and shared (read-only): a column's metric and kind, a unit's factor, parsed grid and block sizes, NVTX
    stacks, kernel names, launch attributes."""

    def __init__(self, canonical: Mapping[str, Metric], source: str):
        self.canonical = canonical
        self.source = source
        self._columns: dict[str, tuple] = {}
        self._factors: dict[tuple, float | str] = {}
        self._dims: dict[str, tuple[int, ...] | None] = {}
        self._nvtx: dict[str, tuple[str, ...]] = {}
        self._names: dict[str, str] = {}
        self._launch: dict[tuple, Mapping[str, Any]] = {}

    def _column(self, col: str) -> tuple:
        """(metric or None, its kind or None, its value name or None) of a metric column."""
        found = self._columns.get(col)
        if found is None:
            metric = self.canonical.get(col)
            found = self._columns[col] = (metric, kind_of(metric) if metric is not None else None,
                                          metric.value if metric is not None else None)
        return found

    def _factor(self, unit: str, kind: Kind | None) -> float | str:
        """unit_factor, or the message of its ValueError."""
        key = (unit, kind)
        f = self._factors.get(key)
        if f is None:
            try:
                f = unit_factor(unit, kind)
            except ValueError as e:
                f = str(e)
            self._factors[key] = f
        return f

    def dims(self, text: str) -> tuple[int, ...] | None:
        if text not in self._dims:
            self._dims[text] = _dims(text)
        return self._dims[text]

    def sample(self, k: _Kernel) -> KernelSample:
        source = self.source
        try:
            kid = int(parse_number(k.identity["ID"]) or 0)
        except (ValueError, OverflowError):  # OverflowError: 'inf', '1e999
            raise NcuParseError(f"ID {k.identity['ID']!r} is not an integer", row=k.line, column="ID",
                                source=source) from None
        name = k.identity.get("Kernel Name", "").strip()
        if not name:
            raise NcuParseError("empty kernel name", row=k.line, column="Kernel Name", source=source)
        name = self._names.setdefault(name, name)
        raw: dict[str, float | str | None] = {}
        counters: dict[str, float | None] = {}
        by_metric: dict[Metric, float | None] = {}
        for col, (text, unit, line) in k.metrics.items():
            metric, kind, key = self._column(col)
            try:
                value = parse_number(text)
            except ValueError:
                if metric is None:              # a string-valued metric outside our tables: keep it
                    raw[col] = text
                    continue
                raise NcuParseError(f"value {text!r} is not a number", row=line, column=col,
                                    source=source) from None
            factor = self._factor(unit, kind)
            if factor.__class__ is str:
                raise NcuParseError(factor, row=line, column=col, source=source)
            value = None if value is None else value * factor
            if metric is not None and value is not None and (not math.isfinite(value) or value < 0):
                raise NcuParseError(f"value {text!r} is not a finite, non-negative number", row=line, column=col,
                                    source=source)
            raw[col] = value
            if metric is not None:
                counters[key] = value
                by_metric[metric] = value
        if TIME_METRIC_COLUMN not in k.metrics:
            raise NcuParseError(f"kernel {kid} has no {TIME_METRIC_COLUMN}", row=k.line,
                                column=TIME_METRIC_COLUMN, source=source)
        time_s = raw[TIME_METRIC_COLUMN]
        if not isinstance(time_s, float) or not math.isfinite(time_s) or time_s < 0:
            raise NcuParseError(f"kernel {kid} has no time value", row=k.metrics[TIME_METRIC_COLUMN][2],
                                column=TIME_METRIC_COLUMN, source=source)
        hbm = counters.get(_HBM)
        if hbm is None and counters.get(_HBM_READ) is not None and counters.get(_HBM_WRITE) is not None:
            hbm = counters[_HBM_READ] + counters[_HBM_WRITE]
        ident = k.identity
        lk = (counters.get(_GRID), counters.get(_BLOCK), counters.get(_REGS), counters.get(_WAVES),
              ident.get("Grid Size", ""), ident.get("Block Size", ""), ident.get("Stream"), ident.get("Device"),
              ident.get("CC"))
        launch = self._launch.get(lk)
        if launch is None:
            launch = self._launch[lk] = MappingProxyType({
                "grid_size": _int_or_none(lk[0]),
                "block_size": _int_or_none(lk[1]),
                "registers_per_thread": _int_or_none(lk[2]),
                "waves_per_sm": lk[3],
                "grid_dim": self.dims(lk[4]),
                "block_dim": self.dims(lk[5]),
                "stream": lk[6] or None,
                "device": lk[7] or None,
                "cc": lk[8] or None,
            })
        stack = self._nvtx.get(k.nvtx_cell)
        if stack is None:
            stack = self._nvtx[k.nvtx_cell] = parse_ncu_stack(k.nvtx_cell)
        return KernelSample(
            id=kid,
            name=name,
            nvtx=stack,
            time_s=time_s,
            flops=MappingProxyType(flops_by_precision_unit(by_metric)),
            bytes=MappingProxyType({"L1": counters.get(_L1), "L2": counters.get(_L2), "HBM": hbm}),
            launch=launch,
            raw=MappingProxyType(raw),
            counters=MappingProxyType(counters),
        )


_HBM, _HBM_READ, _HBM_WRITE = Metric.HBM_BYTES.value, Metric.HBM_READ_BYTES.value, Metric.HBM_WRITE_BYTES.value
_L1, _L2 = Metric.L1_BYTES.value, Metric.L2_BYTES.value
_GRID, _BLOCK = Metric.GRID_SIZE.value, Metric.BLOCK_SIZE.value
_REGS, _WAVES = Metric.REGISTERS_PER_THREAD.value, Metric.WAVES_PER_SM.value


def _sample(k: _Kernel, canonical: Mapping[str, Metric], source: str) -> KernelSample:
    return _Converter(canonical, source).sample(k)


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
    return _parse_lines(_text_lines(text), arch, source, metrics)


def _parse_lines(lines: Iterable[tuple[int, str]], arch: str | None, source: str,
                 metrics: Iterable[str] | None) -> list[KernelSample]:
    """parse_csv of numbered lines, read as they come: a raw page's rows become samples one by one; a details
    page's rows are gathered per kernel. The first malformed line in file order is the one reported."""
    content = _content_lines(lines)
    first = None
    delimiter = None
    for header_line, line in content:
        if first is None:
            first = header_line
        delimiter = _header_delimiter(line)
        if delimiter is not None:
            break
    if first is None:
        raise NcuParseError("empty input", row=1, column="ID", source=source)
    if delimiter is None:
        raise NcuParseError("no ncu CSV header (a line whose first cell is ID)", row=first, column="ID",
                            source=source)
    header = [c.strip() for c in _csv_row(line, header_line, source, delimiter)]
    details = all(c in header for c in _DETAILS)
    required = ("ID", "Kernel Name") + (_DETAILS if details else (TIME_METRIC_COLUMN,))
    for col in required:
        if col not in header:
            raise NcuParseError("required column missing", row=header_line, column=col, source=source)
    keep = None if metrics is None else frozenset(metrics) | {TIME_METRIC_COLUMN}
    cols = _Columns(header, None if details else keep)
    kernels = (_details_kernels(cols, content, source, delimiter, keep) if details
               else _raw_kernels(cols, content, source, delimiter))
    out: list[KernelSample] = []
    convert = None
    for kern in kernels:
        if convert is None:  # the first kernel's CC tells the metric table
            arch = _resolve_arch([kern], arch, header_line, source)
            convert = _Converter({name: metric for metric, name in table(arch).items()}, source).sample
        out.append(convert(kern))
    return out


def parse_file(path: str | Path, arch: str | None = None, metrics: Iterable[str] | None = None) -> list[KernelSample]:
    """`parse_csv` of a file, read line by line (undecodable bytes replaced, a byte order mark dropped): the
    file's text is never held whole."""
    p = Path(path)
    if p.exists() and not p.is_file():  # a folder, a device (/dev/zero would be read forever), a FIFO
        raise NcuParseError("not a regular file", source=str(p))
    with open(p, encoding="utf-8", errors="replace", newline="") as f:
        return _parse_lines(_file_lines(f), arch, str(p), metrics)


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
