"""Multi-GPU systems as data: a node (which GPU, how many, how they are linked) and the network between nodes.

A system file (``predictor/distributed/systems/*.json``) names a GPU profile (``gpu``: a bundled GPU name,
so the GPU's own ceilings stay in ``predictor/machine/profiles``) and adds the links. Every number is
``{"value": x, "source": key}`` with ``sources[key]`` saying where it came from, as in a GPU profile.
Loading validates every field and names the one that is wrong in a one-line error; nothing is executed.

Bandwidths are per direction (a datasheet's "600 GB/s NVLink" is 300 GB/s each way).
"""
from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from importlib import resources
from typing import Any, Mapping

from ..types import PredictorError, frozen_map

SCHEMA_VERSION = 1
MAX_SYSTEM_BYTES = 1 << 20
LINKS = ("nvlink", "pcie")
INTRA_TOPOLOGIES = ("nvswitch", "hybrid-cube-mesh", "all-to-all", "two-triads", "pcie-switch", "single")
INTER_TOPOLOGIES = ("fat-tree", "dragonfly", "torus", "single-switch")


@dataclass(frozen=True)
class IntraNode:
    link: str                      # nvlink | pcie
    nvlink_gen: int                # 0 for PCIe-only nodes
    nvswitch: bool
    topology: str
    bandwidth_per_gpu_Bps: float   # what one GPU can send to its ring neighbour(s), per direction
    nvls: bool = False             # NVLink SHARP (NVSwitch-reduced all-reduce, NCCL_ALGO=NVLS)
    nvls_algbw_Bps: float = 0.0
    pcie_gen: int = 0
    pcie_bandwidth_Bps: float = 0.0
    sockets: int = 1               # CPU sockets the node's GPUs hang off
    inter_socket_Bps: float = 0.0  # what a ring crossing between sockets gets there, per direction (NCCL's figure)


@dataclass(frozen=True)
class InterNode:
    fabric: str
    nics_per_node: int
    nic_bandwidth_Bps: float       # per NIC, per direction
    latency_s: float               # per switch hop
    topology: str
    global_bandwidth_fraction: float = 1.0  # bisection / injection (1: non-blocking)

    @property
    def node_bandwidth_Bps(self) -> float:
        return self.nics_per_node * self.nic_bandwidth_Bps * self.global_bandwidth_fraction


@dataclass(frozen=True)
class SystemProfile:
    name: str
    full_name: str
    aliases: tuple[str, ...]
    gpu: str                       # bundled GPU profile name
    gpus_per_node: int
    max_nodes: int
    intra: IntraNode
    inter: InterNode
    provenance: Mapping[str, str]
    sources: Mapping[str, Mapping[str, Any]]
    notes: str = ""
    path: str = ""

    @property
    def max_gpus(self) -> int:
        return self.gpus_per_node * self.max_nodes

    def to_json(self) -> dict:
        return {"name": self.name, "full_name": self.full_name, "gpu": self.gpu, "gpus_per_node": self.gpus_per_node,
                "max_nodes": self.max_nodes,
                "intra_node": {"link": self.intra.link, "nvlink_gen": self.intra.nvlink_gen,
                               "nvswitch": self.intra.nvswitch, "topology": self.intra.topology,
                               "bandwidth_per_gpu_Bps": self.intra.bandwidth_per_gpu_Bps, "nvls": self.intra.nvls,
                               "nvls_algbw_Bps": self.intra.nvls_algbw_Bps},
                "inter_node": {"fabric": self.inter.fabric, "nics_per_node": self.inter.nics_per_node,
                               "nic_bandwidth_Bps": self.inter.nic_bandwidth_Bps, "latency_s": self.inter.latency_s,
                               "topology": self.inter.topology,
                               "global_bandwidth_fraction": self.inter.global_bandwidth_fraction},
                "provenance": {"fields": dict(self.provenance),
                               "sources": {k: dict(v) for k, v in self.sources.items()}}}


# ------------------------------------------------------------------------------------------------ loading
def bundled_names() -> dict[str, str]:
    """alias (lower case) -> bundled system file name."""
    out: dict[str, str] = {}
    for entry in resources.files(__package__).joinpath("systems").iterdir():
        if entry.name.endswith(".json"):
            doc = json.loads(entry.read_text())
            for alias in [doc.get("name", "")] + list(doc.get("aliases", [])):
                out[str(alias).lower()] = entry.name
    return out


def load_system(name_or_path: str) -> SystemProfile:
    """A bundled system by name or alias (case-insensitive), or a system .json file by path."""
    if name_or_path.endswith(".json") or os.sep in name_or_path:
        return _load_file(name_or_path)
    names = bundled_names()
    key = name_or_path.lower()
    if key not in names:
        known = sorted({f[:-5] for f in names.values()})
        raise PredictorError(f"unknown system '{name_or_path}' (known: {', '.join(known)}; or give a system .json path)")
    text = resources.files(__package__).joinpath("systems", names[key]).read_text()
    return parse_system(json.loads(text), f"bundled:{names[key]}")


def _load_file(path: str) -> SystemProfile:
    if not os.path.isfile(path):
        raise PredictorError(f"no such system file: {path}")
    if os.path.getsize(path) > MAX_SYSTEM_BYTES:
        raise PredictorError(f"system file {path} is larger than 1 MB; not a system description")
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (ValueError, UnicodeDecodeError, RecursionError) as e:
        raise PredictorError(f"system file {path} is not valid JSON: {' '.join(str(e).split())[:200]}") from None
    return parse_system(doc, path)


def parse_system(doc: Any, origin: str = "") -> SystemProfile:
    """Validate a system document; errors name the field (``system dgx-a100: inter_node.nics_per_node ...``)."""
    where = f"system {origin}" if origin else "system"
    if not isinstance(doc, dict):
        raise PredictorError(f"{where}: the document must be a JSON object")
    name = doc.get("name")
    if isinstance(name, str) and name:
        where = f"system {name}"
    if doc.get("schema_version") != SCHEMA_VERSION:
        raise PredictorError(f"{where}: schema_version must be {SCHEMA_VERSION}")
    sources = doc.get("sources")
    if not isinstance(sources, dict):
        raise PredictorError(f"{where}: sources must be an object of source key -> description")
    prov: dict[str, str] = {}

    def text(obj: dict, key: str, path: str, choices=None) -> str:
        v = obj.get(key)
        if not isinstance(v, str) or not v:
            raise PredictorError(f"{where}: {path} must be a non-empty string")
        if choices is not None and v not in choices:
            raise PredictorError(f"{where}: {path} '{v}' is not one of {', '.join(choices)}")
        return v

    def number(obj: dict, key: str, path: str, lo: float, hi: float, integer: bool = False) -> float:
        entry = obj.get(key)
        if not isinstance(entry, dict) or "value" not in entry or "source" not in entry:
            raise PredictorError(f"{where}: {path} must be {{\"value\": number, \"source\": key}}")
        v, src = entry["value"], entry["source"]
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise PredictorError(f"{where}: {path} must be a finite number")
        if integer and float(v) != int(v):
            raise PredictorError(f"{where}: {path} must be a whole number")
        if not lo <= v <= hi:
            raise PredictorError(f"{where}: {path} = {v} is outside [{lo:g}, {hi:g}]")
        if not isinstance(src, str) or src not in sources:
            raise PredictorError(f"{where}: {path} cites source '{src}', which is not in sources")
        prov[path] = src
        return float(v)

    def section(key: str) -> dict:
        v = doc.get(key)
        if not isinstance(v, dict):
            raise PredictorError(f"{where}: {key} must be an object")
        return v

    full_name = text(doc, "full_name", "full_name")
    gpu = text(doc, "gpu", "gpu")
    name = text(doc, "name", "name")
    aliases = doc.get("aliases", [])
    if not isinstance(aliases, list) or not all(isinstance(a, str) and a for a in aliases):
        raise PredictorError(f"{where}: aliases must be a list of names")
    gpn = int(number(doc, "gpus_per_node", "gpus_per_node", 1, 1024, integer=True))
    max_nodes = int(number(doc, "max_nodes", "max_nodes", 1, 1e6, integer=True))
    i = section("intra_node")
    link = text(i, "link", "intra_node.link", LINKS)
    nvswitch = i.get("nvswitch", False)
    nvls = i.get("nvls", False)
    for flag, path in ((nvswitch, "intra_node.nvswitch"), (nvls, "intra_node.nvls")):
        if not isinstance(flag, bool):
            raise PredictorError(f"{where}: {path} must be true or false")
    gen = i.get("nvlink_gen", 0)
    if isinstance(gen, bool) or not isinstance(gen, int) or not 0 <= gen <= 10 or (link == "nvlink" and gen == 0):
        raise PredictorError(f"{where}: intra_node.nvlink_gen must be a whole number 1..10 for NVLink (0 for PCIe)")
    intra = IntraNode(
        link=link, nvlink_gen=gen, nvswitch=nvswitch,
        topology=text(i, "topology", "intra_node.topology", INTRA_TOPOLOGIES),
        bandwidth_per_gpu_Bps=number(i, "bandwidth_per_gpu_Bps", "intra_node.bandwidth_per_gpu_Bps", 1e8, 1e14),
        nvls=nvls,
        nvls_algbw_Bps=number(i, "nvls_algbw_Bps", "intra_node.nvls_algbw_Bps", 1e8, 1e14) if nvls else 0.0,
        pcie_gen=int(i.get("pcie_gen", 0) or 0),
        pcie_bandwidth_Bps=number(i, "pcie_bandwidth_Bps", "intra_node.pcie_bandwidth_Bps", 1e8, 1e13)
        if "pcie_bandwidth_Bps" in i else 0.0,
        sockets=int(number(i, "sockets", "intra_node.sockets", 1, 16, integer=True)) if "sockets" in i else 1,
        inter_socket_Bps=number(i, "inter_socket_Bps", "intra_node.inter_socket_Bps", 1e8, 1e14)
        if "inter_socket_Bps" in i else 0.0)
    if intra.sockets > 1 and not intra.inter_socket_Bps:
        raise PredictorError(f"{where}: intra_node.sockets > 1 needs intra_node.inter_socket_Bps (the link between them)")
    if gpn % intra.sockets:
        raise PredictorError(f"{where}: gpus_per_node ({gpn}) must divide evenly over intra_node.sockets "
                             f"({intra.sockets})")
    if nvls and not nvswitch:
        raise PredictorError(f"{where}: intra_node.nvls needs intra_node.nvswitch (NVLink SHARP runs in the NVSwitch)")
    n = section("inter_node")
    inter = InterNode(
        fabric=text(n, "fabric", "inter_node.fabric"),
        nics_per_node=int(number(n, "nics_per_node", "inter_node.nics_per_node", 1, 64, integer=True)),
        nic_bandwidth_Bps=number(n, "nic_bandwidth_Bps", "inter_node.nic_bandwidth_Bps", 1e8, 1e13),
        latency_s=number(n, "latency_s", "inter_node.latency_s", 1e-9, 1e-2),
        topology=text(n, "topology", "inter_node.topology", INTER_TOPOLOGIES),
        global_bandwidth_fraction=number(n, "global_bandwidth_fraction", "inter_node.global_bandwidth_fraction",
                                         1e-3, 1.0) if "global_bandwidth_fraction" in n else 1.0)
    notes = doc.get("notes", "")
    return SystemProfile(name=name, full_name=full_name, aliases=tuple(aliases), gpu=gpu, gpus_per_node=gpn,
                         max_nodes=max_nodes, intra=intra, inter=inter, provenance=frozen_map(prov),
                         sources=frozen_map({k: frozen_map(v) if isinstance(v, dict) else v
                                             for k, v in sources.items()}),
                         notes=notes if isinstance(notes, str) else "", path=origin)


def single_node(gpu_name: str, gpus: int) -> SystemProfile:
    """The node a bare ``--gpu G --gpus N`` means: the HGX/DGX node of that GPU (N <= its GPUs per node), or,
    for N larger, a cluster of those nodes (the generic InfiniBand cluster's network)."""
    by_gpu = {"v100": "dgx1-v100", "a100": "dgx-a100", "h100": "dgx-h100", "h200": "hgx-h200"}
    key = by_gpu.get(gpu_name.lower())
    if key is None:
        raise PredictorError(f"no bundled multi-GPU node for GPU '{gpu_name}': give --system NAME or a system .json "
                             f"(bundled: {', '.join(sorted({f[:-5] for f in bundled_names().values()}))})")
    return load_system(key)
