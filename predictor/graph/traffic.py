"""Memory-traffic model: bytes moved at L1/shared (l1tex), L2 (lts) and HBM (dram) per node.

The unit of account is the request a level serves, as Nsight Compute counts it: ``l1tex__t_bytes``
(LSU global/local/texture requests at the L1TEX tag stage), ``lts__t_bytes`` (requests at the L2 slices)
and ``dram__bytes_read + dram__bytes_write``. Every rule below was checked against the H200 samples in
``calibration/data/h200/ncu`` (``python3 -m calibration.ncu.report`` writes the comparison; per network
L2 is within 22% and HBM within 19% of ncu in the ``replay`` regime).

Starting point: compulsory bytes (every input read once, every output written once: OpWork's
``bytes_read``/``bytes_written``). On top of that:

* **GEMM / implicit-GEMM tiling** (nodes with ``OpWork.gemm`` = (batch, M, N, K)): a kernel computes
  ``tile_m x tile_n`` output tiles; each tile streams a K-strip of A and of B, so A is fetched
  ceil(N/tile_n) times and B ceil(M/tile_m) times, C written once. Convolution: M = images x output
  pixels, N = output channels, K = Cin/groups x kernel window. At L2 the A operand is the input tensor X
  (overlapping windows are served from shared memory/L1); at L1 it is the im2col expansion M x K that
  LSU-path kernels gather (fp32 ``sm80_xmma_fprop`` kernels: L1 = this formula to 0-10% when the tile is
  the kernel's own).
  Tile per execution path, from the kernels cuBLAS/cuDNN picked on the H200 (their names carry it):
  ``tensor_tile`` 128x128 (Hopper wgmma kernels: ``nvjet_sm90`` 64x8 ... 448x64, ``sm90_xmma``),
  ``cuda_tile`` 128x64 (fp32 CUDA-core FFMA kernels: ``sm80_xmma_*_ffma`` 32x32 ... 256x64, 128x64 the
  most common). **Wave filling**: libraries shrink the tile until the grid covers the SMs once (BERT's
  1024 x 768 x 768 linear layers ran as 96-128 CTAs of 96x64/128x64 tiles, an LSTM step 16 x 2048 x 512
  as 64-512 CTAs of 8-wide tiles): the larger tile side is halved while batch x tiles < ``sm_count``,
  down to ``min_tile``; a side never exceeds the (power-of-two rounded) problem side. Ignores: split-K,
  stream-K, which tile the library really picks (per kernel up to 2x off either way, per network the
  errors average out), epilogue fusion beyond a bias.
* **TMA path** (Hopper/Blackwell tensor-core kernels): operands go L2 -> shared memory by TMA, never
  through ``l1tex__t_bytes`` (seen: 0.0-0.2 MB of l1tex for a whole nvjet GEMM), so L1 holds only the
  node's non-GEMM passes (a separate bias kernel, operand copies). cuBLAS' sm90 kernels run 2-CTA
  clusters with TMA multicast: an operand tile is fetched once for both CTAs. Measured nvjet L2 requests
  are 0.50-0.64 of the tiled estimate with the kernel's own tile, so both operand streams are divided by
  ``tma_multicast`` = 2. The fp32 CUDA-core path (and pre-Hopper tensor cores) loads through L1: L1 =
  tiled requests with im2col A, L2 = tiled requests with X as A.
* **L2 partitions** (A100/H100/H200): the L2 is two partitions joined by a fabric; a line homed in the
  far partition is counted at both (``lts__t`` includes ``srcunit_ltcfabric`` sectors), so every
  *distinct* byte a kernel touches adds ``l2_far_fraction`` x its size once (re-reads hit the near copy).
  Measured on streaming kernels (ReLU, Add, batch-norm: L1 = compulsory, L2 = 1.45-1.50 x compulsory):
  0.47; 0.5 for addresses hashed evenly over two partitions. 0 on single-partition L2s.
* **Fused matrix kernels** without ``OpWork.gemm`` (one kernel with MATMUL work, e.g. fused attention
  from ``graph/runtime.py``): on the TMA path no l1tex bytes (cuDNN's sm90 flash kernel: 6 KB), L2 =
  compulsory (the score matrix stays on chip).
* **Recurrent layers** (LSTM/GRU/RNN, no ``OpWork.gemm``): the input GEMM and the per-step GEMMs
  (batch rows only, so very thin tiles: the hidden state is re-read per tile) are tiled as above; their
  re-reads are added to the compulsory bytes, which already count R once per step.
* **L2 residency / HBM**, two regimes (``residency``):

  - ``"stream"`` (default; back-to-back execution, what a real forward pass does): an input produced by
    an earlier kernel is read from L2, not HBM, while the bytes touched since it was written stay under
    ``resident_fraction`` of the L2 (0.5: lines read by SMs on both sides are held in both partitions,
    so the distinct-data capacity is about half the nominal size). Weights (initializers) and graph
    inputs come from HBM on first use. Outputs are written back to HBM in full (write-back L2, evicted
    later). All or nothing per tensor; ignores set conflicts, compression, prefetch. A decode step's in-place
    KV-cache append (graph/context.KV_APPEND) writes one token: the cache it returns is not counted as resident.
  - ``"replay"`` (how Nsight Compute measures with kernel replay and ``--cache-control none``): ncu saves
    the memory a kernel can reach before the first pass and restores what it writes before every other
    pass, so a kernel starts with only its *own output buffers* in L2. Measured on the H200: a kernel
    reads its inputs from HBM even when the previous kernel just wrote them (ResNet-50: batch-norm after
    conv, conv after ReLU), in-place ops read nothing (ReLU after batch-norm: 0.01 MB of 12.85), and HBM
    writes appear only when the kernel's own footprint overflows the L2 (fp32 batch-norm on 2 x 25.7 MB:
    24.6 MB written; fp16 on 2 x 12.9 MB: 1-2 MB). So: HBM read = every input except one overwritten in
    place; HBM write = the part of the kernel's footprint beyond ``resident_fraction`` x L2 (per kernel),
    counted again as a re-read of the in-place input it evicted. In place: an elementwise kernel whose
    first input has the output's shape and type, was written by an earlier kernel and has no later
    reader (torchvision's ReLU(inplace=True) and ``out += identity``; ONNX Runtime's allocation planner
    reuses a dying input the same way). Use it to compare with, or fit to, ncu samples: their kernel
    times were measured in the same state.

Not modelled (``calibration.ncu.report`` lists them): layout-transform and copy kernels the runtime adds
(not graph nodes), cuDNN's choice of sm80 cp.async kernels (LSU path, large l1tex) for many fp16
convolutions, pooling windows re-read through L1 (~2.5x), layer-norm row re-reads in L1 (~5x), data-
dependent L2 compression. Graph outputs read by a later elementwise node could be taken as in place.
"""
from __future__ import annotations

import math
from math import prod
from typing import Mapping, Sequence

from ..precision import FLOAT_DTYPES, dtype_bytes
from ..frozen import frozen_dataclass
from ..types import MemLevel, Node, OpWork, TensorInfo, Unit, WorkKind, frozen_map
from .context import KV_APPEND
from .opclass import op_class
from .registry import op_traits

RESIDENCY_MODES = ("stream", "replay")



@frozen_dataclass
class TrafficParams:
    """Parameters of the traffic model (see the module docstring for where each comes from)."""

    tensor_tile: tuple[int, int] = (128, 128)   # (tile_m, tile_n) of tensor-core GEMM/conv kernels
    cuda_tile: tuple[int, int] = (128, 64)      # (tile_m, tile_n) of CUDA-core (SIMT FFMA) kernels
    min_tile: int = 16                          # wave filling never shrinks a tile side below this
    sm_count: int = 132                         # wave filling: grids shrink tiles until they cover the SMs (the
    #                                             profile's count: traffic_for; 132 only for hand-built params)
    tma_multicast: int = 2                      # CTAs per cluster sharing one operand's TMA loads
    l2_far_fraction: float = 0.47               # extra lts__t bytes per distinct byte (two L2 partitions)
    resident_fraction: float = 0.5              # share of the L2 that holds distinct data
    residency: str = "stream"                   # "stream" (back-to-back) or "replay" (ncu kernel replay)
    tma_tensor_path: bool = False               # Hopper and later: wgmma operands via TMA, no l1tex traffic

    def tile(self, unit: Unit) -> tuple[int, int]:
        return self.tensor_tile if unit is Unit.TENSOR else self.cuda_tile


def params_for(arch: str, residency: str = "stream", sm_count: int | None = None) -> TrafficParams:
    """Default parameters for an architecture ('volta', 'ampere', 'hopper', ...) and a GPU's SM count
    (from its profile: ``traffic_for``; without one, TrafficParams' default).

    Hopper and Blackwell: TMA path for tensor-core GEMMs and a two-partition L2 (fabric bytes); Ampere's
    A100 also has two L2 partitions; earlier parts one.
    """
    if residency not in RESIDENCY_MODES:
        raise ValueError(f"residency must be one of {RESIDENCY_MODES}, not {residency!r}")
    a = arch.lower()
    return TrafficParams(
        tma_tensor_path=a in ("hopper", "blackwell"),
        l2_far_fraction=0.47 if a in ("ampere", "hopper", "blackwell") else 0.0,
        sm_count=sm_count or TrafficParams.sm_count,
        residency=residency,
    )


def traffic_for(profile, residency: str = "stream") -> "HierarchicalTraffic":
    """The traffic model of a GPU: its L2 size, architecture and SM count, all from its MachineProfile."""
    return HierarchicalTraffic(profile.l2_bytes, profile.arch,
                               params_for(profile.arch, residency, profile.sm_count))


# ------------------------------------------------------------------------------------------ tiling
# a K slice below this many elements is not worth a split (chosen on the training networks; timing/features.py splits
# K for the same GEMMs when it counts the SMs they keep busy)
SPLIT_K_MIN = 512


def k_slices(tiles: int, sm_count: int, k: int) -> int:
    """Slices of K a library splits a GEMM of ``tiles`` output tiles into (cuBLAS split-K, stream-K): up to
    ceil(SMs / tiles), each of at least SPLIT_K_MIN; 1 when the tiles fill the SMs or ``k`` is 0 (no split)."""
    if tiles <= 0 or tiles >= sm_count or k <= 0:
        return 1
    return max(1, min(math.ceil(sm_count / tiles), k // SPLIT_K_MIN))


def choose_tile(batch: int, m: int, n: int, tile: tuple[int, int], sm_count: int,
                min_tile: int = 16, k: int = 0) -> tuple[int, int]:
    """Wave filling: halve the larger tile side while batch x ceil(M/tm) x ceil(N/tn) < sm_count, unless slices of a
    long K (``k``: 0 where the kernel keeps its K loop in one block, as cuDNN's implicit-GEMM convolutions do) fill
    the SMs instead (:func:`k_slices`): a 512 x 1024 x 16384 product keeps its 128 x 128 tiles, 32 of them in 5
    slices, where filling would shrink them to 32 x 64 and re-read A 16 times.

    A side is never halved below ``min_tile``, nor kept above the (rounded-up) problem size it covers:
    a 16-row GEMM uses a 16-row tile. Returns (tile_m, tile_n).
    """
    tm, tn = tile
    tm = min(tm, max(min_tile, _pow2_ceil(m)))
    tn = min(tn, max(min_tile, _pow2_ceil(n)))
    while True:
        tiles = batch * math.ceil(m / tm) * math.ceil(n / tn)
        if tiles * k_slices(tiles, sm_count, k) >= sm_count:
            break
        if tm >= tn and tm > min_tile:
            tm //= 2
        elif tn > min_tile:
            tn //= 2
        elif tm > min_tile:
            tm //= 2
        else:
            break
    return tm, tn


def _pow2_ceil(x: int) -> int:
    return 1 << max(0, math.ceil(math.log2(max(x, 1))))


def padded_gemm_flops(gemm: tuple[int, int, int, int], tile: tuple[int, int] = (128, 64)) -> float:
    """FLOPs a tiled GEMM kernel executes: 2 x batch x ceil(M/tm)tm x ceil(N/tn)tn x K.

    Tile quantization is real work on tensor cores and CUDA cores alike (partial tiles are computed in
    full). With (128, 64) it matches the H200 samples within 1-4% per network (ResNet-50 batch 8:
    M = 8 x 7 x 7 = 392 runs as 512 rows). A side shorter than its tile is rounded to a power of two
    instead (an 8-row classifier GEMM runs as a GEMV, unpadded). Not applied to OpWork here: op
    formulas own FLOPs (see calibration/ncu/report.py for the comparison).
    """
    b, m, n, k = gemm
    tm, tn = min(tile[0], _pow2_ceil(m)), min(tile[1], _pow2_ceil(n))  # thin GEMMs (GEMV-like) do not pad
    return 2.0 * b * math.ceil(m / tm) * tm * math.ceil(n / tn) * tn * k


@frozen_dataclass
class GemmTraffic:
    """Requests of one GEMM/conv kernel: at L1 (LSU path) and L2 (SM side, before fabric bytes)."""

    l1: float
    l2: float
    tile: tuple[int, int]


_NO_BYTES = frozen_map({lv: 0.0 for lv in MemLevel})  # a view's levels (shared: read-only)


def _gemm_key(node: Node, work: OpWork, elem_bytes: int) -> tuple:
    """What :func:`gemm_traffic` reads of ``node`` and ``work`` (its result is a function of this)."""
    first = node.inputs[0] if node.inputs else None
    y = node.outputs[0] if node.outputs else None
    return (work.gemm, work.input_bytes.get(first.name, 0.0) if first is not None else 0.0, work.gemm_operand_bytes,
            node.op_type, (y.shape, y.dtype) if y is not None else None, elem_bytes)


def gemm_traffic(node: Node, work: OpWork, unit: Unit, elem_bytes: int, p: TrafficParams) -> GemmTraffic:
    """Tiled operand requests of the GEMM kernel of ``node`` (``work.gemm`` must be set): A is the
    node's first input (activations; X of a convolution), B the rest of ``gemm_operand_bytes``."""
    batch, m, n, k = work.gemm
    first = node.inputs[0] if node.inputs else None
    a = work.input_bytes.get(first.name, 0.0) if first is not None else 0.0
    a = min(a, work.gemm_operand_bytes)
    b = max(work.gemm_operand_bytes - a, 0.0)
    y = _out_bytes(node, elem_bytes)
    implicit_gemm = op_class(node.op_type) == "conv"  # a convolution's kernel gathers A (im2col) as it goes
    a_l1 = float(batch * m * k * elem_bytes) if implicit_gemm else a
    return tiled_traffic((batch, m, n, k), a, b, y, unit, p, a_l1=a_l1, split_k=not implicit_gemm)


def tiled_traffic(gemm: tuple[int, int, int, int], a: float, b: float, y: float, unit: Unit,
                  p: TrafficParams, a_l1: float | None = None, split_k: bool = False) -> GemmTraffic:
    """Requests of one tiled GEMM kernel with operand bytes ``a`` (M x K, all batches), ``b`` (K x N)
    and output ``y``: A fetched ceil(N/tn) times, B ceil(M/tm) times (wave-filled tile), C written once.
    ``a_l1``: bytes of A as the LSU path gathers it (im2col for convolution), default ``a``. ``split_k``: the
    library may split K over blocks rather than shrink the tiles (:func:`choose_tile`).
    TMA path: no L1 requests, both operand streams divided by ``tma_multicast``. L2 fabric bytes are
    not included (the caller adds them on distinct bytes)."""
    batch, m, n, k = gemm
    tm, tn = choose_tile(batch, m, n, p.tile(unit), p.sm_count, p.min_tile, k if split_k else 0)
    n_m, n_n = math.ceil(m / tm), math.ceil(n / tn)
    if unit is Unit.TENSOR and p.tma_tensor_path:
        mc = max(p.tma_multicast, 1)
        return GemmTraffic(l1=0.0, l2=(a * n_n + b * n_m) / mc + y, tile=(tm, tn))
    a_l1 = a if a_l1 is None else a_l1
    return GemmTraffic(l1=a_l1 * n_n + b * n_m + y, l2=a * n_n + b * n_m + y, tile=(tm, tn))


def rnn_traffic(node: Node, work: OpWork, unit: Unit, elem_bytes: int, p: TrafficParams) -> GemmTraffic | None:
    """Operand re-reads of a recurrent layer (LSTM/GRU/RNN) beyond its compulsory bytes, or None.

    The formula counts every input once and R once per step; the kernels are, per direction, one input
    GEMM (S*B x G*H x I) and one GEMM per step (B x G*H x H: the batch is the M side, so a library
    spreads G*H over many thin tiles and re-reads the hidden state per tile: cuBLAS' split-N kernel
    ``gemmSN`` ran 512 CTAs for a 16 x 2048 x 512 fp32 step on the H200, nvjet 64x8 tiles in fp16).
    Returned: the requests beyond reading each GEMM operand once (L1 0 on the TMA path).
    """
    if not op_traits(node.op_type).recurrent or len(node.inputs) < 3:
        return None
    x, w, r = node.inputs[0], node.inputs[1], node.inputs[2]
    if x is None or w is None or r is None or x.shape is None or w.shape is None or r.shape is None:
        return None
    if len(x.shape) != 3 or len(r.shape) != 3:  # malformed node: its compulsory bytes stand alone
        return None
    layout = int(node.attrs.get("layout", 0) or 0)
    s, bsz, i_size = (x.shape[0], x.shape[1], x.shape[2]) if layout == 0 else (x.shape[1], x.shape[0], x.shape[2])
    d, gh, h = r.shape[0], r.shape[1], r.shape[2]
    e = _elem(x, elem_bytes)
    x_b, w_b, r_b, h_b, g_b = s * bsz * i_size * e, gh * i_size * e, gh * h * e, bsz * h * e, s * bsz * gh * e
    inp = tiled_traffic((1, s * bsz, gh, i_size), x_b, w_b, g_b, unit, p)
    step = tiled_traffic((1, bsz, gh, h), h_b, r_b, bsz * gh * e, unit, p)
    once_inp = x_b + w_b + g_b
    once_step = h_b + r_b + bsz * gh * e
    l1 = d * (max(inp.l1 - once_inp, 0.0) + s * max(step.l1 - once_step, 0.0)) if inp.l1 else 0.0
    l2 = d * (max(inp.l2 - once_inp, 0.0) + s * max(step.l2 - once_step, 0.0))
    return GemmTraffic(l1=l1, l2=l2, tile=step.tile)


def _rnn_gemm_operand_bytes(node: Node, work: OpWork, elem_bytes: int) -> float:
    """Bytes the GEMMs of a recurrent layer read as operands: weights (W once, R per step) + input X."""
    x = node.inputs[0]
    xb = float(prod(x.shape or ()) * _elem(x, elem_bytes)) if x is not None and x.shape is not None else 0.0
    return work.weight_bytes + xb




def _out_bytes(node: Node, elem_bytes: int) -> float:
    t = node.outputs[0] if node.outputs else None
    if t is None or t.shape is None:
        return 0.0
    return float(prod(t.shape or ()) * _elem(t, elem_bytes))


def _elem(t: TensorInfo, elem_bytes: int) -> int:
    """Bytes per element of ``t``: the policy's ``elem_bytes`` for a float, else its dtype's own."""
    return elem_bytes if t.dtype in FLOAT_DTYPES else dtype_bytes(t.dtype)


# ------------------------------------------------------------------------------------------ model
class HierarchicalTraffic:
    """Assigns bytes per level to a sequence of (node, work) in execution order."""

    def __init__(self, l2_bytes: float, arch: str, params: TrafficParams | None = None):
        self.l2_bytes = l2_bytes
        self.params = params or params_for(arch)
        if self.params.residency not in RESIDENCY_MODES:
            raise ValueError(f"residency must be one of {RESIDENCY_MODES}, not {self.params.residency!r}")

    def assign(self, seq: Sequence[tuple[Node, OpWork]], matmul_unit: Unit,
               elem_bytes: int) -> list[Mapping[MemLevel, float]]:
        p = self.params
        window = p.resident_fraction * self.l2_bytes
        life = _last_readers(seq) if p.residency == "replay" else None
        gemms: dict[tuple, tuple] = {}  # repeated GEMMs (a network's layers): tiled once, (GemmTraffic, output bytes)
        shared: dict[tuple, Mapping] = {}
        produced_at: dict[str, float] = {}  # tensor name -> cumulative bytes touched when it was written
        recurrent: dict[str, bool] = {}  # op type -> its registry trait
        touched = 0.0
        out = []
        for i, (node, work) in enumerate(seq):
            if work.kernels == 0:
                # views alias their data input, and a node absorbed into a fused kernel (a bias Add in a GEMM's
                # epilogue: the TorchScript exporter writes Add(bias, y)) is written with its data input: keep the
                # residency of its largest input an earlier kernel wrote (not a bias's, not a shape's)
                at, most = None, -1.0
                for t in node.inputs:
                    if t is not None and t.name in produced_at:
                        n = t.numel if t.numel is not None else 0
                        if n > most:
                            at, most = produced_at[t.name], n
                if at is not None:
                    for t in node.outputs:
                        if t.name:
                            produced_at[t.name] = at
                out.append(_NO_BYTES)
                continue
            compulsory = work.bytes_read + work.bytes_written
            l1 = l2_requests = compulsory
            if work.gemm is not None:
                gk = _gemm_key(node, work, elem_bytes)
                hit = gemms.get(gk)
                if hit is None:  # the output's bytes too are a function of the key
                    hit = gemms[gk] = (gemm_traffic(node, work, matmul_unit, elem_bytes, p),
                                       _out_bytes(node, elem_bytes))
                g = hit[0]
                # bytes of the node's other passes (bias kernel, operand copies): streamed once
                other = max(compulsory - work.gemm_operand_bytes - hit[1], 0.0)
                l2_requests = g.l2 + other
                l1 = g.l1 + other
            else:
                rec = recurrent.get(node.op_type)
                if rec is None:
                    rec = recurrent[node.op_type] = op_traits(node.op_type).recurrent
                if rec:
                    extra = rnn_traffic(node, work, matmul_unit, elem_bytes, p)
                    if extra is not None:
                        l2_requests += extra.l2
                        # TMA path: the GEMMs' operand reads (weights, input, hidden state) skip l1tex
                        l1 = (max(compulsory - _rnn_gemm_operand_bytes(node, work, elem_bytes), 0.0)
                              if matmul_unit is Unit.TENSOR and p.tma_tensor_path else l1 + extra.l1)
                elif (work.kernels == 1 and work.flops.get(WorkKind.MATMUL) and matmul_unit is Unit.TENSOR
                      and p.tma_tensor_path):
                    l1 = 0.0  # a fused matrix kernel (attention): operands by TMA, on-chip intermediates
            l2 = l2_requests + p.l2_far_fraction * compulsory
            if life is not None:
                hbm = self._replay_hbm(node, work, i, life, window)
            elif work.bytes_read > 0:
                # streaming residency: inputs still resident in L2 are not re-read from HBM; outputs are written back
                # in full. An input the node reads several times (an RNN's recurrent weights once per time step) comes
                # from HBM once when it fits in the L2 window; the repeats hit L2. Ignores: eviction by the node's own
                # streaming traffic. (Inline: one call less per node.)
                resident = 0.0
                ib = work.input_bytes
                for t in node.inputs:
                    if t is None or t.shape is None:
                        continue
                    read = ib.get(t.name, 0.0)
                    at = produced_at.get(t.name)
                    if at is not None and touched - at <= window:
                        resident += read
                        continue
                    size = float(elem_bytes)
                    for d in t.shape:
                        size *= d
                    if read > size > 0 and size <= window:
                        resident += read - size
                hbm = max(work.bytes_read - resident, 0.0) + work.bytes_written
            else:
                hbm = work.bytes_read + work.bytes_written
            touched += compulsory
            if KV_APPEND not in node.attrs:  # an in-place cache append writes one token: the cache is not in L2
                for t in node.outputs:
                    if t.name:
                        produced_at[t.name] = touched
            lk = (l1, l2, hbm)
            levels = shared.get(lk)
            if levels is None:  # nodes with equal bytes (a network's repeated layers) share one read-only map
                levels = shared[lk] = frozen_map({MemLevel.L1: l1, MemLevel.L2: l2, MemLevel.HBM: hbm})
            out.append(levels)
        return out

    @staticmethod
    def _replay_hbm(node: Node, work: OpWork, index: int, life: "_Lifetimes", window: float) -> float:
        """Cold L2 except the kernel's own output buffers (see the module docstring)."""
        inplace = _inplace_bytes(node, work, index, life)
        k = max(work.kernels, 1)
        footprint = work.bytes_read + work.bytes_written - inplace
        spill = max(footprint - k * window, 0.0)
        hbm_read = work.bytes_read - inplace + min(spill, inplace)
        hbm_write = min(spill, work.bytes_written)
        return hbm_read + hbm_write


@frozen_dataclass
class _Lifetimes:
    """Which buffers die where: views (no kernel) alias their first input's buffer."""

    alias: Mapping[str, str]       # tensor name -> name of the buffer it is a view of
    last_read: Mapping[str, int]   # buffer name -> index in seq of its last reader
    produced: frozenset            # buffers written by a kernel of seq


def _last_readers(seq: Sequence[tuple[Node, OpWork]]) -> _Lifetimes:
    alias: dict[str, str] = {}
    last: dict[str, int] = {}
    produced: set[str] = set()
    for i, (node, work) in enumerate(seq):
        for t in node.inputs:
            if t is not None and t.name:
                last[alias.get(t.name, t.name)] = i
        if work.kernels == 0:
            if node.inputs and node.inputs[0] is not None:
                src = alias.get(node.inputs[0].name, node.inputs[0].name)
                for t in node.outputs:
                    if t.name:
                        alias[t.name] = src
        else:
            produced.update(t.name for t in node.outputs if t.name)
    return _Lifetimes(alias, last, frozenset(produced))


def _inplace_bytes(node: Node, work: OpWork, index: int, life: _Lifetimes) -> float:
    """Bytes of the input an elementwise kernel overwrites in place (0 when it cannot): its first
    input has the output's shape and type, was written by an earlier kernel and has no later reader."""
    if work.kernels != 1 or op_class(node.op_type) != "elementwise" or not node.inputs:
        return 0.0
    x, y = node.inputs[0], node.outputs[0] if node.outputs else None
    if x is None or y is None or x.shape is None or x.shape != y.shape or x.dtype != y.dtype:
        return 0.0
    buf = life.alias.get(x.name, x.name)
    if buf not in life.produced or life.last_read.get(buf, index) != index:
        return 0.0
    return float(work.input_bytes.get(x.name, 0.0))
