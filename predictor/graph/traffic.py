"""Memory-traffic model: bytes moved at L1/shared (l1tex), L2 (lts) and HBM (dram) per node.

Starts from compulsory bytes (inputs read once, outputs written once) and adds what real kernels do:

* GEMM/convolution tiling: an output tile of ``tile_m x tile_n`` reads a strip of A and of B, so A is
  read ceil(N/tile_n) times and B ceil(M/tile_m) times through L2 (implicit-GEMM convolution: M = batch x
  output pixels, N = output channels, K = input channels/group x kernel window; the im2col expansion of the
  activations is read from L2, not materialised). Ignores: split-K, L2-side reuse between concurrent tiles,
  epilogue fusion.
* Hopper tensor-core kernels (wgmma) load operands with TMA from L2 into shared memory without touching
  ``l1tex__t_bytes``: their L1 bytes are only the epilogue's output writes. CUDA-core kernels and pre-Hopper
  tensor-core kernels move every global access through L1TEX (L1 = L2 bytes, re-reads included).
* L2 residency between producer and consumer: an input produced by an earlier kernel is read from L2, not
  HBM, while the bytes touched since it was written stay under ``resident_fraction`` of the L2 size. Weights
  (initializers) come from HBM on first use in a forward. Outputs are written back to HBM in full (write-back
  L2 evicts them later). Ignores: L2 set conflicts, compression, prefetch, partial residency (all or nothing).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from ..types import MemLevel, Node, OpWork, Unit, frozen_map


@dataclass(frozen=True)
class TrafficParams:
    tile_m: int = 128
    tile_n: int = 128
    resident_fraction: float = 0.5
    tma_tensor_path: bool = False  # Hopper and later: wgmma operands via TMA, no l1tex traffic


def params_for(arch: str) -> TrafficParams:
    return TrafficParams(tma_tensor_path=arch.lower() in ("hopper", "blackwell"))


def gemm_l2_bytes(batch: int, m: int, n: int, k: int, elem_bytes: int, p: TrafficParams) -> float:
    """A (M x K) read ceil(N/tile_n) times, B (K x N) read ceil(M/tile_m) times, C written once, per batch."""
    a = m * k * elem_bytes * math.ceil(n / p.tile_n)
    b = k * n * elem_bytes * math.ceil(m / p.tile_m)
    c = m * n * elem_bytes
    return float(batch * (a + b + c))


class HierarchicalTraffic:
    """Assigns bytes per level to a sequence of (node, work) in execution order."""

    def __init__(self, l2_bytes: float, arch: str, params: TrafficParams | None = None):
        self.l2_bytes = l2_bytes
        self.params = params or params_for(arch)

    def assign(self, seq: Sequence[tuple[Node, OpWork]], matmul_unit: Unit, elem_bytes: int):
        p = self.params
        window = p.resident_fraction * self.l2_bytes
        produced_at: dict[str, float] = {}  # tensor name -> cumulative bytes touched when it was written
        touched = 0.0
        out = []
        for node, work in seq:
            compulsory = work.bytes_read + work.bytes_written
            if work.kernels == 0:
                for t in node.outputs:  # views alias their input: keep the producer's residency
                    src = node.inputs[0].name if node.inputs and node.inputs[0] is not None else None
                    if src in produced_at and t.name:
                        produced_at[t.name] = produced_at[src]
                out.append(frozen_map({lv: 0.0 for lv in MemLevel}))
                continue
            l2 = compulsory
            if work.gemm is not None:
                b, m, n, k = work.gemm
                l2 = max(compulsory, gemm_l2_bytes(b, m, n, k, elem_bytes, p) + (work.bytes_read - work.gemm_operand_bytes))
            # HBM: inputs still resident in L2 are not re-read from HBM
            hbm_read = work.bytes_read
            if work.bytes_read > 0:
                resident = 0.0
                for t in node.inputs:
                    if t is None or t.name not in produced_at or t.shape is None:
                        continue
                    if touched - produced_at[t.name] <= window:
                        resident += work.input_bytes.get(t.name, 0.0)
                hbm_read = max(work.bytes_read - resident, 0.0)
            hbm = hbm_read + work.bytes_written
            on_tensor = work.gemm is not None and matmul_unit is Unit.TENSOR
            l1 = work.bytes_written if (on_tensor and p.tma_tensor_path) else l2
            touched += compulsory
            for t in node.outputs:
                if t.name:
                    produced_at[t.name] = touched
            out.append(frozen_map({MemLevel.L1: l1, MemLevel.L2: l2, MemLevel.HBM: hbm}))
        return out
