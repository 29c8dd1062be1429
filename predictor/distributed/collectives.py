"""Collective communication as NCCL runs it: all-reduce, reduce-scatter, all-gather, broadcast.

The model is NCCL's own tuning model (``ncclTopoTuneModel`` / ``ncclTopoGetAlgoTime``): for each algorithm
(ring; tree and NVLink SHARP for all-reduce) and protocol (LL, LL128, Simple) a time
``latency + bytes / algorithm bandwidth``, and NCCL picks the cheapest. Its numbers live in
``nccl.json`` with their sources. What this module adds is where NCCL's bandwidths come from: the links of
the system (``system.py``) times the bus-bandwidth efficiency NCCL's Simple protocol reaches on that link.

Definitions (as nccl-tests reports them, doc/PERFORMANCE.md): ``size_bytes`` is the buffer of the test
(all-gather: the gathered output; reduce-scatter: the input), ``algbw = size / time`` and
``busbw = algbw x factor`` with factor 2(n-1)/n for all-reduce, (n-1)/n for reduce-scatter and all-gather,
1 for broadcast: the bandwidth each rank's link must carry, comparable across rank counts.

Hierarchy: a ring over several nodes crosses the network once per node per ring, NCCL runs one ring per
NIC, so a multi-node ring's bus bandwidth is min(intra-node link, node injection bandwidth); its latency has
2(nodes-1) network steps and the rest on NVLink/PCIe. The tree (multi-node all-reduce) has log2(nodes)
network steps each way. NVLink SHARP (NVLS, NVSwitch-reduced all-reduce on one node) runs at a fixed
algorithm bandwidth. Ignored: the chunking of NCCL's pipelines (only through its correction factors),
channel counts below what saturates a link, congestion from other jobs, NIC/GPU affinity mistakes,
adaptive routing, CollNet/SHARP in the switches, and PAT; ranks per node are assumed equal on every node.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Mapping

from ..types import PredictorError
from .system import SystemProfile

OPS = ("all_reduce", "reduce_scatter", "all_gather", "broadcast")
PROTOCOLS = ("LL", "LL128", "Simple")


def bus_factor(op: str, ranks: int) -> float:
    """nccl-tests' busbw / algbw: 2(n-1)/n all-reduce, (n-1)/n reduce-scatter and all-gather, 1 broadcast."""
    n = ranks
    if op == "all_reduce":
        return 2.0 * (n - 1) / n
    if op in ("reduce_scatter", "all_gather"):
        return (n - 1) / n
    if op == "broadcast":
        return 1.0
    raise PredictorError(f"unknown collective '{op}' (known: {', '.join(OPS)})")


def ring_bytes_per_rank(op: str, size_bytes: float, ranks: int) -> float:
    """Bytes each rank sends in a ring: all-reduce 2(n-1)/n x size, reduce-scatter/all-gather (n-1)/n x size,
    broadcast size (a pipelined chain)."""
    return bus_factor(op, ranks) * size_bytes


@dataclass(frozen=True)
class NcclModel:
    base_latency_s: Mapping
    hw_latency_s: Mapping
    protocol_factor: Mapping
    tree_correction: Mapping
    ring_plateau: float
    link_efficiency: Mapping[str, float]
    nvls_latency_s: float


@lru_cache(maxsize=1)
def nccl_model() -> NcclModel:
    doc = json.loads(resources.files(__package__).joinpath("nccl.json").read_text())
    return NcclModel(doc["base_latency_s"], doc["hw_latency_s"], doc["protocol_bandwidth_factor"],
                     doc["tree_correction"], float(doc["ring_plateau_latency_factor"]),
                     {k: float(v["value"]) for k, v in doc["link_efficiency"].items()},
                     float(doc["nvls_latency_s"]["value"]))


@dataclass(frozen=True)
class Layout:
    """Where the ranks of one communicator sit: ``ranks`` GPUs on ``nodes`` nodes (equal ranks per node)."""

    ranks: int
    nodes: int

    @property
    def per_node(self) -> int:
        return self.ranks // self.nodes


@dataclass(frozen=True)
class CollectiveTime:
    op: str
    size_bytes: float
    ranks: int
    nodes: int
    algorithm: str
    protocol: str
    time_s: float
    latency_s: float

    @property
    def algbw_Bps(self) -> float:
        return self.size_bytes / self.time_s if self.time_s > 0 else 0.0

    @property
    def busbw_Bps(self) -> float:
        return self.algbw_Bps * bus_factor(self.op, self.ranks) if self.ranks > 1 else 0.0


def layout_for(system: SystemProfile, ranks: int) -> Layout:
    """Ranks fill nodes: up to ``gpus_per_node`` on one node, else whole nodes."""
    if ranks < 1:
        raise PredictorError(f"a collective needs at least 1 rank (got {ranks})")
    g = system.gpus_per_node
    if ranks <= g:
        return Layout(ranks, 1)
    if ranks % g:
        raise PredictorError(f"{ranks} GPUs do not fill whole {system.name} nodes of {g} GPUs; give a multiple of {g}")
    nodes = ranks // g
    if nodes > system.max_nodes:
        raise PredictorError(f"{ranks} GPUs need {nodes} {system.name} nodes; the system has {system.max_nodes}")
    return Layout(ranks, nodes)


def _intra_kind(system: SystemProfile) -> str:
    return "nvlink" if system.intra.link == "nvlink" else "pcie"


def ring_busbw_Bps(system: SystemProfile, lay: Layout) -> float:
    """Simple-protocol bus bandwidth of a ring: the intra-node link at NCCL's efficiency, and across nodes the
    node's injection bandwidth (one ring per NIC, NICs used up to one per GPU) at the network efficiency."""
    m = nccl_model()
    kind = _intra_kind(system)
    intra = system.intra.bandwidth_per_gpu_Bps * m.link_efficiency[kind]
    if lay.nodes == 1:
        return intra
    nics = min(system.inter.nics_per_node, max(lay.per_node, 1))
    net = nics * system.inter.nic_bandwidth_Bps * system.inter.global_bandwidth_fraction * m.link_efficiency["net"]
    return min(intra, net) if lay.per_node > 1 else net


def candidates(op: str, size_bytes: float, system: SystemProfile, lay: Layout, nvls: bool = True) -> list[CollectiveTime]:
    """Every (algorithm, protocol) NCCL would consider, with its modelled time."""
    if op not in OPS:
        raise PredictorError(f"unknown collective '{op}' (known: {', '.join(OPS)})")
    n, nodes = lay.ranks, lay.nodes
    if n == 1 or size_bytes <= 0:
        return [CollectiveTime(op, size_bytes, n, nodes, "none", "none", 0.0, 0.0)]
    m = nccl_model()
    kind = _intra_kind(system)
    hw = kind if nodes == 1 else "net"
    nsteps = 2 * (n - 1) if op == "all_reduce" else (n - 1 if op in ("reduce_scatter", "all_gather") else n)
    inter_steps = 0 if nodes == 1 else (2 * (nodes - 1) if op == "all_reduce" else nodes - 1)
    base_bus = ring_busbw_Bps(system, lay)
    out = []
    for p in PROTOCOLS:
        if p == "LL128" and system.intra.link != "nvlink":
            continue  # NCCL enables LL128 by default on NVLink systems only
        bus = base_bus * m.protocol_factor["ring"][p]
        if p == "LL" and not (nodes > 1 or op == "all_reduce"):
            bus = base_bus / 3.0
        alg = bus * n / nsteps
        intra_lat = m.hw_latency_s[kind]["ring"][p] * (1.8 if nodes > 1 and p == "LL" else 1.0)
        if op == "broadcast":
            lat = m.base_latency_s["ring"][p] + nsteps * m.hw_latency_s[hw]["tree" if p == "Simple" else "ring"][p]
        else:
            lat = (m.base_latency_s["ring"][p] + (nsteps - inter_steps) * intra_lat
                   + inter_steps * m.hw_latency_s["net"]["ring"][p])
        if p == "Simple" and nodes > 1 and op == "all_reduce" and size_bytes >= n / 16.0 * 65536:
            lat *= m.ring_plateau
        out.append(CollectiveTime(op, size_bytes, n, nodes, "ring", p, lat + size_bytes / alg, lat))
    if op == "all_reduce" and nodes > 1:
        log_nodes = int(math.log2(nodes)) if nodes > 1 else 0
        log_size = int(math.log2(max(size_bytes, 64) / 64))
        for p in PROTOCOLS:
            if p == "LL128" and system.intra.link != "nvlink":
                continue
            bus = base_bus * m.protocol_factor["tree"][p]
            alg = bus * 0.5
            if log_size < 22:
                alg *= m.tree_correction[p][log_size]
            intra_lat = m.hw_latency_s[kind]["tree"][p] * (1.8 if p == "LL" else 1.0)
            lat = m.base_latency_s["tree"][p] + 2 * ((lay.per_node - 1) * intra_lat
                                                     + log_nodes * m.hw_latency_s["net"]["tree"][p])
            out.append(CollectiveTime(op, size_bytes, n, nodes, "tree", p, lat + size_bytes / alg, lat))
    if op == "all_reduce" and nodes == 1 and nvls and system.intra.nvls and n > 1:
        alg = system.intra.nvls_algbw_Bps
        lat = m.nvls_latency_s
        out.append(CollectiveTime(op, size_bytes, n, nodes, "nvls", "Simple", lat + size_bytes / alg, lat))
    return out


def collective_time(op: str, size_bytes: float, system: SystemProfile, ranks: int | Layout,
                    nvls: bool = True) -> CollectiveTime:
    """The time NCCL's tuner would pick for one collective on ``ranks`` GPUs of ``system``."""
    lay = ranks if isinstance(ranks, Layout) else layout_for(system, ranks)
    return min(candidates(op, size_bytes, system, lay, nvls), key=lambda c: c.time_s)


__all__ = ["OPS", "Layout", "CollectiveTime", "bus_factor", "ring_bytes_per_rank", "ring_busbw_Bps",
           "layout_for", "candidates", "collective_time", "nccl_model"]
