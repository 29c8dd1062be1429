"""What each GPU architecture can run: tensor-core generation and the precisions its tensor cores take.

Used to validate profiles on load (a Volta profile with a bf16 tensor-core peak is an error) and by the
transfer of a calibration to another GPU (predictor/machine/transfer.py). Sources: NVIDIA's architecture
whitepapers (Pascal GP100, Volta GV100, Turing TU102, Ampere GA100/GA102, Ada AD102, Hopper GH100,
Blackwell): tensor cores from Volta; int8 from Turing; tf32, bf16 and fp64 (GA100/GH100 only) from Ampere;
fp8 from Ada and Hopper.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ArchInfo:
    """What an architecture has (tensor-core generation, precisions)."""

    name: str
    tensor_core_generation: int  # 0: no tensor cores
    tensor_precisions: frozenset  # precisions a tensor-core peak may be given for
    compute_capabilities: tuple[str, ...]


_ALL_TENSOR = frozenset({"fp16", "bf16", "tf32", "fp64", "fp8", "int8"})
ARCHS = {a.name: a for a in (
    ArchInfo("pascal", 0, frozenset(), ("6.0", "6.1")),
    ArchInfo("volta", 1, frozenset({"fp16"}), ("7.0",)),
    ArchInfo("turing", 2, frozenset({"fp16", "int8"}), ("7.5",)),
    ArchInfo("ampere", 3, frozenset({"fp16", "bf16", "tf32", "fp64", "int8"}), ("8.0", "8.6", "8.7")),
    ArchInfo("ada", 4, frozenset({"fp16", "bf16", "tf32", "fp8", "int8"}), ("8.9",)),
    ArchInfo("hopper", 4, _ALL_TENSOR, ("9.0",)),
    ArchInfo("blackwell", 5, _ALL_TENSOR, ("10.0", "10.3", "12.0")),
)}


def arch_info(arch: str) -> ArchInfo | None:
    """The architecture's facts, or None for one this table does not know (a user's profile may name any)."""
    return ARCHS.get(arch.lower())
