"""A kernel's features for the time model, from its cost and the GPU profile alone.

Ideal times are at 100% of the profile's ceilings: ``compute_s`` already holds the tile padding the kernels execute
and the wave efficiency over the GPU's SMs (predictor/fitted.py: gemm_wave, tile_padding), so that the model's
``eff_compute`` is what is left. Ignores: data-dependent speed, clocks below the profile's.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..machine.profile import MachineProfile
from ..roofline import level_times_s
from ..types import MemLevel, Node, OpCost


@dataclass(frozen=True)
class KernelFeatures:
    """A kernel's ideal times and counts under a profile (see the module text)."""

    kernels: float  # kernels the node launches (its own, not the runtime's hidden ones)
    compute_s: float  # FLOPs x tile padding / (peak x wave efficiency); 0 when no FLOPs
    gemm_k: float  # K of the GEMM the kernel runs (0 when none): each tile pays gemm_k_half steps of its K loop
    hbm_s: float  # HBM bytes / HBM bandwidth
    l2_s: float  # L2 bytes / L2 bandwidth
    l1_s: float  # L1 bytes / L1 bandwidth
    rows_per_sm: float  # rows of a block-per-row kernel per SM (OpWork.rows / SMs)
    walk_waves: float  # waves of a block-walk kernel: ceil(blocks / SMs) (OpWork.channel_walk)
    walk_bytes_per_sm: float  # bytes one SM walks in a block-walk kernel: waves x bytes per block


def kernel_features(cost: OpCost, profile: MachineProfile, precision: str, node: Node | None = None) -> KernelFeatures:
    """The features of ``cost``'s kernels (``node`` is where an algorithm choice of the library would enter: none is
    modelled; cuDNN's fp32 FFT convolutions, chosen for some stride-1 large-kernel shapes and not for their
    neighbours, are left as direct ones)."""
    from ..fitted import channel_walk_units, gemm_wave, tile_padding, walk_waves

    ideal = level_times_s(cost, profile, 0.0)
    w = cost.work
    wave = gemm_wave(w.gemm, precision, profile.sm_count)
    return KernelFeatures(
        kernels=float(cost.kernels),
        compute_s=ideal["compute"] * tile_padding(w.gemm) / wave if ideal["compute"] else 0.0,
        gemm_k=float(w.gemm[3]) if w.gemm else 0.0,
        hbm_s=ideal[MemLevel.HBM.value], l2_s=ideal[MemLevel.L2.value], l1_s=ideal[MemLevel.L1.value],
        rows_per_sm=w.rows / profile.sm_count,
        walk_waves=float(walk_waves(w.channel_walk, profile.sm_count)),
        walk_bytes_per_sm=float(channel_walk_units(w.channel_walk, profile.sm_count)))
