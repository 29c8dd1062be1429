"""Measured network cases and per-scope samples for the calibration fit (CPU only, committed data).

A *case* is one (network, precision, batch) measured on the H200 by calibration.networks.timing: its
reference GPU time and the eager per-kernel table (kernel name, duration, module path). A *scope sample*
groups the ONNX nodes of one PyTorch module call (node scopes, repeated-call suffixes ``_1`` removed) with
the kernels the profiler attributed to the same module: the fit compares their summed times.
Ignores: kernels of modules that no ONNX node represents (e.g. a pooler the exporter dropped).
"""
from __future__ import annotations

import csv
import gzip
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

from predictor.graph.loader import Graph, load

DATA = Path(__file__).resolve().parents[1] / "data"
TIMING_DIR = DATA / "h200" / "timing"
ONNX_DIR = DATA / "networks" / "onnx"

_SUFFIX = re.compile(r"_\d+$")


@dataclass(frozen=True)
class Case:
    network: str
    precision: str
    batch: int
    split: str
    family: str
    reference_time_s: float
    reference_source: str
    replay_medians_s: tuple[float, ...]
    eager_median_s: float
    n_kernels_eager: int
    program_differs: bool | None
    source: str  # timing.json it came from

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.network, self.precision, self.batch)

    @property
    def spread(self) -> float:
        """(max - min) / min of the repeated replay medians (0 when fewer than two)."""
        m = self.replay_medians_s
        return (max(m) - min(m)) / min(m) if len(m) > 1 and min(m) > 0 else 0.0


@dataclass(frozen=True)
class KernelRow:
    name: str
    duration_s: float
    module_path: str
    aten_op: str


def normalise_scope(scope: str) -> str:
    """Drop TorchScript's repeated-call suffixes: ``layer1.0.relu_2`` -> ``layer1.0.relu``."""
    return ".".join(_SUFFIX.sub("", part) for part in scope.split(".")) if scope else ""


def load_cases(timing_dir: Path = TIMING_DIR) -> list[Case]:
    """Every measured case without error; a case measured twice keeps the later file's."""
    cases: dict[tuple, Case] = {}
    for path in sorted(timing_dir.glob("**/timing.json"), key=lambda p: (p.parent.name != "first_run", str(p))):
        doc = json.loads(path.read_text())
        for c in doc.get("cases", []):
            ref = c.get("reference_time_s")
            if c.get("error") or ref is None or not isinstance(ref, (int, float)) or not math.isfinite(ref):
                continue
            case = Case(c["network"], c["precision"], int(c["batch"]), c.get("split", ""), c.get("family", ""),
                        float(ref), c.get("reference_source", ""), tuple(c.get("replay_medians_s") or ()),
                        float(c.get("eager_median_s") or math.nan), int(c.get("n_kernels_eager") or 0),
                        c.get("program_differs"), str(path.relative_to(timing_dir)))
            cases[case.key] = case
    return sorted(cases.values(), key=lambda c: c.key)


def load_kernels(timing_dir: Path = TIMING_DIR) -> dict[tuple[str, str, int], list[KernelRow]]:
    """Eager kernel rows per case key."""
    out: dict[tuple, list[KernelRow]] = {}
    for path in sorted(timing_dir.glob("**/kernels.csv.gz"), key=lambda p: (p.parent.name != "first_run", str(p))):
        per: dict[tuple, list[KernelRow]] = {}
        with gzip.open(path, "rt", newline="") as f:
            for r in csv.DictReader(f):
                if r.get("source", "eager") != "eager" or r.get("leaf_op") == "Activity Buffer Request":
                    continue
                key = (r["network"], r["precision"], int(r["batch"]))
                try:
                    d = float(r["duration_us"]) * 1e-6
                except ValueError:
                    continue
                per.setdefault(key, []).append(KernelRow(r["kernel_name"], d, r.get("module_path", ""),
                                                         r.get("aten_op", "")))
        out.update(per)
    return out


_GRAPHS: dict[tuple[str, int], Graph] = {}


EXPORTERS = ("torchscript", "dynamo")  # preference order: the dynamo export only where torchscript's failed


def onnx_export(network: str, exporters: tuple[str, ...] = EXPORTERS) -> Path | None:
    """The committed weight-free export of ``network``: the first exporter in ``exporters`` that has one."""
    for exporter in exporters:
        path = ONNX_DIR / f"{network}.{exporter}.onnx"
        if path.exists():
            return path
    return None


def graph_for(network: str, batch: int, exporter: str | None = None) -> Graph | None:
    path = onnx_export(network, (exporter,) if exporter else EXPORTERS)
    if path is None:
        return None
    key = (str(path), batch)
    if key not in _GRAPHS:
        _GRAPHS[key] = load(str(path), batch=batch)
    return _GRAPHS[key]


def zoo_split(network: str) -> str:
    """The zoo split of a network (train, held-out, blind; calibration/networks/zoo.py), "unknown" for none."""
    from calibration.networks.zoo import NETWORKS

    spec = NETWORKS.get(network)
    return spec.split if spec else "unknown"


def kernels_by_scope(rows: list[KernelRow]) -> dict[str, list[KernelRow]]:
    by: dict[str, list[KernelRow]] = {}
    for r in rows:
        by.setdefault(normalise_scope(r.module_path), []).append(r)
    return by
