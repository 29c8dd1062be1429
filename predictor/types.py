"""Core value types passed between the stages: load -> cost -> time -> sum.

Every stage hands the next one frozen dataclasses; nothing is mutated in place.
Units are in the names: ``flops`` (an FMA is 2 FLOPs), ``bytes``, ``time_s``, ``_Bps``.
"""
from __future__ import annotations

from dataclasses import field
from functools import cached_property
from enum import Enum
from math import prod
from types import MappingProxyType
from typing import Any, Mapping

from .fastinit import fast_replace
from .frozen import frozen_dataclass

# the default-domain opset the cost formulas read a model as when it declares none (attribute defaults, semantics)
DEFAULT_OPSET = 21


class Precision(str, Enum):
    """Arithmetic precision of FLOPs (and, for floats, the storage type of tensors)."""

    FP64 = "fp64"
    FP32 = "fp32"
    TF32 = "tf32"
    FP16 = "fp16"
    BF16 = "bf16"
    FP8 = "fp8"
    INT8 = "int8"
    INT32 = "int32"


class Unit(str, Enum):
    """Execution unit: tensor cores (matrix units) or CUDA cores (SIMT lanes)."""

    TENSOR = "tensor"
    CUDA = "cuda"


class MemLevel(str, Enum):
    L1 = "L1"
    L2 = "L2"
    HBM = "HBM"

    # the hash Enum gives (its name's, here equal to its value), by str's C function instead of a Python method:
    # these are the keys of every op's bytes-per-level map
    __hash__ = str.__hash__


class Bound(str, Enum):
    """What limits an op's predicted time."""

    COMPUTE = "compute"
    L1 = "L1"
    L2 = "L2"
    HBM = "HBM"
    LATENCY = "latency"


class WorkKind(str, Enum):
    """Kind of arithmetic an op formula counts; a precision policy maps it to (Precision, Unit).

    MATMUL: multiply-accumulate work that libraries run on tensor cores when the precision allows it.
    VECTOR: everything else (elementwise, reductions, normalisation): CUDA cores.
    """

    MATMUL = "matmul"
    VECTOR = "vector"


def frozen_map(d: Mapping | None = None) -> Mapping:
    return MappingProxyType(dict(d or {}))


@frozen_dataclass(slots=True)  # (its __init__ is fastinit.fast_init's: slot stores)
class TensorInfo:
    """A typed tensor of the graph. ``shape`` is None when it could not be inferred.

    ``is_initializer``: the value is fixed before inference runs (a graph initializer, a Constant
    node's output, or computed only from those, such as a weight the exporter slices and reorders):
    a weight or buffer, read from memory, never produced by a kernel of the forward pass.
    """

    name: str
    dtype: str  # numpy-style name of the ONNX element type: float32, float16, int64, bool, ...
    shape: tuple[int, ...] | None
    is_initializer: bool = False

    @property
    def numel(self) -> int | None:
        return None if self.shape is None else prod(self.shape)


@frozen_dataclass(slots=True)  # (its __init__ is fastinit.fast_init's: slot stores)
class Node:
    """One ONNX node with its typed input and output tensors (missing optional inputs are None)."""

    name: str
    op_type: str
    domain: str
    inputs: tuple[TensorInfo | None, ...]
    outputs: tuple[TensorInfo, ...]
    attrs: Mapping[str, Any] = field(default_factory=frozen_map)
    # integer values known at load time (initializers, Constant nodes, folded shape arithmetic),
    # keyed by tensor name; only small int tensors are kept (shapes, axes, pads, indices)
    const_inputs: Mapping[str, tuple] = field(default_factory=frozen_map)
    # qualified name of the PyTorch module the node came from ('' when unknown), see graph/scopes.py
    scope: str = ""


@frozen_dataclass(slots=True)  # (its __init__ is fastinit.fast_init's: slot stores)
class OpWork:
    """What an op formula returns: precision-free work counts of one node.

    ``flops`` by WorkKind; compulsory bytes are every input read once and every output written once
    (the loader's element sizes under the precision policy). ``kernels`` is how many kernels the
    reference runtime launches for the node (0 for free views such as Reshape).
    """

    flops: Mapping[WorkKind, float]
    bytes_read: float
    bytes_written: float
    kernels: int
    # bytes of operands that are weights/parameters (read once per kernel), a subset of bytes_read
    weight_bytes: float = 0.0
    notes: tuple[str, ...] = ()
    # bytes read per input tensor name (filled by OpContext.work), for the L2-residency model
    input_bytes: Mapping[str, float] = field(default_factory=frozen_map)
    # (batch, M, N, K) of the GEMM a matmul/conv kernel runs (implicit GEMM for convolution), if any,
    # and the bytes of its A and B operands among bytes_read (the tiling model re-reads those)
    gemm: tuple[int, int, int, int] | None = None
    gemm_operand_bytes: float = 0.0
    # rows of a kernel that gives each row a thread block of its own (PyTorch's layer norm): each row pays a
    # fixed cost the calibration fits (``row_s`` per SM), whatever its length
    rows: int = 0
    # the kernels run concurrently with those of the node's producer (cuDNN's stacked RNN layers overlap
    # their time steps across streams): the calibration hides part of their fixed costs
    overlaps_producer: bool = False
    # the op type of the one kernel the runtime runs for the node and the nodes absorbed into it (graph/runtime.py:
    # ``Attention`` for fused attention, ``RMSNormalization`` for a decomposed rms_norm); "" where the node's own
    runtime_kernel: str = ""
    # (thread blocks, bytes each walks) of a kernel that gives each channel (cuDNN's batch-norm training kernels) or
    # each (image, channel) plane (its fp16 inference kernel) a thread block walking all its elements: ceil(blocks /
    # SMs) waves, each costing the class's block_s plus row_s per byte walked
    channel_walk: tuple[int, int] | None = None
    # (batch x heads, Sq, Dv, Skv) of a fused (flash) attention kernel: thread blocks own Sq tiles of one head and loop
    # over Skv in tiles (predictor/timing/features.attention_wave); None for every other kernel
    attention_tiles: tuple[int, int, int, int] | None = None
    # the fused attention kernel applies a causal mask: flash kernels skip the key tiles above the diagonal
    attention_causal: bool = False
    # (iterations, threads) of a kernel whose threads each run a loop of that many dependent iterations (PyTorch's
    # NCHW interpolation kernels: a thread per output pixel, looping over batch x channels), or (iterations, threads,
    # threads one SM holds at once) where the kernel's blocks say so (PyTorch's batch-norm transform kernel), or
    # (iterations, threads, threads per SM, bytes the loop reads) (reductions, group norm's row moments: an iteration
    # waits on HBM when those bytes exceed the L2's share, timing/features.loop_steps); None for every other
    thread_loop: tuple[int, ...] | None = None


@frozen_dataclass(slots=True)  # (its __init__ is fastinit.fast_init's: slot stores)
class FlopCount:
    """FLOPs of one (precision, unit)."""

    precision: Precision
    unit: Unit
    flops: float


class _TotalFlopsSlot:
    """The slot OpCost keeps its FLOPs total in (not a field: equality, repr and ``dataclasses.replace`` see the
    fields only)."""

    __slots__ = ("_total_flops",)


_set_total_flops = _TotalFlopsSlot._total_flops.__set__


@frozen_dataclass(slots=True)  # (its __init__ is fastinit.fast_init's: slot stores)
class OpCost(_TotalFlopsSlot):
    """Costed node: FLOPs by (precision, unit) and bytes moved at each memory level."""

    name: str
    op_type: str
    flops: tuple[FlopCount, ...]
    bytes: Mapping[MemLevel, float]
    kernels: int
    work: OpWork

    @property
    def total_flops(self) -> float:
        """The sum of ``flops``, computed on first access (or given by :func:`set_total_flops`)."""
        try:
            return self._total_flops
        except AttributeError:
            v = float(sum([f.flops for f in self.flops]))
            _set_total_flops(self, v)
            return v


# set_total_flops(cost, total): give an OpCost its FLOPs total, known to the caller (equal to
# ``float(sum(f.flops for f in cost.flops))``); the slot's own store, no Python frame
set_total_flops = _set_total_flops


@frozen_dataclass(slots=True)  # (its __init__ is fastinit.fast_init's: slot stores)
class OpPrediction:
    """Predicted time of one node and what bounds it.

    ``level_time_s`` holds the roofline time of each limit (``compute``, ``L1``, ``L2``, ``HBM``,
    ``latency``) before efficiency; ``efficiency`` the fraction of the bounding ceiling reached.
    """

    cost: OpCost
    time_s: float
    bound: Bound
    level_time_s: Mapping[str, float]
    efficiency: float = 1.0
    extra_kernels: tuple[str, ...] = ()
    extra_time_s: float = 0.0


@frozen_dataclass
class NetworkPrediction:
    """A network's prediction: its ops, what was not costed, and how it was made."""

    model: str
    gpu: str
    precision: str  # the precision policy's name (fp32, tf32, fp16, ...)
    batch: int | None
    ops: tuple[OpPrediction, ...]
    unsupported: Mapping[str, int]
    calibration: str
    eager_time_s: float | None = None
    optimizations: tuple[str, ...] = ()  # graph optimisation passes applied (predictor/optimize), in order
    # node name -> predictor.opinfo.OpInfo (output shape, parameters) for the per-op table; empty when not known
    op_info: Mapping[str, Any] = field(default_factory=frozen_map)
    notes: tuple[str, ...] = ()  # what the loader or costing changed or assumed (opset upgrade, branch taken, ...)

    # sums over the ops, computed once (the dataclass is frozen: ``ops`` never changes)
    @cached_property
    def total_time_s(self) -> float:
        return self._sums[0]

    @cached_property
    def total_flops(self) -> float:
        return self._sums[1]

    def total_bytes(self, level: MemLevel) -> float:
        v = self._sums[3].get(level)
        return v if v is not None else float(sum([o.cost.bytes.get(level, 0.0) for o in self.ops]))

    @cached_property
    def kernels(self) -> int:
        return self._sums[2]

    @cached_property
    def _sums(self) -> tuple:
        """(time, FLOPs, kernels, {level: bytes}) in one pass over the ops, each added up in the ops' order (as
        ``sum`` would)."""
        t = f = l1 = l2 = hbm = 0.0
        k = 0
        L1, L2, HBM = MemLevel.L1, MemLevel.L2, MemLevel.HBM
        for o in self.ops:
            c = o.cost
            t += o.time_s
            try:
                f += c._total_flops  # (an OpCost's total in its slot: no call of the property)
            except AttributeError:
                f += c.total_flops
            k += c.kernels
            b = c.bytes
            l1 += b.get(L1, 0.0)
            l2 += b.get(L2, 0.0)
            hbm += b.get(HBM, 0.0)
        return float(t), float(f), int(k), {L1: float(l1), L2: float(l2), HBM: float(hbm)}

    def bound_mix(self) -> dict[str, float]:
        """Share of total time per bound."""
        total = self.total_time_s or 1.0
        mix: dict[str, float] = {}
        for o in self.ops:
            b = o.bound._value_  # .value, without the enum descriptor
            mix[b] = mix.get(b, 0.0) + o.time_s / total
        return mix


class PredictorError(Exception):
    """A user-facing error: printed as one line, exit code 2."""


def with_attrs(node: Node, extra: Mapping) -> Node:
    """``node`` with the attributes ``extra`` added."""
    return fast_replace(node, attrs=frozen_map({**node.attrs, **extra}))
