"""Normalisations: BatchNormalization, LayerNormalization, RMSNormalization, GroupNormalization,
InstanceNormalization, LpNormalization, LRN, MeanVarianceNormalization.

FLOPs per element of X (per-row / per-channel scalar work such as rsqrt(var + eps) is negligible
and not counted):

    BatchNormalization (inference)  2   y = x * a + b, an FMA, after folding scale/sqrt(var+eps)
                                        and B - mean*a per channel (cuDNN's inference kernel)
                       (training)   6   + statistics: mean 1, variance sub + FMA 3
    LayerNormalization              8   mean 1; variance: sub + FMA 3; normalise (x - mean) * rstd 2;
                                        scale and shift: FMA 2 (7 without a bias)
    RMSNormalization                4   sum of squares FMA 2; * rstd 1; * scale 1
    GroupNormalization              6   statistics 4 (as LayerNorm); apply 2 (PyTorch folds mean,
                                        rstd, scale and bias into one FMA per element)
    InstanceNormalization           6   as GroupNormalization
    LpNormalization                 3   |x| or x*x accumulate: 2; divide by the norm: 1
    LRN                    size + 13    x*x 1; window sum `size` adds; mean 1; alpha* and +k 2;
                                        pow 9 (exp(beta*log(.))); divide 1
    MeanVarianceNormalization   5       mean 1; x*x 1; mean of squares 1; subtract mean 1; divide 1

Kernels and bytes (PyTorch eager):
* BatchNormalization: 1 kernel, compulsory bytes (parameters read once): cuDNN's inference kernel at fp32, PyTorch's
  transform kernel for a 16-bit model (class ``batchnorm``: a loop of dependent loads per thread and the blocks'
  scheduling, :func:`transform_grid`), cuDNN's plane walk under autocast (class ``norm_amp``).
* LayerNormalization: ``vectorized_layer_norm_kernel``, 1 kernel, compulsory bytes, one thread block per row
  (``rows``: the calibration's per-row cost; 100352 rows of 96 take ~8x their bytes' time on the H200).
* RMSNormalization: 1 kernel (PyTorch's fused rms_norm: layer norm's kernel with rms = true, a thread block per
  row; class ``layernorm``). NB: older PyTorch composes it from ~6 elementwise/reduction kernels; the exporter's
  decomposition of aten::rms_norm is folded back into this kernel by graph/runtime.py.
* GroupNormalization: ``native_group_norm``: row moments, fused parameters, apply: 3 kernels; X is
  read twice (moments pass and apply pass); the moments kernel is a loop per thread over its (image, group) row
  (``thread_loop``: :func:`group_norm_loop`). The TorchScript exporter writes F.group_norm as Reshape ->
  InstanceNormalization -> Reshape -> Mul -> Add, which graph/runtime.py folds back into this call.
* InstanceNormalization: ``instance_norm`` repeats weight and bias (2 tiny kernels) and runs
  batch_norm in training mode on a [1, N*C, ...] view (statistics + normalise: 2 kernels): 4
  kernels, X read twice.
* LpNormalization: ``F.normalize``: norm (reads X), clamp_min (tiny), divide (reads X again):
  3 kernels.
* MeanVarianceNormalization: no PyTorch op; its ONNX function body, one kernel per node:
  ReduceMean(X), X*X, ReduceMean, mean^2, E[x^2] - mean^2, Sqrt, X - mean, / std: 8 kernels, X read
  three times (two X-sized intermediates written and read).
* LRN: ``F.local_response_norm``: x*x, constant pad (fill + copy), avg_pool, mul, add, pow,
  divide: 8 kernels, each reading/writing X-sized tensors.
weight_bytes: the scale/bias (and BatchNorm's running statistics) inputs that are initializers.
"""
from __future__ import annotations

from dataclasses import replace

from ...types import OpWork
from ..context import OpContext
from ..opclass import bn_fp32_params
from ._common import (
    attr, input_reads, inputs_bytes, norm_axis, out_elem_bytes, prod, register, with_input_reads, work_plan,
)
from .reduction import REDUCE_THREADS_PER_SM

BN_INFERENCE_FLOPS = 2
BN_TRAINING_FLOPS = 6
LAYERNORM_FLOPS = 8
RMSNORM_FLOPS = 4
GROUPNORM_FLOPS = 6
LPNORM_FLOPS = 3
LRN_EXTRA_FLOPS = 13
MVN_FLOPS = 5


@register("BatchNormalization", cls="norm")
def batch_norm(ctx: OpContext) -> OpWork:
    """Inference: 2 FLOPs per element, 1 kernel. ``training_mode=1``: 6 per element, X read twice, and a thread block
    per channel walks the channel's N x spatial elements (``channel_walk``, in bytes: cuDNN's bn_fw_tr_1C11 kernels).
    Inference on a 16-bit input with fp32 parameters (autocast; cuDNN's bn_fw_inf_1C11 at fp16) walks each (image,
    channel) plane with a block: N x C blocks of the spatial elements; a [N, C] input (BatchNorm1d) has no planes and
    runs cuDNN's per-activation mode, one elementwise pass."""
    numel = ctx.in_numel(0)
    x = ctx.in_shape(0)
    channels = max(x[1] if len(x) > 1 else 1, 1)
    if int(attr(ctx, "training_mode", 0)):
        work = ctx.work(vector_flops=BN_TRAINING_FLOPS * numel, bytes_read=ctx.all_in_bytes() + ctx.in_bytes(0),
                        notes=("training-mode batch norm",))
        walk = (channels, int(ctx.in_bytes(0)) // channels)
        return with_input_reads(replace(work, channel_walk=walk), input_reads(ctx, {0: 2 * ctx.in_bytes(0)}))
    work = ctx.work(vector_flops=BN_INFERENCE_FLOPS * numel)
    if len(x) <= 2:  # [N, C]: cuDNN's per-activation mode, one pass, no plane walk
        return work
    if not bn_fp32_params(ctx.node):
        return replace(work, **transform_grid(x))
    planes = max(channels * (x[0] if x else 1), 1)
    return replace(work, channel_walk=(planes, int(ctx.in_bytes(0)) // planes))


# PyTorch's launch of batch_norm_transform_input_kernel (aten/src/ATen/native/cuda/Normalization.cuh): threads per
# block by getNumThreads, blocks of the batch axis up to 256 K / C per channel, at most 32 resident blocks and 2,048
# threads per SM (Volta to Hopper)
BN_BLOCK_SIZES = (32, 64, 128, 256, 512)
BN_MAX_GRID_Y = 65535
BN_THREADS_PER_SM = 2048
BN_BLOCKS_PER_SM = 32


def _num_threads(n: int) -> int:
    return next((t for t in BN_BLOCK_SIZES if n <= t), BN_BLOCK_SIZES[-1])


def transform_grid(x: tuple[int, ...]) -> dict:
    """OpWork fields of PyTorch's batch-norm transform kernel on input ``x`` [N, C, ...], the kernel a 16-bit model
    runs (16-bit parameters: cuDNN is not called): a (tf x tb)-thread block per channel and slice of the batch, each
    thread looping over its images and the plane's elements, one dependent load per iteration (``thread_loop``: the
    iterations, the threads, the threads one SM holds), and ``channel_walk`` (blocks, 0): the blocks' scheduling, per
    wave of blocks (no per-byte walk: the loop holds it). cuDNN's fp32 kernel (bn_fw_inf_1C11) takes the same
    features, its own launch unpublished (calibration/fit/batchnorm_fit.py fits both on their kernels). Ignores: GPUs
    that hold fewer threads per SM (1,536 on Ampere GA10x and Ada, 1,024 on Turing)."""
    n, c, fs = x[0], max(x[1], 1), prod(x[2:])
    tf = max(_num_threads(fs // 4), min(_num_threads(fs), 64))
    tb = max(64 // tf, 1)
    by = min(max(1, min((256 * 1024) // c, -(-n // tb))), BN_MAX_GRID_Y)
    blocks, per_block = c * by, tf * tb
    iters = -(-n // (tb * by)) * -(-fs // tf)
    per_sm = min(BN_BLOCKS_PER_SM, BN_THREADS_PER_SM // per_block) * per_block
    return {"thread_loop": (iters, blocks * per_block, per_sm), "channel_walk": (blocks, 0)}


@register("LayerNormalization", cls="norm", autocast="fp32")
def layer_norm(ctx: OpContext) -> OpWork:
    """8 FLOPs per element (7 without bias), 1 kernel, compulsory bytes; ``rows`` = the product of the
    dimensions before ``axis`` (PyTorch launches a thread block per row)."""
    per = LAYERNORM_FLOPS if ctx.has_input(2) else LAYERNORM_FLOPS - 1
    return ctx.work(vector_flops=per * ctx.in_numel(0), rows=_rows(ctx))


@register("RMSNormalization", cls="norm")
def rms_norm(ctx: OpContext) -> OpWork:
    """RMSNormalization (opset 23): 4 FLOPs per element, 1 kernel, compulsory bytes; ``rows`` as
    LayerNormalization's (PyTorch's rms_norm is vectorized_layer_norm_kernel with rms = true: a block per row)."""
    return ctx.work(vector_flops=RMSNORM_FLOPS * ctx.in_numel(0), rows=_rows(ctx))


def _rows(ctx: OpContext) -> int:
    """Rows of a norm over the axes from ``axis`` on: the product of the dimensions before it."""
    shape = ctx.in_shape(0)
    axis = norm_axis(int(attr(ctx, "axis", -1)), len(shape))
    return prod(shape[:max(0, min(axis, len(shape)))])


# PyTorch's launch of RowwiseMomentsCUDAKernel (aten/src/ATen/native/cuda/group_norm_kernel.cu): a block of
# kCUDABlockReduceNumThreads threads per (image, group) row, a warp when the row is shorter; each thread loops over the
# row with a stride of the block, one element (one load, a Welford update) per iteration
GN_BLOCK_THREADS = 512
GN_BLOCKS_PER_SM = 32


def group_norm_loop(images: int, groups: int, row_len: int, x_bytes: float) -> tuple[int, int, int, int]:
    """``thread_loop`` (iterations, threads, threads per SM, bytes looped over) of native_group_norm's row-moments
    kernel on ``images`` x ``groups`` rows of ``row_len`` elements (C / groups x spatial; ``x_bytes`` in all): at
    batch 1 a 32-group norm runs 32 blocks whatever the map's size, so a 128-channel 512 x 512 map loops 2,048 times
    per thread (0.86 ms at fp16 on the H100, kernel table of h100/timing/blind15). Ignores: the block reduction at the
    loop's end."""
    threads = GN_BLOCK_THREADS if row_len >= GN_BLOCK_THREADS else 32
    per_sm = min(GN_BLOCKS_PER_SM, REDUCE_THREADS_PER_SM // threads) * threads
    return -(-max(row_len, 1) // threads), max(images * groups, 1) * threads, per_sm, int(x_bytes)


@register("GroupNormalization", cls="norm", autocast="fp32")
def group_norm(ctx: OpContext) -> OpWork:
    """6 FLOPs per element; 3 kernels (row moments, fused params, apply; 2 on [N, C] input: the apply reads the
    parameters itself); X read twice; the moments kernel's :func:`group_norm_loop` (``thread_loop``)."""
    x_b = ctx.in_bytes(0)
    params = inputs_bytes(ctx, (1, 2))
    out_b = ctx.all_out_bytes()
    x = ctx.in_shape(0)
    passes = [(x_b, 0), (params, 0), (x_b, out_b)] if prod(x[2:]) > 1 else [(x_b, 0), (x_b + params, out_b)]
    work = work_plan(ctx, passes, vector_flops=GROUPNORM_FLOPS * ctx.in_numel(0), reads={0: 2 * x_b})
    groups = max(int(attr(ctx, "num_groups", 1) or 1), 1)
    row = prod(x[1:]) // groups if len(x) > 1 else 1
    return replace(work, thread_loop=group_norm_loop(x[0] if x else 1, groups, row, x_b))


@register("InstanceNormalization", cls="norm", autocast="fp32")
def instance_norm(ctx: OpContext) -> OpWork:
    """6 FLOPs per element; 4 kernels (2 parameter repeats, statistics, normalise); X read twice."""
    x_b = ctx.in_bytes(0)
    n = ctx.in_shape(0)[0]
    scale_b, bias_b = ctx.in_bytes(1), ctx.in_bytes(2)
    out_b = ctx.all_out_bytes()
    return work_plan(ctx, [(scale_b, n * scale_b), (bias_b, n * bias_b), (x_b, 0),
                           (x_b + n * (scale_b + bias_b), out_b)],
                     vector_flops=GROUPNORM_FLOPS * ctx.in_numel(0), reads={0: 2 * x_b})


@register("LpNormalization", cls="norm", autocast="fp32")
def lp_norm(ctx: OpContext) -> OpWork:
    """3 FLOPs per element; 3 kernels (norm, clamp_min, divide); X read twice."""
    x_shape = ctx.in_shape(0)
    axis = int(attr(ctx, "axis", -1))
    axis = axis + len(x_shape) if axis < 0 else axis
    x_b = ctx.in_bytes(0)
    norm_b = x_b // x_shape[axis] if x_shape[axis] else 0
    return work_plan(ctx, [(x_b, norm_b), (norm_b, norm_b), (x_b + norm_b, ctx.out_bytes())],
                     vector_flops=LPNORM_FLOPS * ctx.in_numel(0), reads={0: 2 * x_b})


@register("LRN", cls="elementwise")
def lrn(ctx: OpContext) -> OpWork:
    """(size + 13) FLOPs per element; 8 X-sized kernels (x*x, pad fill + copy, avg_pool, mul, add,
    pow, divide); the padded tensor's extra size-1 channels are ignored."""
    x_b = ctx.in_bytes(0)
    size = int(attr(ctx, "size", 1))
    passes = [(x_b, x_b), (0, x_b), (x_b, x_b), (x_b, x_b), (x_b, x_b), (x_b, x_b), (x_b, x_b),
              (2 * x_b, ctx.out_bytes())]
    return work_plan(ctx, passes, vector_flops=(size + LRN_EXTRA_FLOPS) * ctx.in_numel(0), reads={0: 2 * x_b})


@register("MeanVarianceNormalization", cls="norm")
def mean_variance_norm(ctx: OpContext) -> OpWork:
    """5 FLOPs per element; 8 kernels (the ONNX function body); X read three times.

    Y has X's shape (the loader's shape function gives it; ONNX inference leaves this function op's
    output unknown), so the output bytes come from X.
    """
    x_b = ctx.in_bytes(0)
    o_b = ctx.in_numel(0) * out_elem_bytes(ctx)
    shape = ctx.in_shape(0)
    axes = attr(ctx, "axes", (0, 2, 3)) or (0, 2, 3)
    reduced = 1
    for a in axes:
        reduced *= shape[a + len(shape) if a < 0 else a]
    s_b = x_b // reduced if reduced else 0  # one statistic per kept position
    passes = [(x_b, s_b), (x_b, x_b), (x_b, s_b), (s_b, s_b), (2 * s_b, s_b), (s_b, s_b),
              (x_b + s_b, x_b), (x_b + s_b, o_b)]
    return work_plan(ctx, passes, vector_flops=MVN_FLOPS * ctx.in_numel(0), reads={0: 3 * x_b})
