"""What each GPU architecture can run: tensor-core generation and the precisions its tensor cores take.

Used to validate profiles on load (a Volta profile with a bf16 tensor-core peak is an error) and by the
transfer of a calibration to another GPU (predictor/machine/transfer.py). Sources: NVIDIA's architecture
whitepapers (Pascal GP100, Volta GV100, Turing TU102, Ampere GA100/GA102, Ada AD102, Hopper GH100,
Blackwell): tensor cores from Volta; int8 from Turing; tf32, bf16 and fp64 (GA100/GH100 only) from Ampere;
fp8 from Ada and Hopper.
"""
from __future__ import annotations

from ..frozen import frozen_dataclass


@frozen_dataclass
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


@frozen_dataclass
class SMIssue:
    """FP32 lanes of one SM and the threads its schedulers dispatch per clock (warp instructions x 32)."""

    fp32_lanes: int
    dispatch_threads: int
    source: str

    @property
    def headroom(self) -> float:
        """Dispatch slots per FP32-lane slot: 2 where a warp's FFMA occupies its partition's 16 lanes for two
        clocks, so another instruction issues beside every FFMA; 1 where the FFMA lanes equal the dispatch width
        and every other instruction takes an FFMA's slot. Pascal's second dispatch unit per scheduler (dual issue
        of a compiler-paired independent instruction) is not counted: NeuSight's published per-op times on a
        P100 PCIe put cuBLAS SGEMM at 0.75-0.78 of the datasheet rate (BERT-large's Linear layers, e.g. 4096 x
        1024 x 4096 in 4.77 ms = 7.2 TFLOP/s of 9.3), about the H200's fitted share (0.71), where Volta's reach
        0.82-0.93 (V100 PCIe, same layers)."""
        return self.dispatch_threads / self.fp32_lanes


# by compute capability, from NVIDIA's architecture whitepapers
SM_ISSUE = {
    "6.0": SMIssue(64, 64, "Pascal GP100 whitepaper: 64 FP32 cores per SM in two processing blocks of 32, each with "
                           "a warp scheduler (one warp instruction, 32 threads, per clock; its second dispatch unit "
                           "only dual-issues: not counted, see headroom)"),
    "6.1": SMIssue(128, 128, "GP104 (Pascal, Maxwell-style SM): four partitions of 32 FP32 cores, each warp scheduler "
                             "one warp instruction per clock (dual issue not counted, see headroom)"),
    "7.0": SMIssue(64, 128, "Volta GV100 whitepaper: four partitions, each with one warp scheduler and dispatch unit "
                            "(32 threads/clk) and 16 FP32 cores"),
    "7.5": SMIssue(64, 128, "Turing TU102 whitepaper: four partitions, each with one warp scheduler and dispatch unit "
                            "(32 threads/clk), 16 FP32 and 16 INT32 cores"),
    "8.0": SMIssue(64, 128, "Ampere GA100 whitepaper: four partitions, each with one warp scheduler and dispatch unit "
                            "(32 threads/clk) and 16 FP32 cores"),
    "8.6": SMIssue(128, 128, "Ampere GA102 whitepaper: four partitions, each with one dispatch unit (32 threads/clk), "
                             "16 FP32 and 16 FP32/INT32 cores"),
    "8.7": SMIssue(128, 128, "Ampere GA10x SM (as 8.6)"),
    "8.9": SMIssue(128, 128, "Ada AD102 whitepaper: the GA10x SM partition (16 FP32 + 16 FP32/INT32 cores, one "
                             "dispatch unit of 32 threads/clk)"),
    "9.0": SMIssue(128, 128, "Hopper GH100 whitepaper: four partitions, each with one warp scheduler and dispatch unit "
                             "(32 threads/clk) and 32 FP32 cores"),
    "10.0": SMIssue(128, 128, "Blackwell: 128 FP32 cores per SM (B200 FP32 80 TFLOP/s = 148 SMs x 256 FLOP/clk x "
                              "2.11 GHz), four partitions of 32 threads/clk"),
    "10.3": SMIssue(128, 128, "Blackwell (as 10.0)"),
    "12.0": SMIssue(128, 128, "Blackwell (as 10.0)"),
}


def sm_issue(compute_capability: str) -> SMIssue | None:
    """The SM's FP32 lanes and dispatch width, or None for a compute capability this table does not know."""
    return SM_ISSUE.get(compute_capability)
