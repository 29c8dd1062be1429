"""A kernel's features for the time model, from its cost and the GPU profile alone.

Ideal times are at 100% of the profile's ceilings: ``compute_s`` already holds the tile padding the kernels execute
and the wave efficiency over the GPU's SMs (:func:`gemm_wave`, :func:`tile_padding` below), so that the model's
``eff_compute`` is what is left. Ignores: data-dependent speed, clocks below the profile's.
"""
from __future__ import annotations

import math

from ..graph.traffic import SPLIT_K_MIN, TrafficParams, k_slices
from ..machine.profile import MachineProfile
from ..frozen import frozen_dataclass
from ..roofline import level_times_s
from ..types import MemLevel, Node, OpCost


@frozen_dataclass
class KernelFeatures:
    """A kernel's ideal times and counts under a profile (see the module text)."""

    kernels: float  # kernels the node launches (its own, not the runtime's hidden ones)
    compute_s: float  # FLOPs x tile padding / (peak x wave efficiency); 0 when no FLOPs
    gemm_k: float  # K of the GEMM the kernel runs, a fused attention's key length (0 when none): each tile pays
    # gemm_k_half steps of its K loop
    hbm_s: float  # HBM bytes at the profile's HBM rates: reads at the read-only ceiling where the profile has one,
    # writes at what makes a copy run at the copy ceiling (MachineProfile.hbm_time_s)
    l2_s: float  # L2 bytes / L2 bandwidth
    l1_s: float  # L1 bytes / L1 bandwidth
    rows_per_sm: float  # rows of a block-per-row kernel per SM (OpWork.rows / SMs); a fused attention kernel's
    # query blocks per SM (:func:`attention_blocks`): each pays its prologue and epilogue
    walk_waves: float  # waves of a block-walk kernel: ceil(blocks / SMs) (OpWork.channel_walk)
    walk_bytes_per_sm: float  # bytes one SM walks in a block-walk kernel: waves x bytes per block
    loop_steps: float = 0.0  # dependent iterations of a thread-loop kernel's threads, by waves (OpWork.thread_loop)


def kernel_features(cost: OpCost, profile: MachineProfile, precision: str, node: Node | None = None) -> KernelFeatures:
    """The features of ``cost``'s kernels (``node`` is where an algorithm choice of the library would enter: none is
    modelled; cuDNN's fp32 FFT convolutions, chosen for some stride-1 large-kernel shapes and not for their
    neighbours, are left as direct ones)."""
    ideal = level_times_s(cost, profile, 0.0)
    w = cost.work
    rows = w.rows
    if w.attention_tiles is not None:
        tile = attention_tile_for(precision)
        shape = attention_wave(w.attention_tiles, profile.sm_count, w.attention_causal, tile)
        rows = rows or attention_blocks(w.attention_tiles, tile)
    else:
        shape = gemm_shape(cost, node, precision, profile.sm_count)
    return KernelFeatures(
        kernels=float(cost.kernels),
        compute_s=ideal["compute"] * shape if ideal["compute"] else 0.0,
        # a thin linear layer's tile steps (its rows) hold its K loop: no K-loop cost beside them
        gemm_k=0.0 if w.rows and cost.op_type == "MatMul" else float(w.gemm[3]) if w.gemm else
        attention_loop(w.attention_tiles),
        hbm_s=profile.hbm_time_s(cost.bytes.get(MemLevel.HBM, 0.0), w.bytes_written),
        l2_s=ideal[MemLevel.L2.value], l1_s=ideal[MemLevel.L1.value],
        rows_per_sm=rows / profile.sm_count,
        walk_waves=float(walk_waves(w.channel_walk, profile.sm_count)),
        walk_bytes_per_sm=float(channel_walk_units(w.channel_walk, profile.sm_count)),
        loop_steps=loop_steps(w.thread_loop, profile.sm_count,
                              TrafficParams.resident_fraction * profile.l2_bytes))


# fp32 without tensor cores: cuBLAS/cuDNN SIMT kernels tile 64x64 or smaller (chosen on the training networks: 64 gave
# training MAPE 9.2%, 128 9.4%, 32 9.5%)
SIMT_TILE = 64


def wave_efficiency(tiles: int, sm_count: int, k: int = 0) -> float:
    """Share of SMs busy over the waves of output tiles. When there are fewer tiles than SMs, libraries
    split K (cuBLAS split-K, stream-K) into up to ceil(SMs / tiles) slices of at least SPLIT_K_MIN."""
    if tiles <= 0:
        return 1.0
    tiles *= k_slices(tiles, sm_count, k)
    waves = math.ceil(tiles / sm_count)
    return tiles / (waves * sm_count)


# output tiles cuBLAS/cuDNN choose among on tensor cores: a problem of few tiles runs smaller ones to fill the SMs.
# Each is taken at the full per-SM throughput (chosen on the training networks: training MAPE 7.3% and per-op median
# 12.5%, against 7.7% / 13.2% with a reuse penalty m*n/(m+n) on smaller tiles and 8.2% / 14.0% with 128x128 only)
TENSOR_TILES = ((128, 128), (128, 64), (64, 128), (64, 64))


_CONV_OPS = frozenset({"Conv", "ConvTranspose", "FusedConv"})
WGRAD_ATTR = "weight_gradient"  # node attribute of a training step's weight-gradient kernels (predictor/train/kernel.py)


def splits_k(cost: OpCost, node: Node | None, precision: str = "") -> bool:
    """Whether the library may split a kernel's K over thread blocks to fill the SMs: cuBLAS GEMMs (and pointwise
    convolutions at tf32/16-bit, which cuDNN hands to cuBLAS-style GEMM kernels) and a training step's
    weight-gradient kernels (K = N x output spatial) do; cuDNN's implicit-GEMM convolutions and data-gradient kernels
    keep the whole K = C x R x S loop in one block (chosen on the training networks: training MAPE 14.8% -> 14.0%, and
    the convolution class's fitted fixed cost per kernel at fp32 fell from 17.7 to 7.0 us, where it had absorbed the
    missing K loop). At fp32 a pointwise convolution is one of those implicit-GEMM kernels too (every fp32 pointwise
    scope of the training networks ran cuDNN's xmma_fprop or implicit_convolve_sgemm kernels: a 49 x 768 x 3072
    projection takes ~106 us on 12 of 132 SMs, not the 18 us a split K would)."""
    if node is None or cost.op_type not in _CONV_OPS or node.attrs.get(WGRAD_ATTR):
        return True
    from ..graph.opclass import hidden_key

    return hidden_key(node, "Conv") == "Conv:pointwise" and precision != "fp32"


def gemm_shape(cost: OpCost, node: Node | None, precision: str, sm_count: int) -> float:
    """Executed over useful FLOPs of a node's GEMM, divided by the share of SMs its tiles keep busy (>= 1): tile
    padding over wave efficiency, K split or not (:func:`splits_k`); a large-kernel grouped convolution's by
    :func:`grouped_large_shape`."""
    if cost.work.gemm is None:
        return grouped_large_shape(node, sm_count) if node is not None and cost.op_type == "Conv" else 1.0
    split = splits_k(cost, node, precision)
    return tile_padding(cost.work.gemm) / gemm_wave(cost.work.gemm, precision, sm_count, split)


def grouped_large_shape(node: Node, sm_count: int) -> float:
    """Executed over useful FLOPs of a large-kernel grouped convolution (class grouped_large: cuDNN's CUDA-core
    implicit_convolve_sgemm kernels), divided by the share of SMs its tiles keep busy: SIMT_TILE-square tiles of the
    per-group implicit GEMM (M = N x output positions, N = Cout/groups), and from graph/opclass.GROUPED_BATCH images
    one kernel per group launched one after another, so each kernel's waves hold one group's tiles (below it, one
    kernel over all groups). 1 for any other node. Ignores: the tile shapes cuDNN really picks (a 32-wide one at fp32
    batch 1), several blocks per SM."""
    from ..graph.opclass import GROUPED_BATCH, hidden_key

    if hidden_key(node, "Conv") != "Conv:grouped_large":
        return 1.0
    x, w, y = node.inputs[0].shape, node.inputs[1].shape, node.outputs[0].shape
    if not x or not w or not y or any(not isinstance(d, int) or d <= 0 for d in (*x, *w, *y)):
        return 1.0
    from ..graph.ops.conv import conv_gemm

    groups, m, n, _k = conv_gemm(x, w, y, int(node.attrs.get("group", 1)))
    tm, tn = math.ceil(m / SIMT_TILE), math.ceil(n / SIMT_TILE)
    padding = tm * tn * SIMT_TILE * SIMT_TILE / (m * n)
    return padding / wave_efficiency((1 if x[0] >= GROUPED_BATCH else groups) * tm * tn, sm_count)


def gemm_wave(gemm: tuple[int, int, int, int] | None, precision: str, sm_count: int, split_k: bool = True) -> float:
    """Share of the SMs a GEMM keeps busy: the best wave efficiency over the output tiles a library may pick
    (TENSOR_TILES on tensor cores, SIMT_TILE squares for fp32), with K split over blocks when ``split_k``.
    Ignores: a smaller tile's lower operand reuse."""
    if gemm is None:
        return 1.0
    b, m, n, k = gemm
    tiles = ((SIMT_TILE, SIMT_TILE),) if precision == "fp32" else TENSOR_TILES
    return max(wave_efficiency(b * math.ceil(m / tm) * math.ceil(n / tn), sm_count, k if split_k else 0)
               for tm, tn in tiles)


# flash attention's tiles on Hopper: a thread block owns ATTENTION_TILE query rows of one head and loops over the keys
# in tiles of as many; shorter sequences run power-of-two tiles (at least 16 rows)
ATTENTION_TILE = 128
ATTENTION_SPLIT_KV_BELOW = 16  # fewer query rows (decoding): the kernel splits the keys over blocks instead
# fp32/tf32: PyTorch's memory-efficient kernel (fmha_cutlassF_f32_aligned_64x64, 3xTF32 on the H100: run18 of
# calibration/data/h100/microbench) owns 64 query rows a block and steps over 64 keys
ATTENTION_TILE_FP32 = 64


def attention_tile_for(precision: str) -> int:
    """The query (and key) tile of the fused attention kernel a precision runs."""
    return ATTENTION_TILE_FP32 if precision in ("fp32", "tf32") else ATTENTION_TILE


def attention_wave(tiles: tuple[int, int, int, int], sm_count: int, causal: bool = False,
                   tile: int = ATTENTION_TILE) -> float:
    """Executed over useful work of a fused attention kernel, divided by the share of SMs its blocks keep busy:
    B x H x ceil(Sq / tile) blocks (one wave per SM count), query and key lengths padded to whole tiles; with
    ``causal`` only the key tiles at or below the diagonal (bottom-right aligned, as flash kernels do) run, counted
    against the full Sq x Skv score matrix the FLOPs count. A causal call with Sq a multiple g of Skv holds the query
    heads of a grouped-query call stacked per key/value head (g x Skv rows, the causal mask repeated g times): each
    group runs its own triangle. Below ATTENTION_SPLIT_KV_BELOW query rows the keys are split over blocks (flash
    decoding): no padding, full waves. Ignores: several blocks per SM, the uneven work of causal blocks, the head
    dimension's own padding, query tiles straddling two stacked groups."""
    bh, sq, _dv, skv = tiles
    if sq < ATTENTION_SPLIT_KV_BELOW or bh <= 0 or sq <= 0 or skv <= 0:
        return 1.0
    tq, tk = _attention_tile(sq, tile), _attention_tile(skv, tile)
    nq, nk = math.ceil(sq / tq), math.ceil(skv / tk)
    if causal:
        groups = sq // skv if sq > skv and sq % skv == 0 else 1
        rows = sq // groups
        run = groups * sum(max(0, min(nk, math.ceil((skv - rows + min((i + 1) * tq, rows)) / tk)))
                           for i in range(math.ceil(rows / tq)))
    else:
        run = nq * nk
    return (run * tq * tk) / (sq * skv) / wave_efficiency(attention_blocks(tiles, tile), sm_count)


def attention_loop(tiles: tuple[int, int, int, int] | None) -> float:
    """Length of a fused attention kernel's inner loop, over the keys (0 when none): each query block steps over the
    key tiles as a GEMM's block steps over K, the same work per step (a 128-row query tile x head dim 64 x two
    GEMMs = a 128 x 128 output tile's MMA), so its prologue and epilogue cost the same ``gemm_k_half`` steps. Split
    keys (flash decoding, below ATTENTION_SPLIT_KV_BELOW query rows): 0, none counted."""
    if tiles is None:
        return 0.0
    _bh, sq, _dv, skv = tiles
    return float(skv) if sq >= ATTENTION_SPLIT_KV_BELOW else 0.0


def attention_blocks(tiles: tuple[int, int, int, int] | None, tile: int = ATTENTION_TILE) -> int:
    """Thread blocks of a fused attention kernel, B x H x ceil(Sq / tile), each owning a query tile of one head: every
    block loads its queries, ramps up the key pipeline and normalises and writes its output once (the kernel's
    per-block cost, the class's ``row_s``, fitted on the sdpa microbenchmarks and the networks' attention calls).
    0 when none, and for split keys (flash decoding, below ATTENTION_SPLIT_KV_BELOW query rows). Ignores: several
    blocks resident per SM (their prologues overlap), causal blocks' uneven loops."""
    if tiles is None:
        return 0
    bh, sq, _dv, _skv = tiles
    if sq < ATTENTION_SPLIT_KV_BELOW or bh <= 0:
        return 0
    return bh * math.ceil(sq / _attention_tile(sq, tile))


def _attention_tile(length: int, tile: int = ATTENTION_TILE) -> int:
    """Tile a flash kernel runs over ``length`` rows: ``tile`` (attention_tile_for), or the power of two (>= 16) above
    a shorter one."""
    return min(tile, max(16, 1 << (length - 1).bit_length()))


def tile_padding(gemm: tuple[int, int, int, int] | None) -> float:
    """Executed over algorithmic FLOPs of a tiled GEMM (partial tiles run in full): >= 1. Ignores: cuDNN's fp32
    implicit-GEMM convolutions have no thin tiles (a squeeze-excitation convolution on a 1x1 map at batch 1 runs
    whole 64-row tiles: 75-80 us for K = 2048 on the H200); padding them so was tried and made the fp32 training
    cases worse (batch 32: 10.5% -> 12.5%)."""
    if gemm is None:
        return 1.0
    from ..graph.traffic import padded_gemm_flops

    b, m, n, k = gemm
    useful = 2.0 * b * m * n * k
    return padded_gemm_flops(gemm) / useful if useful > 0 else 1.0


# threads of a thread-loop kernel one SM runs at the loop's full rate (chosen on the training networks' bilinear
# kernels: 32 x 21 planes of 512 x 512 take 4x the per-plane time of 32 x 256 planes of 64 x 64 on 132 SMs)
LOOP_THREADS_PER_SM = 512


# a thread loop over a tensor the L2 does not hold waits on HBM, not on the L2, in each iteration: its steps count
# this many times (H100 kernel table of h100/timing/blind15: native_group_norm's row moments take 0.24-0.25 us an
# iteration over 4-16 MB maps, 0.37-0.43 us over 32-128 MB maps, where the L2's share for distinct data is 25 MiB)
LOOP_MISS_LATENCY = 1.7


def loop_steps(loop: tuple[int, ...] | None, sm_count: int, window_bytes: float = math.inf) -> float:
    """Dependent iterations a thread-loop kernel (OpWork.thread_loop = (iterations, threads[, threads per SM[, bytes
    looped over]])) runs end to end: the loop's length, times the threads over what the SMs run at full rate (at
    least 1; per SM the kernel's own figure, else LOOP_THREADS_PER_SM), times LOOP_MISS_LATENCY when the bytes it
    loops over exceed ``window_bytes`` (the L2's share for distinct data: traffic.TrafficParams.resident_fraction).
    Ignores: the iteration's own length (a bilinear tap or a bicubic one: the class's row_s), a tensor partly held."""
    if not loop:
        return 0.0
    iters, threads = loop[0], loop[1]
    per_sm = loop[2] if len(loop) > 2 else LOOP_THREADS_PER_SM
    steps = float(iters) * max(1.0, threads / (sm_count * per_sm))
    return steps * LOOP_MISS_LATENCY if len(loop) > 3 and loop[3] > window_bytes else steps


def walk_waves(walk: tuple[int, int] | None, sm_count: int) -> int:
    """Waves of a block-walk kernel (OpWork.channel_walk): ceil(blocks / SMs). Ignores: several blocks per SM."""
    return math.ceil(walk[0] / sm_count) if walk else 0


def channel_walk_units(walk: tuple[int, int] | None, sm_count: int) -> float:
    """Bytes one SM walks in a block-walk kernel (OpWork.channel_walk): ceil(blocks / SMs) x bytes per block."""
    return walk_waves(walk, sm_count) * walk[1] if walk else 0.0


def hidden_bytes(cost: OpCost, bytes_of: str) -> float:
    """Bytes the hidden kernels around a node move, by their ``bytes_of`` ("none", "input": the node's activation
    inputs, "output", or both), each read and written (the share the kernels move: model.hidden_bytes_share)."""
    w = cost.work
    data_in = sum(v for k, v in w.input_bytes.items()) - w.weight_bytes
    if bytes_of == "none":
        return 0.0
    if bytes_of == "input":
        return 2.0 * max(data_in, 0.0)
    if bytes_of == "output":
        return 2.0 * w.bytes_written
    return 2.0 * (max(data_in, 0.0) + w.bytes_written)
