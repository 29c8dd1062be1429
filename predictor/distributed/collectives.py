"""Collective communication as NCCL runs it: all-reduce, reduce-scatter, all-gather, broadcast.

The model is NCCL's own tuning model (``ncclTopoTuneModel`` / ``ncclTopoGetAlgoTime``, src/graph/tuning.cc at a
pinned NCCL 2.19/2.20-era commit): for each algorithm (ring; tree, NVLink SHARP and the NVLS tree for
all-reduce) and protocol (LL, LL128, Simple) a time ``latency + bytes / algorithm bandwidth``, and NCCL picks
the cheapest. Its numbers live in ``nccl.json`` with their sources. Where NCCL's bandwidths come from: the
links of the system (``system.py``) at the share NCCL's topology code assigns them (src/graph/topo.h: 20 GB/s
of a 25 GB/s NVLink 2 or 3 brick, 20.6 GB/s of an NVLink 4 brick, 12 of PCIe Gen3's 16 GB/s), and the network
at its measured efficiency (46-48 of 50 GB/s per NDR NIC).

Definitions (as nccl-tests reports them, doc/PERFORMANCE.md): ``size_bytes`` is the buffer of the test
(all-gather: the gathered output; reduce-scatter: the input), ``algbw = size / time`` and
``busbw = algbw x factor`` with factor 2(n-1)/n for all-reduce, (n-1)/n for reduce-scatter and all-gather,
1 for broadcast: the bandwidth each rank's link must carry, comparable across rank counts.

Hierarchy: a ring over several nodes crosses the network once per node per ring, NCCL runs one ring per
NIC, so a multi-node ring's bus bandwidth is min(intra-node links, node injection); its latency has 2 x nodes
network steps, the others at least the network post overhead. The tree (multi-node all-reduce) has log2(nodes)
network steps each way; on up to two nodes NCCL prices it (and the NVLS tree) with the intra-node bandwidth,
which is why two-node all-reduce busbw exceeds the ring's NIC bound; this module also holds the tree's
algorithm bandwidth to the node's injection bandwidth (each node sends the whole buffer once each way). NVLink
SHARP (NVLS, one node) runs at the system's measured algorithm bandwidth; the NVLS tree across nodes at that
bandwidth scaled by the network's share. Ignored: NCCL's channel counts (per-channel caps, fewer channels for
small messages), the chunk pipelining of rings and trees except through NCCL's tree correction factors (NVLS
and the NVLS tree do pay their pipeline fill, from NCCL's chunk sizes: ``nvls_fill_s``), NVLS for reduce-scatter and
all-gather, CollNet/SHARP in the switches, PAT, congestion from other jobs, NIC/GPU affinity mistakes, the
NIC's own latency (zero for InfiniBand in NCCL; EFA and TCP-based fabrics are slower at small sizes), and
the CPU vendor (NCCL's multi-node LL bandwidth caps use the Intel row); ranks per node are equal on every node.
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
    base_latency_s: Mapping            # algorithm -> protocol -> s
    hw_latency_s: Mapping              # nvlink | pcie | net -> algorithm -> protocol -> s
    net_overhead_s: float              # network post overhead per ring step (x simple_factor for Simple)
    net_overhead_simple_factor: float
    protocol_factor: Mapping
    ll_max_bw_Bps: Mapping             # arch or cpu row -> [1 node, 2 nodes, more]
    tree_correction: Mapping
    ring_plateau: Mapping              # arch -> latency factor
    plateau_channels: int
    arch_by_nvlink_gen: Mapping[str, str]
    nvlink_link_Bps: Mapping[str, float]   # NCCL's bandwidth per NVLink, by NVLink generation
    nvlink_line_Bps: float                 # the link's line rate per direction
    pcie_efficiency: float
    net_efficiency: float
    pipeline: Mapping = None               # NVLS chunking (src/enqueue.cc): see ``nvls_fill_s``

    def arch(self, system: SystemProfile) -> str:
        """NCCL's GPU generation row: from the NVLink generation (2 Volta, 3 Ampere, 4 Hopper; newer links use the
        Hopper row); PCIe-only nodes use the Ampere row."""
        if system.intra.link != "nvlink":
            return "ampere"
        gens = sorted(self.arch_by_nvlink_gen, key=int)
        gen = str(min(int(system.intra.nvlink_gen), int(gens[-1])))
        return self.arch_by_nvlink_gen.get(gen, "volta")

    def intra_efficiency(self, system: SystemProfile) -> float:
        """Share of a GPU's intra-node line rate NCCL's Simple protocol moves: NCCL's per-link NVLink bandwidth over
        the link's line rate (0.80 NVLink 2 and 3, 0.824 NVLink 4), or NCCL's PCIe Gen3 figure over its line rate."""
        if system.intra.link != "nvlink":
            return self.pcie_efficiency
        gens = sorted(self.nvlink_link_Bps, key=int)
        gen = str(min(max(int(system.intra.nvlink_gen), int(gens[0])), int(gens[-1])))
        return self.nvlink_link_Bps[gen] / self.nvlink_line_Bps


@lru_cache(maxsize=1)
def nccl_model() -> NcclModel:
    doc = json.loads(resources.files(__package__).joinpath("nccl.json").read_text())
    nv = doc["nvlink"]
    return NcclModel(doc["base_latency_s"], doc["hw_latency_s"], float(doc["net_overhead_s"]["value"]),
                     float(doc["net_overhead_s"]["simple_factor"]), doc["protocol_bandwidth_factor"],
                     {k: v for k, v in doc["ll_max_bw_Bps"].items() if k != "note"}, doc["tree_correction"],
                     doc["ring_plateau_latency_factor"], int(doc["ring_plateau_channels"]["value"]),
                     nv["arch_by_generation"], {k: float(v) for k, v in nv["nccl_link_Bps"]["value"].items()},
                     float(nv["line_rate_link_Bps"]["value"]), float(doc["pcie_efficiency"]["value"]),
                     float(doc["net_efficiency"]["value"]), doc["pipeline"])


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
    fill_s: float = 0.0                # pipeline fill (NVLS algorithms): part of time_s, beside latency_s

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


def intra_busbw_Bps(system: SystemProfile, lay: Layout | None = None) -> float:
    """What one GPU's intra-node links carry under NCCL's Simple protocol: line rate x NCCL's per-link share;
    a ring over more GPUs than one socket holds also crosses the link between sockets (NCCL's own figure for it,
    e.g. P9_BW 32 GB/s for POWER9's X-Bus)."""
    bw = system.intra.bandwidth_per_gpu_Bps * nccl_model().intra_efficiency(system)
    per_node = lay.per_node if lay is not None else system.gpus_per_node
    if system.intra.sockets > 1 and per_node > system.gpus_per_node // system.intra.sockets:
        bw = min(bw, system.intra.inter_socket_Bps)
    return bw


def node_net_Bps(system: SystemProfile, lay: Layout) -> float:
    """What a node injects into the network (NICs used up to one per GPU) at the measured network efficiency."""
    nics = min(system.inter.nics_per_node, max(lay.per_node, 1))
    return nics * system.inter.nic_bandwidth_Bps * system.inter.global_bandwidth_fraction * nccl_model().net_efficiency


def ring_busbw_Bps(system: SystemProfile, lay: Layout) -> float:
    """Simple-protocol bus bandwidth of a ring: the intra-node links, and across nodes the node's injection
    bandwidth (one ring per NIC)."""
    intra = intra_busbw_Bps(system, lay)
    if lay.nodes == 1:
        return intra
    net = node_net_Bps(system, lay)
    return min(intra, net) if lay.per_node > 1 else net


def _ll_max(m: NcclModel, system: SystemProfile, nodes: int) -> float:
    row = m.ll_max_bw_Bps[m.arch(system) if nodes == 1 else "intel"]
    return row[0 if nodes == 1 else 1 if nodes == 2 else 2]


def _tree_correction(m: NcclModel, protocol: str, size_bytes: float) -> float:
    log_size = int(math.log2(max(size_bytes, 64) / 64))
    table = m.tree_correction[protocol]
    return table[log_size] if log_size < len(table) else 1.0


def _ring(op: str, size_bytes: float, system: SystemProfile, lay: Layout, m: NcclModel) -> list[CollectiveTime]:
    n, nodes = lay.ranks, lay.nodes
    kind = _intra_kind(system)
    hw = kind if nodes == 1 else "net"
    f = m.protocol_factor["ring"]
    nsteps = 2 * (n - 1) if op == "all_reduce" else (n - 1 if op in ("reduce_scatter", "all_gather") else n)
    if nodes == 1:
        inter_steps = 0
    else:
        inter_steps = 2 * nodes if op == "all_reduce" else nodes - 1
    inter_steps = min(inter_steps, nsteps)
    base_bus = ring_busbw_Bps(system, lay)
    out = []
    for p in PROTOCOLS:
        if p == "LL128" and system.intra.link != "nvlink":
            continue  # NCCL enables LL128 by default on NVLink systems only
        if p == "LL":
            share = f["LL_allreduce_or_multinode"] if (nodes > 1 or op == "all_reduce") else f["LL_other"]
            bus = min(_ll_max(m, system, nodes), base_bus * share)
        elif p == "LL128":
            bus = base_bus * (f["LL128_one_rank_per_node"] if lay.per_node < 2 else f["LL128"])
        else:
            bus = base_bus * f["Simple"]
        alg = bus * n / nsteps
        if op == "broadcast":
            lat = m.base_latency_s["ring"][p] + nsteps * m.hw_latency_s[hw]["tree" if p == "Simple" else "ring"][p]
        else:
            intra_lat = m.hw_latency_s[kind]["ring"][p]
            if nodes > 1:  # each step of a multi-node ring also pays the network post overhead
                intra_lat = max(intra_lat, m.net_overhead_s * (m.net_overhead_simple_factor if p == "Simple" else 1.0))
            lat = (m.base_latency_s["ring"][p] + (nsteps - inter_steps) * intra_lat
                   + inter_steps * m.hw_latency_s["net"]["ring"][p])
        if (p == "Simple" and nodes > 1 and op == "all_reduce"
                and size_bytes / (m.plateau_channels * n) >= 64):
            lat *= m.ring_plateau[m.arch(system)]
        out.append(CollectiveTime(op, size_bytes, n, nodes, "ring", p, lat + size_bytes / alg, lat))
    return out


def _tree(size_bytes: float, system: SystemProfile, lay: Layout, m: NcclModel) -> list[CollectiveTime]:
    """NCCL's double binary tree across nodes (chains inside them), all-reduce only. On up to two nodes NCCL
    prices it with the intra-node bandwidth; each node still sends the whole buffer once each way across the
    network, so the algorithm bandwidth is also held to the node's injection bandwidth (half of it beyond two
    nodes, where a tree node also forwards to two children)."""
    n, nodes = lay.ranks, lay.nodes
    kind = _intra_kind(system)
    f = m.protocol_factor["tree"]
    intra, net = intra_busbw_Bps(system, lay), node_net_Bps(system, lay)
    bw = intra if nodes <= 2 else min(intra, net)
    alg_cap = net if nodes <= 2 else net / 2.0
    log_nodes = int(math.log2(nodes))
    out = []
    for p in PROTOCOLS:
        if p == "LL128" and system.intra.link != "nvlink":
            continue
        bus = bw * f["all"]
        if p == "LL":
            bus = min(bus * f["LL"], _ll_max(m, system, nodes))
        elif p == "LL128":
            bus *= f["LL128_multinode"]
        alg = min(bus * m.protocol_factor["tree_algbw_per_busbw"], alg_cap)
        alg *= _tree_correction(m, p, size_bytes)
        lat = m.base_latency_s["tree"][p] + 2 * ((lay.per_node - 1) * m.hw_latency_s[kind]["tree"][p]
                                                 + log_nodes * m.hw_latency_s["net"]["tree"][p])
        out.append(CollectiveTime("all_reduce", size_bytes, n, nodes, "tree", p, lat + size_bytes / alg, lat))
    return out


def nvls_chunk_bytes(size_bytes: float, lanes: int, tree: bool, m: NcclModel) -> int:
    """The chunk one NVLS lane moves at a time, as NCCL's enqueue.cc sets it: the Simple step (buffer / NCCL_STEPS,
    512 KiB), capped at 128 KiB for NVLS, then cut down while the message is small next to lanes x chunk."""
    p = m.pipeline
    chunk = p["simple_buffer_bytes"] // p["steps"]
    if not tree:
        chunk = min(chunk, p["nvls_max_chunk_bytes"])
    for mult, cap in p["nvls_tree_chunk_rule" if tree else "nvls_chunk_rule"]:
        if size_bytes < mult * lanes * chunk and chunk > cap:
            chunk = cap
    return chunk


def nvls_fill_s(size_bytes: float, alg_Bps: float, lay: Layout, m: NcclModel) -> float:
    """Pipeline fill of the NVLS algorithms, which NCCL's tuner leaves out: the message moves in chunks over
    nvlsChannels x (GPUs per node) lanes, and a chunk passes ``stages`` stages in turn (the NVSwitch reduce and
    broadcast; across nodes also one network hop up and one down per tree level). Store and forward: the last
    chunk leaves the first stage when the bandwidth term says the transfer ends, then crosses the other
    stages - 1, each taking what one stage holds (every lane's chunk, or the whole message if smaller) at the
    algorithm bandwidth: fill = (stages - 1) x min(size, lanes x chunk) / algbw. A ring needs no such term: every
    rank sends from its first step."""
    p = m.pipeline
    lanes = p["nvls_channels"] * lay.per_node
    tree = lay.nodes > 1
    stages = p["nvls_stages"] + (p["nvls_tree_stages_per_tree_level"] * int(math.log2(lay.nodes)) if tree else 0)
    in_flight = min(size_bytes, lanes * nvls_chunk_bytes(size_bytes, lanes, tree, m))
    return (stages - 1) * in_flight / alg_Bps


def _nvls(size_bytes: float, system: SystemProfile, lay: Layout, m: NcclModel) -> list[CollectiveTime]:
    """NVLink SHARP all-reduce: in the NVSwitch on one node (the system's measured algorithm bandwidth); across
    nodes NCCL's NVLS tree, its bandwidth held to the network's share (NCCL: min(bwIntra, bwInter), bwInter / 2
    beyond two nodes)."""
    n, nodes = lay.ranks, lay.nodes
    alg = system.intra.nvls_algbw_Bps
    if nodes == 1:
        lat = m.base_latency_s["nvls"]["Simple"] + m.hw_latency_s["nvlink"]["nvls"]["Simple"]
        fill = nvls_fill_s(size_bytes, alg, lay, m)
        return [CollectiveTime("all_reduce", size_bytes, n, nodes, "nvls", "Simple", lat + fill + size_bytes / alg,
                               lat, fill)]
    share = node_net_Bps(system, lay) * (1.0 if nodes <= 2 else 0.5) / intra_busbw_Bps(system, lay)
    alg *= min(1.0, share)
    lat = (m.base_latency_s["nvls_tree"]["Simple"] + m.hw_latency_s["nvlink"]["nvls_tree"]["Simple"]
           + 2 * int(math.log2(nodes)) * m.hw_latency_s["net"]["nvls_tree"]["Simple"])
    fill = nvls_fill_s(size_bytes, alg, lay, m)
    return [CollectiveTime("all_reduce", size_bytes, n, nodes, "nvls_tree", "Simple", lat + fill + size_bytes / alg,
                           lat, fill)]


def candidates(op: str, size_bytes: float, system: SystemProfile, lay: Layout, nvls: bool = True) -> list[CollectiveTime]:
    """Every (algorithm, protocol) NCCL would consider, with its modelled time."""
    if op not in OPS:
        raise PredictorError(f"unknown collective '{op}' (known: {', '.join(OPS)})")
    n, nodes = lay.ranks, lay.nodes
    if n == 1 or size_bytes <= 0:
        return [CollectiveTime(op, size_bytes, n, nodes, "none", "none", 0.0, 0.0)]
    m = nccl_model()
    out = _ring(op, size_bytes, system, lay, m)
    if op == "all_reduce" and nodes > 1:
        out += _tree(size_bytes, system, lay, m)
    if op == "all_reduce" and nvls and system.intra.nvls:
        out += _nvls(size_bytes, system, lay, m)
    return out


def collective_time(op: str, size_bytes: float, system: SystemProfile, ranks: int | Layout,
                    nvls: bool = True) -> CollectiveTime:
    """The time NCCL's tuner would pick for one collective on ``ranks`` GPUs of ``system``."""
    lay = ranks if isinstance(ranks, Layout) else layout_for(system, ranks)
    return min(candidates(op, size_bytes, system, lay, nvls), key=lambda c: c.time_s)


__all__ = ["OPS", "Layout", "CollectiveTime", "bus_factor", "ring_bytes_per_rank", "ring_busbw_Bps",
           "intra_busbw_Bps", "node_net_Bps", "layout_for", "candidates", "collective_time", "nccl_model",
           "nvls_chunk_bytes", "nvls_fill_s"]
