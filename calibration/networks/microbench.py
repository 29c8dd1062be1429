"""Op microbenchmark sweeps on one GPU: GEMM, conv, elementwise, reductions, norms, attention, RNN.

    python3 -m calibration.networks.microbench --out DIR [--families gemm,conv_resnet50,...]
        [--precisions fp32,tf32,fp16,bf16] [--max-seconds 280]

Each case is timed with CUDA events around CUDA-graph replays of K back-to-back calls, divided by K, K grown until a
replay lasts >= 200 us (time_case; with events around every call when the call cannot be captured); median / p10 /
p90 of the timed calls. fp32 = TF32
off, tf32 = TF32 on (only for the tensor-core families: gemm, bmm, conv*, sdpa, rnn), fp16/bf16 =
tensors of that dtype. `flops` are algorithmic (FMA = 2), `bytes` compulsory (inputs read once,
outputs written once). After each family one profiler pass counts the kernels of every case and names the
longest one (``main_kernel``: which library path ran it).
Writes DIR/microbench.csv (appended per family; a case's error is recorded in its row).
"""
from __future__ import annotations

import argparse
import csv
import json
import math
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

from . import gpu_common
from .gpu_common import Budget, environment, summarize, sync

FLOAT_PRECISIONS = ("fp32", "tf32", "fp16", "bf16")
EIGHT_BIT_PRECISIONS = ("fp8_e4m3", "fp8_e5m2", "int8")
PRECISIONS = FLOAT_PRECISIONS + EIGHT_BIT_PRECISIONS
FAMILY_PRECISIONS = {"gemm_8bit": EIGHT_BIT_PRECISIONS,   # families not named here run FLOAT_PRECISIONS
                     "sdpa_long": ("fp16", "bf16"), "sdpa_decode": ("fp16", "bf16"), "rnn_persist": ("fp16", "bf16")}
TENSOR_CORE_FAMILIES = ("gemm", "gemm_8bit", "bmm", "conv_resnet50", "conv_depthwise", "conv_grouped", "conv_sweep",
                        "sdpa", "rnn", "conv_grouped_width", "bmm_unaligned", "rnn_steps",
                        "conv_broad", "conv_transpose", "gemm_broad", "conv3d", "conv1d", "conv_large", "rnn_bidir",
                        "sdpa_broad", "frontends", "sdpa_masked", "sdpa_long", "sdpa_decode", "linear_thin",
                        "linear_small", "conv_transpose_dw")
ELT_BYTES = {"fp32": 4, "tf32": 4, "fp16": 2, "bf16": 2, "fp8_e4m3": 1, "fp8_e5m2": 1, "int8": 1}
CSV_COLUMNS = ("op", "family", "precision", "params", "flops", "bytes", "time_s", "p10_s", "p90_s",
               "n_timed", "method", "n_kernels", "error", "main_kernel")
GRAPH_BELOW_S = 100e-6      # until run 20, ops faster than this were timed as CUDA-graph replays of K calls (now all are)
TARGET_CASE_S = 0.05        # GPU time spent timing one case (after warm-up)


@dataclass(frozen=True)
class OpCase:
    """One benchmark point: flops/bytes are known without torch; setup() allocates and returns fn."""

    op: str
    family: str
    precision: str
    params: dict = field(hash=False, compare=False)
    flops: float
    bytes: float
    setup: Callable[[], Callable[[], Any]] = field(repr=False, compare=False, hash=False)

    @property
    def key(self) -> str:
        return f"{self.op}|{self.precision}|{json.dumps(self.params, sort_keys=True)}"


# ----------------------------------------------------------------------------- tensor helpers
def _dtype(precision: str) -> Any:
    import torch

    return {"fp32": torch.float32, "tf32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[precision]


def _rand(shape: tuple[int, ...], precision: str) -> Any:
    import torch

    return torch.randn(shape, device=gpu_common.DEVICE, dtype=_dtype(precision))


# ----------------------------------------------------------------------------- flops / bytes
def gemm_cost(m: int, n: int, k: int, elt: int, batch: int = 1) -> tuple[float, float]:
    return 2.0 * batch * m * n * k, float(elt * batch * (m * k + k * n + m * n))


def conv_out(size: int, k: int, stride: int, pad: int) -> int:
    return (size + 2 * pad - k) // stride + 1


def conv_cost(n: int, cin: int, h: int, w: int, cout: int, k: int, stride: int, groups: int,
              elt: int) -> tuple[float, float, int, int]:
    pad = k // 2
    ho, wo = conv_out(h, k, stride, pad), conv_out(w, k, stride, pad)
    flops = 2.0 * n * cout * ho * wo * (cin // groups) * k * k
    nbytes = elt * (n * cin * h * w + cout * (cin // groups) * k * k + n * cout * ho * wo)
    return flops, float(nbytes), ho, wo


def rnn_cost(kind: str, batch: int, seq: int, inp: int, hidden: int, layers: int, elt: int) -> tuple[float, float]:
    gates = {"lstm": 4, "gru": 3}[kind]
    flops, weights = 0.0, 0
    for layer in range(layers):
        i = inp if layer == 0 else hidden
        flops += 2.0 * seq * batch * gates * hidden * (i + hidden)
        weights += gates * hidden * (i + hidden) + 2 * gates * hidden
    return flops, float(elt * (batch * seq * inp + weights + batch * seq * hidden))


def sdpa_cost(b: int, h: int, s: int, d: int, causal: bool, elt: int) -> tuple[float, float]:
    flops = 4.0 * b * h * s * s * d * (0.5 if causal else 1.0)
    return flops, float(elt * 4 * b * h * s * d)


# ----------------------------------------------------------------------------- case generators
def _gemm_cases(p: str) -> Iterator[OpCase]:
    elt = ELT_BYTES[p]
    shapes = [(s, s, s) for s in (256, 512, 1024, 2048, 4096, 8192)]
    shapes += [(m, n, k) for m in (32, 128, 512, 2048, 4096) for (k, n) in ((768, 768), (768, 3072), (3072, 768))]
    for m, n, k in shapes:
        def setup(m=m, n=n, k=k):
            import torch

            a, b = _rand((m, k), p), _rand((k, n), p)
            return lambda: torch.matmul(a, b)
        yield OpCase("matmul", "gemm", p, {"M": m, "N": n, "K": k}, *gemm_cost(m, n, k, elt), setup)


GEMM_8BIT_SHAPES = tuple([(s, s, s) for s in (256, 512, 1024, 2048, 4096, 8192, 16384)]
                          + [(m, n, k) for m in (32, 128, 512, 2048, 8192)
                             for (k, n) in ((768, 768), (768, 3072), (3072, 768), (4096, 4096), (4096, 11008))])


def _gemm_8bit_setup(p: str, m: int, n: int, k: int) -> Callable[[], Callable[[], Any]]:
    """fp8: torch._scaled_mm (A row-major, B column-major, per-tensor fp32 scales, bf16 out; e5m2 runs as
    e5m2 x e4m3, since cuBLASLt has no e5m2 x e5m2 kernel); int8: torch._int_mm (int32 out)."""
    def setup():
        import torch

        dev = gpu_common.DEVICE
        if p == "int8":
            a = torch.randint(-64, 64, (m, k), device=dev, dtype=torch.int8)
            b = torch.randint(-64, 64, (n, k), device=dev, dtype=torch.int8).t()
            return lambda: torch._int_mm(a, b)
        a_dtype = {"fp8_e4m3": torch.float8_e4m3fn, "fp8_e5m2": torch.float8_e5m2}[p]
        a = torch.randn((m, k), device=dev).to(a_dtype)
        b = torch.randn((n, k), device=dev).to(torch.float8_e4m3fn).t()
        one = torch.ones((), device=dev, dtype=torch.float32)
        return lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
    return setup


def _gemm_8bit_cases(p: str) -> Iterator[OpCase]:
    out_elt = 4 if p == "int8" else 2
    for m, n, k in GEMM_8BIT_SHAPES:
        flops = 2.0 * m * n * k
        nbytes = float(m * k + k * n + out_elt * m * n)
        yield OpCase("matmul_8bit", "gemm_8bit", p, {"M": m, "N": n, "K": k}, flops, nbytes,
                     _gemm_8bit_setup(p, m, n, k))


def _bmm_cases(p: str) -> Iterator[OpCase]:
    elt = ELT_BYTES[p]
    for batch in (1, 32):
        for seq in (128, 512):
            bh, d = batch * 12, 64
            for name, (m, n, k) in (("qk", (seq, seq, d)), ("pv", (seq, d, seq))):
                def setup(bh=bh, m=m, n=n, k=k):
                    import torch

                    a, b = _rand((bh, m, k), p), _rand((bh, k, n), p)
                    return lambda: torch.bmm(a, b)
                yield OpCase("bmm", "bmm", p, {"B": bh, "M": m, "N": n, "K": k, "kind": name},
                             *gemm_cost(m, n, k, elt, bh), setup)


def _conv_case(p: str, family: str, n: int, cin: int, h: int, cout: int, k: int, stride: int,
               groups: int = 1, w: int | None = None) -> OpCase:
    w = w or h
    flops, nbytes, ho, wo = conv_cost(n, cin, h, w, cout, k, stride, groups, ELT_BYTES[p])

    def setup():
        import torch.nn.functional as F

        x, wt = _rand((n, cin, h, w), p), _rand((cout, cin // groups, k, k), p)
        return lambda: F.conv2d(x, wt, None, stride, k // 2, 1, groups)
    params = {"N": n, "C": cin, "H": h, "W": w, "K": cout, "R": k, "S": k, "stride": stride, "pad": k // 2,
              "groups": groups, "Ho": ho, "Wo": wo}
    return OpCase("conv2d", family, p, params, flops, nbytes, setup)


# (Cin, H, Cout, k, stride) of the distinct ResNet-50 convolutions at 224x224 (torchvision v1.5)
RESNET50_CONVS = (
    (3, 224, 64, 7, 2),
    (64, 56, 64, 1, 1), (64, 56, 64, 3, 1), (64, 56, 256, 1, 1), (256, 56, 64, 1, 1),
    (256, 56, 128, 1, 1), (128, 56, 128, 3, 2), (128, 28, 512, 1, 1), (256, 56, 512, 1, 2),
    (512, 28, 128, 1, 1), (128, 28, 128, 3, 1),
    (512, 28, 256, 1, 1), (256, 28, 256, 3, 2), (256, 14, 1024, 1, 1), (512, 28, 1024, 1, 2),
    (1024, 14, 256, 1, 1), (256, 14, 256, 3, 1),
    (1024, 14, 512, 1, 1), (512, 14, 512, 3, 2), (512, 7, 2048, 1, 1), (1024, 14, 2048, 1, 2),
    (2048, 7, 512, 1, 1), (512, 7, 512, 3, 1),
)
# (C, H, k, stride): MobileNetV3 / EfficientNet-like depthwise convolutions
DEPTHWISE_CONVS = ((32, 112, 3, 1), (96, 112, 3, 2), (144, 56, 3, 1), (144, 56, 5, 2), (240, 28, 5, 1),
                   (480, 14, 3, 1), (672, 14, 5, 2), (960, 7, 5, 1))
# (C, H, groups, stride): RegNetY-1.6GF-like grouped 3x3 convolutions (group width 24)
GROUPED_CONVS = ((48, 56, 2, 1), (120, 28, 5, 1), (336, 14, 14, 1), (888, 7, 37, 1), (120, 56, 5, 2))


def _conv_resnet50_cases(p: str) -> Iterator[OpCase]:
    for n in (1, 32):
        for cin, h, cout, k, s in RESNET50_CONVS:
            yield _conv_case(p, "conv_resnet50", n, cin, h, cout, k, s)


def _conv_depthwise_cases(p: str) -> Iterator[OpCase]:
    for n in (1, 32):
        for c, h, k, s in DEPTHWISE_CONVS:
            yield _conv_case(p, "conv_depthwise", n, c, h, c, k, s, groups=c)


def _conv_grouped_cases(p: str) -> Iterator[OpCase]:
    for n in (1, 32):
        for c, h, g, s in GROUPED_CONVS:
            yield _conv_case(p, "conv_grouped", n, c, h, c, 3, s, groups=g)


# (C, H, group width, stride): grouped 3x3 convolutions of other group widths (ResNeXt-like 4 and 8,
# 16, 32, 64), to tell the grouped-convolution kernels' cost from the width-24 set above
GROUPED_WIDTH_CONVS = ((128, 56, 4, 1), (256, 28, 8, 1), (256, 28, 16, 2), (512, 14, 32, 1), (1024, 7, 64, 1),
                       (256, 56, 8, 1), (512, 28, 16, 1))


def _conv_grouped_width_cases(p: str) -> Iterator[OpCase]:
    for n in (1, 32):
        for c, h, width, s in GROUPED_WIDTH_CONVS:
            yield _conv_case(p, "conv_grouped_width", n, c, h, c, 3, s, groups=c // width)


# layer norm over the last dim D of `rows` rows: small D with many rows (Swin, ConvNeXt: one block per row)
LAYER_NORM_ROWS = tuple((rows, d) for d in (64, 96, 128, 192, 256, 384, 512, 768, 1024)
                        for rows in (1024, 8192, 25088, 100352))


def _layer_norm_rows_cases(p: str) -> Iterator[OpCase]:
    elt = ELT_BYTES[p]
    for rows, d in LAYER_NORM_ROWS:
        def setup(rows=rows, d=d):
            import torch.nn.functional as F

            x, w, b = _rand((rows, d), p), _rand((d,), p), _rand((d,), p)
            return lambda: F.layer_norm(x, (d,), w, b)
        yield OpCase("layer_norm", "layer_norm_rows", p, {"tokens": rows, "D": d}, 8.0 * rows * d,
                     float(elt * (2 * rows * d + 2 * d)), setup)


# softmax over short rows (Swin's 49-token windows, ViT's 197) and aligned neighbours: (rows, cols)
SOFTMAX_ROWS = tuple((rows, cols) for cols in (49, 64, 197, 256) for rows in (12288, 301056))


def _softmax_rows_cases(p: str) -> Iterator[OpCase]:
    return _softmax_shape_cases(p, "softmax_rows", SOFTMAX_ROWS)


# batched GEMMs whose M, N or K is not a multiple of 8 (Swin's 7x7 windows: 49 tokens, head dim 32) next
# to aligned controls of the same size: (batch, M, N, K)
BMM_UNALIGNED = ((96, 49, 49, 32), (96, 49, 32, 49), (6144, 49, 49, 32), (6144, 49, 32, 49),
                 (6144, 48, 48, 32), (6144, 48, 32, 48), (6144, 56, 56, 32), (6144, 56, 32, 56),
                 (384, 197, 197, 64), (384, 197, 64, 197), (384, 200, 200, 64), (384, 200, 64, 200),
                 (1536, 50, 50, 64), (1536, 50, 64, 50), (384, 77, 77, 64), (384, 77, 64, 77))


def _bmm_unaligned_cases(p: str) -> Iterator[OpCase]:
    elt = ELT_BYTES[p]
    for bh, m, n, k in BMM_UNALIGNED:
        def setup(bh=bh, m=m, n=n, k=k):
            import torch

            a, b = _rand((bh, m, k), p), _rand((bh, k, n), p)
            return lambda: torch.bmm(a, b)
        yield OpCase("bmm", "bmm_unaligned", p, {"B": bh, "M": m, "N": n, "K": k},
                     *gemm_cost(m, n, k, elt, bh), setup)


# run 16 (H100): linear layers with a tiny K or N over many rows (CaiT's 4 x 4 talking-heads mixing over 32 x 196 x 196 rows,
# detection heads' 4-wide box outputs, 3-channel frontends): cuBLAS runs them as small-tile wmma kernels (align1/2,
# 32 x 32 tiles) whose per-tile cost, not the FLOPs or the bytes, sets the time (CaiT fp16 b32: 82 us a call where
# the 20 MB it moves take ~6 us). (K, N) pairs, each over these row counts; aligned controls (8, 8) and (64, 64).
LINEAR_THIN_KN = ((4, 4), (4, 64), (64, 4), (12, 12), (3, 96), (96, 3), (8, 8), (64, 64))
LINEAR_THIN_ROWS = (8192, 65536, 393216, 1229312)


def _linear_thin_cases(p: str) -> Iterator[OpCase]:
    elt = ELT_BYTES[p]
    for k, n in LINEAR_THIN_KN:
        for m in LINEAR_THIN_ROWS:
            def setup(m=m, n=n, k=k):
                import torch.nn.functional as F

                x, w = _rand((m, k), p), _rand((n, k), p)
                return lambda: F.linear(x, w)
            yield OpCase("linear", "linear_thin", p, {"M": m, "N": n, "K": k}, *gemm_cost(m, n, k, elt), setup)


def _conv_sweep_cases(p: str) -> Iterator[OpCase]:
    """The time-based-roofline conv2d sweep: input 112x112x64, batch 16/32/64, kernel 3/7/9,
    filters 64-512, stride 1-3 (fp32 and fp16 only, as in the study)."""
    if p not in ("fp32", "fp16"):
        return
    for n in (16, 32, 64):
        for k in (3, 7, 9):
            for cout in (64, 128, 256, 512):
                for s in (1, 2, 3):
                    yield _conv_case(p, "conv_sweep", n, 64, 112, cout, k, s)


ELEMENTWISE_SIZES_BYTES = tuple(int(m * 10 ** e) for e in range(3, 10) for m in (1, 3) if m * 10 ** e <= 1e9)
UNARY_FLOPS = {"relu": 1, "gelu": 8}        # per element; gelu (erf form) counted as ~8 operations
BINARY_FLOPS = {"add": 1, "mul": 1}


def _elementwise_cases(p: str) -> Iterator[OpCase]:
    elt = ELT_BYTES[p]
    for size in ELEMENTWISE_SIZES_BYTES:
        n = max(1, size // elt)
        for op, f in UNARY_FLOPS.items():
            def setup(n=n, op=op):
                import torch

                x = _rand((n,), p)
                fn = {"relu": torch.relu, "gelu": torch.nn.functional.gelu}[op]
                return lambda: fn(x)
            yield OpCase(op, "elementwise", p, {"n": n, "tensor_bytes": n * elt}, float(f * n), 2.0 * n * elt, setup)
        for op, f in BINARY_FLOPS.items():
            def setup(n=n, op=op):
                import torch

                x, y = _rand((n,), p), _rand((n,), p)
                fn = {"add": torch.add, "mul": torch.mul}[op]
                return lambda: fn(x, y)
            yield OpCase(op, "elementwise", p, {"n": n, "tensor_bytes": n * elt}, float(f * n), 3.0 * n * elt, setup)


def _reduction_cases(p: str) -> Iterator[OpCase]:
    elt = ELT_BYTES[p]
    for size in (10 ** 4, 10 ** 5, 10 ** 6, 10 ** 7, 10 ** 8, 10 ** 9):
        n = size // elt
        for kind, cols in (("rows", 1024), ("all", None)):
            rows = n // cols if cols else 1
            c = cols or n

            def setup(rows=rows, c=c, kind=kind):
                import torch

                x = _rand((rows, c), p)
                return (lambda: torch.sum(x, dim=-1)) if kind == "rows" else (lambda: torch.sum(x))
            yield OpCase("sum", "reduction", p, {"rows": rows, "cols": c, "dim": "last" if cols else "all"},
                         float(rows * c), float(elt * (rows * c + rows)), setup)


# reductions by shape (reduce_kernel's launch: few outputs of a few thousand elements loop on one warp each, more
# split over warps and blocks; predictor/graph/ops/reduction.torch_reduce_loop): outputs x reduced elements, at most
# REDUCE_SHAPES_MAX elements in all
REDUCE_SHAPES_OUTPUTS = (1, 8, 32, 128, 512, 2048, 8192, 32768)
REDUCE_SHAPES_R = (49, 196, 784, 3136, 6272, 12544, 50176, 200704, 802816)
REDUCE_SHAPES_MAX = 1 << 26


def _reduce_shapes_cases(p: str) -> Iterator[OpCase]:
    """torch.mean and torch.var (unbiased=False: Welford) over the last dim of [outputs, R] (the reduced run
    innermost), and torch.mean over dim 0 of [R, outputs] (the outputs innermost: reduce_kernel's output vectors)."""
    elt = ELT_BYTES[p]
    for op, layout in (("mean", "inner"), ("var", "inner"), ("mean", "outer")):
        for outs in REDUCE_SHAPES_OUTPUTS:
            for red in REDUCE_SHAPES_R:
                if outs * red > REDUCE_SHAPES_MAX:
                    continue

                def setup(outs=outs, red=red, op=op, layout=layout):
                    import torch

                    if layout == "outer":
                        x = _rand((red, outs), p)
                        return lambda: torch.mean(x, dim=0)
                    x = _rand((outs, red), p)
                    return (lambda: torch.mean(x, dim=-1)) if op == "mean" else \
                        (lambda: torch.var(x, dim=-1, unbiased=False))
                yield OpCase(op, "reduce_shapes", p, {"outputs": outs, "R": red, "layout": layout},
                             float(outs * red), float(elt * (outs * red + outs)), setup)


# F.group_norm(x [N, C, H, H], groups) by shape: native_group_norm's RowwiseMomentsCUDAKernel gives each (image, group)
# row one block whose threads loop over the row's C / groups x H x H elements, a load each; batch 1 leaves a few
# dozen blocks on the GPU. Groups 32 (diffusion UNets and VAEs, detection heads), 1 (PoolFormer, MobileViT-v2) and 8
GROUP_NORM_SHAPES_N = (1, 2, 8, 32)
GROUP_NORM_SHAPES_C = (64, 128, 256, 512, 1280)
GROUP_NORM_SHAPES_H = (8, 16, 32, 64, 128, 256, 512)
GROUP_NORM_SHAPES_MAX = 1 << 27  # elements
GROUP_NORM_SHAPES_EXTRA = tuple((n, c, h, g) for g in (1, 8) for n in (1, 32) for c, h in ((64, 56), (256, 32),
                                                                                       (512, 16), (128, 128)))


def _group_norm_shapes() -> tuple[tuple[int, int, int, int], ...]:
    grid = tuple((n, c, h, 32) for n in GROUP_NORM_SHAPES_N for c in GROUP_NORM_SHAPES_C for h in GROUP_NORM_SHAPES_H
                 if 4096 <= n * c * h * h <= GROUP_NORM_SHAPES_MAX)
    return grid + GROUP_NORM_SHAPES_EXTRA


def _group_norm_shapes_cases(p: str) -> Iterator[OpCase]:
    """F.group_norm with weight and bias on [N, C, H, H] (:data:`GROUP_NORM_SHAPES_N` etc.: 32 groups over the grid,
    1 and 8 groups on a few shapes); 3 kernels a call (row moments, fused parameters, apply)."""
    elt = ELT_BYTES[p]
    for n, c, h, g in _group_norm_shapes():
        def setup(n=n, c=c, h=h, g=g):
            import torch.nn.functional as F

            x, w, b = _rand((n, c, h, h), p), _rand((c,), p), _rand((c,), p)
            return lambda: F.group_norm(x, g, w, b)
        yield OpCase("group_norm", "group_norm_shapes", p, {"N": n, "C": c, "H": h, "groups": g},
                     8.0 * n * c * h * h, float(elt * 3 * n * c * h * h), setup)


# the sixteenth blind set's kernels that the cost model prices by bytes where a loop or a gather sets the time: a scan
# down a long axis (PyTorch's outer-dimension scan: a thread per column, serial over the rows), the speech encoders'
# positional convolution (128 taps, 16 groups: cuDNN's kernel per group) by length and batch, bilinear grid_sample
# (a gather per tap) by input and grid size, and torch.stack along an inner axis
SCAN_SHAPES = tuple((rows, cols) for rows in (1024, 8192, 32768, 131072) for cols in (8, 64, 512)) + \
    ((128, 4096), (4096, 4096))
POS_CONV = tuple((n, length) for n in (1, 8, 32) for length in (50, 200, 499, 1500))
GRID_SAMPLE = tuple((n, h, q) for n, h in ((8, 13), (8, 50), (8, 100), (256, 25), (256, 100)) for q in (300, 13294))
STACK_INNER = tuple((n, q) for n in (8, 256) for q in (300, 13294))


def _loop_kernels_cases(p: str) -> Iterator[OpCase]:
    """torch.cumsum over dim 0 (a thread per column looping over the rows) and dim -1 of [rows, cols];
    F.conv1d(x [N, 768, L], w [768, 48, 128], padding 63, groups 16); F.grid_sample(x [N, 32, H, H], grid
    [N, Q, 4, 2], bilinear, zeros, align_corners False); torch.stack of 4 [N, 32, Q, 4] tensors at dim -2."""
    elt = ELT_BYTES[p]
    for rows, cols in SCAN_SHAPES:
        for dim in (0, -1):
            def setup(rows=rows, cols=cols, dim=dim):
                import torch

                x = _rand((rows, cols), p)
                return lambda: torch.cumsum(x, dim=dim)
            yield OpCase("cumsum", "loop_kernels", p, {"rows": rows, "cols": cols, "dim": dim}, float(rows * cols),
                         float(elt * 2 * rows * cols), setup)
    for n, length in POS_CONV:
        yield _conv_nd_case(p, "loop_kernels", n, 768, (length,), 768, (128,), (1,), (1,), groups=16)
    for n, h, q in GRID_SAMPLE:
        def setup(n=n, h=h, q=q):
            import torch
            import torch.nn.functional as F

            x = _rand((n, 32, h, h), p)
            grid = (torch.rand((n, q, 4, 2), device=x.device, dtype=x.dtype) * 2 - 1)
            return lambda: F.grid_sample(x, grid, mode="bilinear", padding_mode="zeros", align_corners=False)
        outs = n * 32 * q * 4
        yield OpCase("grid_sample", "loop_kernels", p, {"N": n, "C": 32, "H": h, "Q": q, "P": 4}, float(8 * outs),
                     float(elt * (n * 32 * h * h + n * q * 8 + outs)), setup)
    for n, q in STACK_INNER:
        def setup(n=n, q=q):
            import torch

            xs = [_rand((n, 32, q, 4), p) for _ in range(4)]
            return lambda: torch.stack(xs, dim=-2)
        yield OpCase("stack", "loop_kernels", p, {"N": n, "C": 32, "Q": q, "P": 4, "parts": 4, "dim": -2}, 0.0,
                     float(elt * 2 * 4 * n * 32 * q * 4), setup)


# the kernels of the sixteenth set's misses that run14 did not cover: reduce_kernel summing a short innermost run over
# up to 2^26 outputs (Deformable DETR's sum over 16 sampled points, 10 ms a call at fp16 batch 32 on the H100: one
# block wave after another, not a loop), torch.stack / torch.cat of parts whose contiguous run in the output is short
# (its stack of 4 levels at dim -2: 4-element runs), and the positional convolution with the networks' own padding
# of 64 (loop_kernels' padding 63 ran other cuDNN kernels)
SHORT_SUM = tuple((outs, red) for red in (2, 4, 16, 64) for outs in (1 << 14, 1 << 18, 1 << 22, 1 << 26)
                  if outs * red <= 1 << 28)
SHORT_RUN_STACK = tuple((rows, run, parts) for run in (1, 4, 16, 64, 256) for parts in (2, 4)
                        for rows in (1 << 12, 1 << 16, 1 << 20) if rows * run * parts <= 1 << 28)
POS_CONV_64 = tuple((n, length) for n in (1, 8, 32) for length in (49, 200, 499, 1500))


def _short_rows_cases(p: str) -> Iterator[OpCase]:
    """torch.sum(x [outputs, R], dim=-1) and torch.sum(x [R, outputs], dim=0) over short R; torch.stack of ``parts``
    [rows, run] tensors at dim -2 and torch.cat of them at dim -1 (each part's run contiguous in the output, then the
    next part's); F.conv1d(x [N, 768, L], w [768, 48, 128], padding 64, groups 16) (output L + 1)."""
    elt = ELT_BYTES[p]
    for outs, red in SHORT_SUM:
        for layout in ("inner", "outer"):
            def setup(outs=outs, red=red, layout=layout):
                import torch

                if layout == "outer":
                    x = _rand((red, outs), p)
                    return lambda: torch.sum(x, dim=0)
                x = _rand((outs, red), p)
                return lambda: torch.sum(x, dim=-1)
            yield OpCase("sum", "short_rows", p, {"outputs": outs, "R": red, "layout": layout}, float(outs * red),
                         float(elt * (outs * red + outs)), setup)
    for rows, run, parts in SHORT_RUN_STACK:
        for op in ("stack", "cat"):
            def setup(rows=rows, run=run, parts=parts, op=op):
                import torch

                xs = [_rand((rows, run), p) for _ in range(parts)]
                return (lambda: torch.stack(xs, dim=-2)) if op == "stack" else (lambda: torch.cat(xs, dim=-1))
            yield OpCase(op, "short_rows", p, {"rows": rows, "run": run, "parts": parts}, 0.0,
                         float(elt * 2 * rows * run * parts), setup)
    for n, length in POS_CONV_64:
        def setup(n=n, length=length):
            import torch.nn.functional as F

            x, wt = _rand((n, 768, length), p), _rand((768, 48, 128), p)
            return lambda: F.conv1d(x, wt, None, 1, 64, 1, 16)
        params = {"N": n, "C": 768, "spatial": [length], "K": 768, "kernel": [128], "stride": [1], "dilation": [1],
                  "pads": [64], "groups": 16, "out": [length + 1]}
        yield OpCase("conv1d", "short_rows", p, params, 2.0 * n * 768 * (length + 1) * 48 * 128,
                     float(elt * (n * 768 * length + 768 * 48 * 128 + n * 768 * (length + 1))), setup)


def _softmax_cases(p: str) -> Iterator[OpCase]:
    shapes = [(b * 12 * s, s) for b in (1, 32) for s in (128, 512)] + [(1, 1000), (32, 1000), (4096, 30522)]
    return _softmax_shape_cases(p, "softmax", shapes)


def _softmax_shape_cases(p: str, family: str, shapes) -> Iterator[OpCase]:
    """Softmax over the last dim of each (rows, cols)."""
    elt = ELT_BYTES[p]
    for rows, cols in shapes:
        def setup(rows=rows, cols=cols):
            import torch

            x = _rand((rows, cols), p)
            return lambda: torch.softmax(x, dim=-1)
        yield OpCase("softmax", family, p, {"rows": rows, "cols": cols}, 5.0 * rows * cols,
                     2.0 * elt * rows * cols, setup)


def _norm_cases(p: str) -> Iterator[OpCase]:
    elt = ELT_BYTES[p]
    for n, c, h in ((1, 64, 112), (32, 64, 112), (32, 256, 56), (32, 512, 28), (32, 2048, 7), (1, 256, 56)):
        numel = n * c * h * h

        def setup(n=n, c=c, h=h):
            import torch.nn.functional as F

            x = _rand((n, c, h, h), p)
            mean, var, w, b = (_rand((c,), p).abs() + 0.5 for _ in range(4))
            return lambda: F.batch_norm(x, mean, var, w, b, training=False)
        yield OpCase("batch_norm", "norm", p, {"N": n, "C": c, "H": h, "W": h}, 4.0 * numel,
                     float(elt * (2 * numel + 4 * c)), setup)
    for tokens, d in ((128, 768), (4096, 768), (4096, 1024), (32 * 197, 768), (8192, 4096)):
        def setup(tokens=tokens, d=d):
            import torch.nn.functional as F

            x, w, b = _rand((tokens, d), p), _rand((d,), p), _rand((d,), p)
            return lambda: F.layer_norm(x, (d,), w, b)
        yield OpCase("layer_norm", "norm", p, {"tokens": tokens, "D": d}, 8.0 * tokens * d,
                     float(elt * (2 * tokens * d + 2 * d)), setup)
    for n, c, h, g in ((1, 256, 64, 32), (32, 256, 64, 32), (8, 512, 32, 32)):
        numel = n * c * h * h

        def setup(n=n, c=c, h=h, g=g):
            import torch.nn.functional as F

            x, w, b = _rand((n, c, h, h), p), _rand((c,), p), _rand((c,), p)
            return lambda: F.group_norm(x, g, w, b)
        yield OpCase("group_norm", "norm", p, {"N": n, "C": c, "H": h, "W": h, "groups": g}, 8.0 * numel,
                     float(elt * (2 * numel + 2 * c)), setup)


def _pool_cases(p: str) -> Iterator[OpCase]:
    elt = ELT_BYTES[p]
    for n in (1, 32):
        c, h = 64, 112
        ho = conv_out(h, 3, 2, 1)

        def setup(n=n):
            import torch.nn.functional as F

            x = _rand((n, c, h, h), p)
            return lambda: F.max_pool2d(x, 3, 2, 1)
        yield OpCase("max_pool2d", "pool", p, {"N": n, "C": c, "H": h, "W": h, "k": 3, "stride": 2},
                     float(n * c * ho * ho * 9), float(elt * n * c * (h * h + ho * ho)), setup)
        for c2, h2 in ((2048, 7), (1280, 7), (768, 14)):
            def setup(n=n, c2=c2, h2=h2):
                import torch.nn.functional as F

                x = _rand((n, c2, h2, h2), p)
                return lambda: F.adaptive_avg_pool2d(x, 1)
            yield OpCase("global_avg_pool", "pool", p, {"N": n, "C": c2, "H": h2, "W": h2},
                         float(n * c2 * h2 * h2), float(elt * n * c2 * (h2 * h2 + 1)), setup)


def _resize_cases(p: str) -> Iterator[OpCase]:
    elt = ELT_BYTES[p]
    for n in (1, 8):
        for mode, c, h, scale in (("bilinear", 21, 64, 8), ("bilinear", 256, 64, 2), ("nearest", 256, 32, 2)):
            ho = h * scale
            out = n * c * ho * ho

            def setup(n=n, mode=mode, c=c, h=h, ho=ho):
                import torch.nn.functional as F

                x = _rand((n, c, h, h), p)
                kw = {"align_corners": False} if mode == "bilinear" else {}
                return lambda: F.interpolate(x, size=(ho, ho), mode=mode, **kw)
            yield OpCase(f"resize_{mode}", "resize", p, {"N": n, "C": c, "H": h, "W": h, "Ho": ho, "Wo": ho},
                         float((8 if mode == "bilinear" else 0) * out), float(elt * (n * c * h * h + out)), setup)


def _transpose_cases(p: str) -> Iterator[OpCase]:
    cases = [("nchw_to_nhwc", (1, 64, 112, 112), (0, 2, 3, 1)), ("nchw_to_nhwc", (32, 64, 112, 112), (0, 2, 3, 1)),
             ("nchw_to_nhwc", (32, 256, 56, 56), (0, 2, 3, 1)), ("bshd_to_bhsd", (32, 128, 12, 64), (0, 2, 1, 3)),
             ("bshd_to_bhsd", (1, 128, 12, 64), (0, 2, 1, 3)), ("2d_transpose", (4096, 4096), (1, 0))]
    for kind, shape, perm in cases:
        yield _permute_case(p, "transpose", shape, perm, kind)


def _permute_case(p: str, family: str, shape: tuple, perm: tuple, kind: str) -> OpCase:
    """``x.permute(*perm).contiguous()`` of an [shape] tensor: reads and writes every element once."""
    def setup(shape=shape, perm=perm):
        x = _rand(shape, p)
        return lambda: x.permute(*perm).contiguous()
    return OpCase("permute_contiguous", family, p, {"shape": list(shape), "perm": list(perm), "kind": kind},
                  0.0, 2.0 * ELT_BYTES[p] * math.prod(shape), setup)


def _sdpa_cases(p: str) -> Iterator[OpCase]:
    elt = ELT_BYTES[p]
    for b in (1, 32):
        for s in (128, 512, 1024):
            for causal in (False, True):
                h, d = 12, 64

                def setup(b=b, s=s, causal=causal, h=h, d=d):
                    import torch.nn.functional as F

                    q, k, v = (_rand((b, h, s, d), p) for _ in range(3))
                    return lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                yield OpCase("sdpa", "sdpa", p, {"B": b, "H": h, "S": s, "D": d, "causal": causal},
                             *sdpa_cost(b, h, s, d, causal, elt), setup)


def _rnn_cases(p: str) -> Iterator[OpCase]:
    configs = [("lstm", b, 64, 256, 512, layers) for b in (1, 32, 64) for layers in (1, 2)]
    configs += [("gru", b, 100, 80, 768, 2) for b in (1, 32)] + [("lstm", 32, 128, 1024, 1024, 1)]
    return _rnn_config_cases(p, "rnn", configs)


def _rnn_config_cases(p: str, family: str, configs) -> Iterator[OpCase]:
    elt = ELT_BYTES[p]
    for kind, b, seq, inp, hid, layers in configs:
        def setup(kind=kind, b=b, seq=seq, inp=inp, hid=hid, layers=layers):
            import torch

            cls = {"lstm": torch.nn.LSTM, "gru": torch.nn.GRU}[kind]
            mod = cls(inp, hid, num_layers=layers, batch_first=True).to(device=gpu_common.DEVICE, dtype=_dtype(p)).eval()
            mod.flatten_parameters()
            x = _rand((b, seq, inp), p)
            return lambda: mod(x)
        yield OpCase(kind, family, p, {"batch": b, "seq": seq, "input": inp, "hidden": hid, "layers": layers},
                     *rnn_cost(kind, b, seq, inp, hid, layers, elt), setup)


# (kind, batch, seq, input, hidden, layers): recurrent layers of several widths, timed in CUDA graphs (GPU time:
# the eager `rnn` family above is host-bound); 1 and 2 layers for the stacked-layer overlap
RNN_STEPS = tuple((kind, b, 32, h, h, layers) for kind in ("lstm", "gru") for h in (256, 512, 1024)
                  for b in (1, 32) for layers in (1, 2))


def _rnn_steps_cases(p: str) -> Iterator[OpCase]:
    return _rnn_config_cases(p, "rnn_steps", RNN_STEPS)


# one-layer unidirectional LSTMs where PyTorch asks cuDNN for its persistent algorithm at fp16 (widths multiples of
# 128, batch a multiple of 8 up to 128: calibration/fit/rnn_fit.persistent_lstm) and the same shapes at bf16, which
# runs the standard algorithm (the control): what the persistent kernel's time follows
RNN_PERSIST = tuple(("lstm", b, seq, h, h, 1) for h in (256, 512, 1024) for b in (8, 16, 32, 64, 128)
                    for seq in (32, 128))


def _rnn_persist_cases(p: str) -> Iterator[OpCase]:
    return _rnn_config_cases(p, "rnn_persist", RNN_PERSIST)


# elements of the autocast elementwise cases: ViT-B/16's residual stream at batch 32 is 4.8 M
MIXED_SIZES = tuple(1 << k for k in range(16, 27, 2))


def _elementwise_mixed_cases(p: str) -> Iterator[OpCase]:
    """What autocast's elementwise kernels do at the low precision ``p`` (fp16, bf16; none at fp32/tf32): an add of
    an fp32 and a low-precision tensor into fp32 (PyTorch's dynamic-casting TensorIterator path), the same add with
    both in fp32 (the control), and casts fp32 -> low of a contiguous and of a transposed (non-contiguous) tensor."""
    if p not in ("fp16", "bf16"):
        return
    low = ELT_BYTES[p]
    for n in MIXED_SIZES:
        rows = 1 << (n.bit_length() // 2)

        def mixed(n=n):
            x, y = _rand((n,), "fp32"), _rand((n,), p)
            return lambda: x + y

        def same(n=n):
            x, y = _rand((n,), "fp32"), _rand((n,), "fp32")
            return lambda: x + y

        def cast(n=n):
            x = _rand((n,), "fp32")
            return lambda: x.to(_dtype(p))

        def cast_t(n=n, rows=rows):
            import torch

            x = _rand((rows, n // rows), "fp32")
            return lambda: x.t().to(_dtype(p), memory_format=torch.contiguous_format)

        yield OpCase("add_mixed", "elementwise_mixed", p, {"n": n}, float(n), float(n * (4 + low + 4)), mixed)
        yield OpCase("add_fp32", "elementwise_mixed", p, {"n": n}, float(n), float(n * 12), same)
        yield OpCase("cast", "elementwise_mixed", p, {"n": n}, 0.0, float(n * (4 + low)), cast)
        yield OpCase("cast_transposed", "elementwise_mixed", p, {"n": n, "rows": rows}, 0.0, float(n * (4 + low)),
                     cast_t)



# ----------------------------------------------------------------------------- broad kernel sweeps (run 6)
def _broad_conv_shapes(seed: int = 6, n_shapes: int = 140) -> tuple[tuple[int, ...], ...]:
    """(N, Cin, H, Cout, k, stride, dilation) drawn once from a fixed seed over the ranges networks use: kernels 1-7,
    strides 1-4, dilation 1-2, channels 3-2048, spatial 7-224, batch 1-64; capped at 1.5 TFLOP and 1.5 GB of
    activations so each case runs in milliseconds. Deterministic: the same list on every machine."""
    import random

    rng = random.Random(seed)
    out: list[tuple[int, ...]] = []
    while len(out) < n_shapes:
        k = rng.choice((1, 1, 3, 3, 3, 5, 7))
        stride = rng.choice((1, 1, 1, 2, 2, 4)) if k > 1 else rng.choice((1, 1, 2))
        dil = 2 if k == 3 and stride == 1 and rng.random() < 0.15 else 1
        cin = rng.choice((3, 16, 32, 64, 128, 256, 512, 1024, 2048))
        cout = rng.choice((16, 32, 64, 128, 256, 512, 1024, 2048))
        h = rng.choice((7, 14, 28, 56, 112, 224))
        n = rng.choice((1, 8, 32, 64))
        ho = (h + 2 * (dil * (k - 1) // 2) - dil * (k - 1) - 1) // stride + 1
        if ho < 1:
            continue
        flops = 2.0 * n * cout * ho * ho * cin * k * k
        act = 4.0 * n * (cin * h * h + cout * ho * ho)
        if flops > 1.5e12 or act > 1.5e9 or flops < 1e6:
            continue
        out.append((n, cin, h, cout, k, stride, dil))
    return tuple(out)


CONV_BROAD = _broad_conv_shapes()
# the audit's large-spatial plain convolutions (VGG-like 3x3 x128 at 224, 5x5 stride 2), always in the set
CONV_BROAD_FIXED = ((64, 64, 224, 128, 3, 1, 1), (64, 128, 224, 128, 3, 1, 1), (32, 64, 224, 64, 3, 1, 1),
                    (32, 64, 112, 128, 5, 2, 1), (32, 3, 224, 64, 3, 1, 1), (32, 256, 56, 256, 3, 1, 1))


def _conv_dilated_case(p: str, family: str, n: int, cin: int, h: int, cout: int, k: int, stride: int,
                       dil: int) -> OpCase:
    pad = dil * (k - 1) // 2
    ho = (h + 2 * pad - dil * (k - 1) - 1) // stride + 1
    elt = ELT_BYTES[p]
    flops = 2.0 * n * cout * ho * ho * cin * k * k
    nbytes = float(elt * (n * cin * h * h + cout * cin * k * k + n * cout * ho * ho))

    def setup():
        import torch.nn.functional as F

        x, wt = _rand((n, cin, h, h), p), _rand((cout, cin, k, k), p)
        return lambda: F.conv2d(x, wt, None, stride, pad, dil, 1)
    params = {"N": n, "C": cin, "H": h, "W": h, "K": cout, "R": k, "S": k, "stride": stride, "pad": pad,
              "groups": 1, "dilation": dil, "Ho": ho, "Wo": ho}
    return OpCase("conv2d", family, p, params, flops, nbytes, setup)


def _conv_broad_cases(p: str) -> Iterator[OpCase]:
    for shape in CONV_BROAD_FIXED + CONV_BROAD:
        yield _conv_dilated_case(p, "conv_broad", *shape)


# (N, Cin, H, Cout, k, stride): transposed convolutions (DCGAN/autoencoder 4x4 stride 2, U-Net 2x2 stride 2)
CONV_TRANSPOSE = tuple((n, cin, h, cout, k, 2) for n in (1, 32) for k in (2, 4)
                       for cin, h, cout in ((512, 8, 256), (256, 16, 128), (128, 32, 64), (64, 64, 3),
                                            (1024, 16, 512), (256, 64, 128), (128, 128, 64)))


def _conv_transpose_cases(p: str) -> Iterator[OpCase]:
    elt = ELT_BYTES[p]
    for n, cin, h, cout, k, s in CONV_TRANSPOSE:
        pad = (k - s) // 2
        ho = (h - 1) * s - 2 * pad + k
        flops = 2.0 * n * cin * h * h * cout * k * k
        nbytes = float(elt * (n * cin * h * h + cin * cout * k * k + n * cout * ho * ho))

        def setup(n=n, cin=cin, h=h, cout=cout, k=k, s=s, pad=pad):
            import torch.nn.functional as F

            x, wt = _rand((n, cin, h, h), p), _rand((cin, cout, k, k), p)
            return lambda: F.conv_transpose2d(x, wt, None, s, pad)
        yield OpCase("conv_transpose2d", "conv_transpose", p,
                     {"N": n, "C": cin, "H": h, "W": h, "K": cout, "R": k, "S": k, "stride": s, "pad": pad,
                      "Ho": ho, "Wo": ho}, flops, nbytes, setup)


# (M, N, K) of x [M, K] @ W^T [K, N] as F.linear runs it: skinny (decode-like), square, huge K
GEMM_BROAD = tuple((m, n, k) for m in (1, 8, 32, 128, 512, 2048, 8192) for n, k in
                   ((768, 768), (3072, 768), (768, 3072), (4096, 4096), (11008, 4096), (4096, 11008),
                    (1024, 16384), (256, 65536), (50272, 768)))


def _linear_cases(p: str, family: str, shapes) -> Iterator[OpCase]:
    """``F.linear(x [M, K], W [N, K])`` for each (M, N, K) of ``shapes``."""
    elt = ELT_BYTES[p]
    for m, n, k in shapes:
        def setup(m=m, n=n, k=k):
            import torch.nn.functional as F

            x, w = _rand((m, k), p), _rand((n, k), p)
            return lambda: F.linear(x, w)
        yield OpCase("linear", family, p, {"M": m, "N": n, "K": k}, *gemm_cost(m, n, k, elt), setup)


def _gemm_broad_cases(p: str) -> Iterator[OpCase]:
    return _linear_cases(p, "gemm_broad", GEMM_BROAD)


# (rows, D): RMS norm as LLaMA's modules run it (x * rsqrt(mean(x^2) + eps) * w: several kernels in eager) and
# group norm (N, C, H, groups)
RMS_NORM = tuple((rows, d) for rows in (128, 4096, 32768) for d in (1024, 4096))
GROUP_NORM = ((1, 64, 56, 1), (32, 64, 56, 1), (1, 320, 28, 1), (32, 320, 28, 1), (32, 128, 64, 32), (8, 512, 32, 32))


def _norm_broad_cases(p: str) -> Iterator[OpCase]:
    elt = ELT_BYTES[p]
    for rows, d in RMS_NORM:
        def setup(rows=rows, d=d):
            import torch

            x, w = _rand((rows, d), p), _rand((d,), p)

            def rms():
                xf = x.float()
                return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6)).to(x.dtype) * w
            return rms
        yield OpCase("rms_norm", "norm_broad", p, {"tokens": rows, "D": d}, 5.0 * rows * d,
                     float(elt * 2 * rows * d), setup)
    for n, c, h, g in GROUP_NORM:
        def setup(n=n, c=c, h=h, g=g):
            import torch.nn.functional as F

            x, w, b = _rand((n, c, h, h), p), _rand((c,), p), _rand((c,), p)
            return lambda: F.group_norm(x, g, w, b)
        yield OpCase("group_norm", "norm_broad", p, {"N": n, "C": c, "H": h, "groups": g}, 8.0 * n * c * h * h,
                     float(elt * 2 * n * c * h * h), setup)


# ----------------------------------------------------------------------------- run 7: broad sweeps of the op families
# that runs 1-6 left thin (3D and 1D convolutions, large spatial sizes, pooling, bidirectional recurrent layers,
# broadcasts / casts / activations / data movement, attention shapes). Shapes are drawn once from fixed seeds over
# the ranges networks use, or laid on small grids; none is taken from a particular network.
def _conv_nd_case(p: str, family: str, n: int, cin: int, spatial: tuple[int, ...], cout: int, kernel: tuple[int, ...],
                  stride: tuple[int, ...], dilation: tuple[int, ...], groups: int = 1, bias: bool = False) -> OpCase:
    """F.conv1d / conv2d / conv3d with padding (k - 1) * d // 2 per axis (same-size at stride 1), with a bias when
    ``bias`` (an add per output, the vector read once; the row's params then say ``bias``: 1)."""
    pads = tuple((k - 1) * d // 2 for k, d in zip(kernel, dilation))
    outs = tuple((x + 2 * pd - d * (k - 1) - 1) // s + 1 for x, pd, d, k, s in zip(spatial, pads, dilation, kernel, stride))
    elt = ELT_BYTES[p]
    taps = math.prod(kernel)
    out_n = n * cout * math.prod(outs)
    flops = 2.0 * out_n * (cin // groups) * taps + (out_n if bias else 0)
    nbytes = float(elt * (n * cin * math.prod(spatial) + cout * (cin // groups) * taps + out_n + (cout if bias else 0)))
    nd = len(spatial)

    def setup():
        import torch.nn.functional as F

        fn = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[nd]
        x, wt = _rand((n, cin, *spatial), p), _rand((cout, cin // groups, *kernel), p)
        b = _rand((cout,), p) if bias else None
        return lambda: fn(x, wt, b, stride, pads, dilation, groups)
    params = {"N": n, "C": cin, "spatial": list(spatial), "K": cout, "kernel": list(kernel), "stride": list(stride),
              "dilation": list(dilation), "pads": list(pads), "groups": groups, "out": list(outs),
              **({"bias": 1} if bias else {})}
    return OpCase(f"conv{nd}d", family, p, params, flops, nbytes, setup)


def _seeded(seed: int, count: int, draw: Callable[[Any], tuple | None]) -> tuple[tuple, ...]:
    """``count`` distinct tuples from ``draw(rng)`` (None = rejected), from a fixed seed."""
    import random

    rng, out = random.Random(seed), []
    while len(out) < count:
        t = draw(rng)
        if t is not None and t not in out:
            out.append(t)
    return tuple(out)


# run 17: depthwise convolutions over the kernel's shape (1-D k = 3..31, 2-D square 3..13 and 1 x k / k x 1 strips),
# with and without a bias. PyTorch's own depthwise kernel (conv_depthwise2d_forward, one thread per output looping
# over the taps) runs every fp32/bf16 call; at fp16 cuDNN runs 1-D stride-1 calls and square 1/3/5 ones, and adds a
# bias in a kernel of its own. Kernel tables at batch 32: 1-D kernels of 3 to 9 taps take ~11-14 ps an output at fp32
# and bf16 alike (VibeVoice's 1 x 7 over [32, 32..128, 60k..240k] and Qwen3.5's on the H100, h100/timing/blind19 and
# blind18; LFM2's, Mamba's and ConvBERT's on the H200), 3x3 ones ~10, 7x7 ones ~38.
# Shapes drawn once from a fixed seed over the ranges networks use.
def _draw_depthwise_1d(r) -> tuple | None:
    n = r.choice((1, 4, 32))
    c = r.choice((32, 64, 128, 256, 768, 1536, 4096))
    length = r.choice((128, 512, 2048, 8192, 32768, 131072))
    k = r.choice((3, 4, 7, 9, 15, 31))
    s = r.choice((1, 1, 1, 2))
    bias = r.choice((0, 1))
    outs = n * c * length // s
    return (n, c, length, k, s, bias) if 1e4 <= outs <= 3e8 else None


def _draw_depthwise_2d(r) -> tuple | None:
    n = r.choice((1, 8, 32))
    c = r.choice((32, 64, 128, 256, 512, 1024))
    h = r.choice((7, 14, 28, 56, 112))
    kh, kw = r.choice(((3, 3), (5, 5), (7, 7), (9, 9), (11, 11), (13, 13), (1, 7), (7, 1), (1, 11), (11, 1)))
    s = r.choice((1, 1, 2))
    bias = r.choice((0, 1))
    outs = n * c * (h // s) ** 2
    return (n, c, h, kh, kw, s, bias) if 1e4 <= outs <= 2e8 else None


DEPTHWISE_1D_SHAPES = _seeded(17, 40, _draw_depthwise_1d)
DEPTHWISE_2D_SHAPES = _seeded(18, 40, _draw_depthwise_2d)


def _conv_depthwise_taps_cases(p: str) -> Iterator[OpCase]:
    fam = "conv_depthwise_taps"
    for n, c, length, k, s, bias in DEPTHWISE_1D_SHAPES:
        yield _conv_nd_case(p, fam, n, c, (length,), c, (k,), (s,), (1,), groups=c, bias=bool(bias))
    for n, c, h, kh, kw, s, bias in DEPTHWISE_2D_SHAPES:
        yield _conv_nd_case(p, fam, n, c, (h, h), c, (kh, kw), (s, s), (1, 1), groups=c, bias=bool(bias))


# run 17: softmax over an axis that is not the last (EfficientLoFTR's dual softmax over both axes of a [B, L0, L1]
# score matrix: PyTorch's cunn_SpatialSoftMaxForward over dim 1 of [32, 4800, 4800] takes 12.7 ms at fp32 on the H100,
# 5.8 ms at batch 1, h100/timing/blind19), each with the last-axis call of the same tensor as its control. (shape, dim)
SOFTMAX_AXIS_SHAPES = tuple((shape, d) for shape in ((1, 1200, 1200), (8, 1200, 1200), (32, 1200, 1200),
                                                    (1, 4800, 4800), (4, 4800, 4800), (32, 256, 4096),
                                                    (32, 4096, 256), (8, 12, 197, 197), (64, 64, 64))
                            for d in (1, -1))


def _softmax_axis_cases(p: str) -> Iterator[OpCase]:
    elt = ELT_BYTES[p]
    for shape, d in SOFTMAX_AXIS_SHAPES:
        numel = math.prod(shape)

        def setup(shape=shape, d=d):
            import torch

            x = _rand(shape, p)
            return lambda: torch.softmax(x, dim=d)
        yield OpCase("softmax", "softmax_axis", p, {"shape": list(shape), "dim": d}, 5.0 * numel,
                     2.0 * elt * numel, setup)


# run 17: row gathers (embedding lookups, a mixture's expert rows) from tables that the L2 holds or does not:
# Doge's expert-row gathers (64 rows of a [16384, 1024] table, 64 MB at fp32, for each of 16,384 tokens) take 1.15 ms
# a call at batch 32 on the H100 (h100/timing/blind19), where reading its 4.3 GB of rows from HBM would take longer
# than that alone. (table rows, row width, indices)
GATHER_ROWS = tuple((rows, d, idx) for rows, d in ((1024, 256), (16384, 64), (65536, 256), (262144, 64),
                                                    (50000, 768), (152064, 2048))
                    for idx in (4096, 65536, 524288))


def _gather_rows_cases(p: str) -> Iterator[OpCase]:
    elt = ELT_BYTES[p]
    for rows, d, n_idx in GATHER_ROWS:
        def setup(rows=rows, d=d, n_idx=n_idx):
            import torch

            table = _rand((rows, d), p)
            idx = torch.randint(0, rows, (n_idx,), device=gpu_common.DEVICE)
            return lambda: torch.nn.functional.embedding(idx, table)
        yield OpCase("embedding", "gather_rows", p, {"tokens": n_idx, "D": d, "vocab": rows}, 0.0,
                     float(2 * elt * n_idx * d + 8 * n_idx), setup)


# permute + contiguous over rank 2..5 tensors and every kind of permutation (innermost axis kept or moved), 64 K to
# 64 M elements: PyTorch's copy kernel runs a thread per output element with an offset calculator, so the time
# follows the elements more than the bytes (the transpose family, H200: ~5-7 ps an element at fp32 and fp16 alike
# when the innermost axis moves, ~3 when it stays)
def _draw_transpose(r) -> tuple | None:
    import itertools

    rank = r.choice((2, 3, 3, 4, 4, 4, 5))
    shape = tuple(r.choice((2, 3, 4, 7, 8, 12, 16, 32, 49, 64, 96, 128, 196, 256, 512, 768, 1024))
                  for _ in range(rank))
    perms = [q for q in itertools.permutations(range(rank)) if q != tuple(range(rank))]
    perm = r.choice(perms)
    moved = [i for i in range(rank) if shape[i] > 1]
    if [i for i in perm if shape[i] > 1] == moved:
        return None  # only size-1 dims move: a view
    numel = math.prod(shape)
    return (shape, perm) if 2 ** 16 <= numel <= 2 ** 26 else None


TRANSPOSE_SHAPES = _seeded(21, 40, _draw_transpose)


def _transpose_broad_cases(p: str) -> Iterator[OpCase]:
    for shape, perm in TRANSPOSE_SHAPES:
        kind = "inner_kept" if perm[-1] == len(shape) - 1 else "inner_moved"
        yield _permute_case(p, "transpose_broad", shape, perm, kind)


def _draw_conv3d(r) -> tuple | None:
    n = r.choice((1, 2, 8))
    cin = r.choice((3, 16, 32, 64, 128, 256, 512))
    cout = r.choice((32, 64, 128, 256, 512))
    t = r.choice((2, 4, 8, 16))
    h = r.choice((7, 14, 28, 56, 112))
    kt, kh = r.choice(((3, 3), (1, 3), (3, 1), (1, 1), (3, 7), (1, 7)))
    s = r.choice((1, 1, 2))
    st = s if t >= 4 and kt > 1 else 1
    work = 2.0 * n * cout * cin * kt * kh * kh * (t // st) * (h // s) ** 2
    return (n, cin, t, h, cout, kt, kh, st, s) if 1e7 <= work <= 6e11 else None


CONV3D_SHAPES = _seeded(7, 40, _draw_conv3d)


def _conv3d_cases(p: str) -> Iterator[OpCase]:
    for n, cin, t, h, cout, kt, kh, st, s in CONV3D_SHAPES:
        yield _conv_nd_case(p, "conv3d", n, cin, (t, h, h), cout, (kt, kh, kh), (st, s, s), (1, 1, 1))


def _draw_conv1d(r) -> tuple | None:
    n = r.choice((1, 4, 16))
    cin = r.choice((1, 16, 64, 128, 256, 512, 1024))
    cout = r.choice((64, 128, 256, 512, 1024))
    length = r.choice((64, 256, 1024, 4096, 16384))
    k = r.choice((1, 2, 3, 5, 7, 10))
    s = r.choice((1, 1, 1, 2, 4, 5)) if k > 1 else 1
    d = r.choice((1, 1, 2, 4, 16)) if s == 1 and k > 1 else 1
    work = 2.0 * n * cout * cin * k * length / s
    return (n, cin, length, cout, k, s, d) if 1e6 <= work <= 4e11 else None


CONV1D_SHAPES = _seeded(8, 48, _draw_conv1d)


def _conv1d_cases(p: str) -> Iterator[OpCase]:
    for n, cin, length, cout, k, s, d in CONV1D_SHAPES:
        yield _conv_nd_case(p, "conv1d", n, cin, (length,), cout, (k,), (s,), (d,))


def _draw_conv_large(r) -> tuple | None:
    n = r.choice((1, 2, 4))
    cin = r.choice((3, 8, 16, 32, 64, 128))
    cout = r.choice((8, 16, 32, 64, 128))
    h = r.choice((256, 384, 512, 768, 1024))
    k = r.choice((1, 3, 3, 5, 7))
    s = r.choice((1, 1, 2))
    work = 2.0 * n * cout * cin * k * k * (h // s) ** 2
    return (n, cin, h, cout, k, s) if work <= 8e11 else None


CONV_LARGE_SHAPES = _seeded(9, 40, _draw_conv_large)


def _conv_large_cases(p: str) -> Iterator[OpCase]:
    for n, cin, h, cout, k, s in CONV_LARGE_SHAPES:
        yield _conv_nd_case(p, "conv_large", n, cin, (h, h), cout, (k, k), (s, s), (1, 1))


# (N, C, H): pooling planes; each pooling kind runs on every one
POOL_PLANES = ((1, 64, 112), (32, 64, 112), (1, 128, 56), (32, 128, 56), (1, 256, 28), (32, 256, 28),
               (1, 512, 14), (32, 512, 14), (8, 320, 14), (8, 64, 56))
POOL_KINDS = (("avg_pool2d", 3, 1, 1), ("avg_pool2d", 2, 2, 0), ("max_pool2d", 3, 2, 1), ("max_pool2d", 2, 2, 0))


def _pool_broad_cases(p: str) -> Iterator[OpCase]:
    """Average pooling 3x3 stride 1 (count_include_pad=False: a pooling token mixer) and 2x2 stride 2, max pooling 3x3
    stride 2 and 2x2 stride 2, over planes of 7-112 pixels."""
    elt = ELT_BYTES[p]
    for n, c, h in POOL_PLANES:
        for op, k, s, pad in POOL_KINDS:
            ho = (h + 2 * pad - k) // s + 1

            def setup(n=n, c=c, h=h, op=op, k=k, s=s, pad=pad):
                import torch.nn.functional as F

                x = _rand((n, c, h, h), p)
                if op == "avg_pool2d":
                    return lambda: F.avg_pool2d(x, k, s, pad, count_include_pad=False)
                return lambda: F.max_pool2d(x, k, s, pad)
            yield OpCase(op, "pool_broad", p, {"N": n, "C": c, "H": h, "W": h, "k": k, "stride": s, "pad": pad},
                         float(n * c * ho * ho * k * k), float(elt * n * c * (h * h + ho * ho)), setup)


# (kind, batch, seq, input, hidden, layers) of bidirectional recurrent layers, timed in CUDA graphs like rnn_steps
RNN_BIDIR = tuple((kind, b, 32, h, h, layers) for kind in ("lstm", "gru") for h in (256, 512, 1024)
                  for b in (1, 32) for layers in (1, 2))


def _rnn_bidir_cases(p: str) -> Iterator[OpCase]:
    elt = ELT_BYTES[p]
    for kind, b, seq, inp, hid, layers in RNN_BIDIR:
        def setup(kind=kind, b=b, seq=seq, inp=inp, hid=hid, layers=layers):
            import torch

            cls = {"lstm": torch.nn.LSTM, "gru": torch.nn.GRU}[kind]
            mod = cls(inp, hid, num_layers=layers, batch_first=True, bidirectional=True).to(
                device=gpu_common.DEVICE, dtype=_dtype(p)).eval()
            mod.flatten_parameters()
            x = _rand((b, seq, inp), p)
            return lambda: mod(x)
        flops, nbytes = rnn_cost(kind, b, seq, inp, hid, layers, elt)
        yield OpCase(kind, "rnn_bidir", p, {"batch": b, "seq": seq, "input": inp, "hidden": hid, "layers": layers,
                                            "bidirectional": True}, 2 * flops, 2 * nbytes, setup)


DATA_SIZES = (1 << 16, 1 << 20, 1 << 23, 1 << 26)   # elements


def _data_cases(p: str) -> Iterator[OpCase]:
    """Broadcasts, strided inputs, casts, activations and data movement at 64 K - 64 M elements: a channel bias over
    NCHW, a last-dim scale, a transposed operand, casts to/from fp32, tanh/sigmoid/silu/hardswish/gelu(tanh),
    concatenation of two halves, zero padding, an embedding gather."""
    import math as _m

    elt = ELT_BYTES[p]
    for n in DATA_SIZES:
        side = int(_m.isqrt(n))
        c = 64
        hw = max(1, n // c)
        h = max(1, int(_m.isqrt(hw)))
        cases: list[tuple[str, dict, float, float, Callable[[], Callable[[], Any]]]] = []

        def bias(h=h, c=c):
            x, b = _rand((1, c, h, h), p), _rand((1, c, 1, 1), p)
            return lambda: x + b
        cases.append(("add_channel_bias", {"N": 1, "C": c, "H": h}, c * h * h, elt * (2 * c * h * h + c), bias))

        def scale(n=n):
            rows = max(1, n // 768)
            x, g = _rand((rows, 768), p), _rand((768,), p)
            return lambda: x * g
        rows = max(1, n // 768)
        cases.append(("mul_lastdim", {"rows": rows, "D": 768}, rows * 768, elt * (2 * rows * 768 + 768), scale))

        def transposed(side=side):
            x, y = _rand((side, side), p), _rand((side, side), p)
            return lambda: x.t() + y
        cases.append(("add_transposed", {"rows": side, "cols": side}, side * side, elt * 3 * side * side, transposed))

        def cast_from(n=n):
            import torch

            x = torch.randn((n,), device=gpu_common.DEVICE, dtype=torch.float32)
            target = torch.float64 if p in ("fp32", "tf32") else _dtype(p)
            return lambda: x.to(target)
        out_elt = 8 if p in ("fp32", "tf32") else elt
        cases.append(("cast_from_fp32", {"n": n, "to_bytes": out_elt}, n, (4 + out_elt) * n, cast_from))

        def cast_to(n=n):
            x = _rand((n,), p)
            import torch
            return lambda: x.to(torch.float32 if p not in ("fp32", "tf32") else torch.float16)
        to_elt = 4 if p not in ("fp32", "tf32") else 2
        cases.append(("cast_to", {"n": n, "to_bytes": to_elt}, n, (elt + to_elt) * n, cast_to))
        for act in ("tanh", "sigmoid", "silu", "hardswish", "gelu_tanh"):
            def unary(n=n, act=act):
                import torch
                import torch.nn.functional as F

                x = _rand((n,), p)
                fn = {"tanh": torch.tanh, "sigmoid": torch.sigmoid, "silu": F.silu, "hardswish": F.hardswish,
                      "gelu_tanh": lambda t: F.gelu(t, approximate="tanh")}[act]
                return lambda: fn(x)
            cases.append((act, {"n": n}, 4 * n, 2 * elt * n, unary))

        def cat(n=n):
            import torch

            half = max(1, n // 2 // 4096)
            a, b = _rand((half, 4096), p), _rand((half, 4096), p)
            return lambda: torch.cat([a, b], dim=0)
        cases.append(("cat", {"n": n}, 0.0, 2 * elt * n, cat))

        def pad(h=h, c=c):
            import torch.nn.functional as F

            x = _rand((1, c, h, h), p)
            return lambda: F.pad(x, (1, 1, 1, 1))
        cases.append(("pad", {"N": 1, "C": c, "H": h}, 0.0, elt * (c * h * h + c * (h + 2) ** 2), pad))

        def gather(n=n):
            import torch

            tokens = max(1, n // 768)
            table = _rand((50000, 768), p)
            idx = torch.randint(0, 50000, (tokens,), device=gpu_common.DEVICE)
            return lambda: torch.nn.functional.embedding(idx, table)
        tokens = max(1, n // 768)
        cases.append(("embedding", {"tokens": tokens, "D": 768, "vocab": 50000}, 0.0, 2 * elt * tokens * 768, gather))
        for op, params, flops, nbytes, setup in cases:
            yield OpCase(op, "data", p, {**params}, float(flops), float(nbytes), setup)


# (name, a's shape, b's shape) of a binary op whose output is their broadcast: the operand layouts networks write
BROADCAST_SHAPES = (
    ("same", (8192, 4096), (8192, 4096)),                       # no broadcast: the contiguous reference
    ("row_scalar_d64", (524288, 64), (524288, 1)),              # x - mean(x, -1, keepdim): a value per row
    ("row_scalar_d4096", (8192, 4096), (8192, 1)),
    ("row_scalar_d16384", (2048, 16384), (2048, 1)),
    ("lastdim_d64", (524288, 64), (64,)),                       # x * gamma: a vector over the last dim
    ("lastdim_d4096", (8192, 4096), (4096,)),
    ("channel_bias_c64", (32, 64, 128, 128), (1, 64, 1, 1)),    # NCHW bias / scale per channel
    ("channel_bias_c512", (32, 512, 32, 64), (1, 512, 1, 1)),
    ("mask4d_s512", (16, 8, 512, 512), (16, 1, 512, 512)),      # attention scores + a per-sample mask
    ("mask4d_heads_s128", (256, 8, 128, 128), (1, 8, 128, 128)),  # scores + a per-head bias (relative positions)
    ("mask5d_swin", (32, 64, 3, 49, 49), (1, 64, 1, 49, 49)),    # Swin's windows: scores + the shift mask
    ("outer_3d", (512, 1, 4096), (1, 16, 4096)),                # both operands broadcast (an outer product)
    ("mamba_6d", (4, 1, 128, 1, 8, 640), (4, 1, 128, 128, 8, 1)),  # the reference Mamba2 path's segment products
)


def _broadcast_cases(p: str) -> Iterator[OpCase]:
    """a * b for each of BROADCAST_SHAPES (8-64 M output elements: HBM-bound): the rate of PyTorch's broadcasting
    elementwise kernels by layout, against the contiguous reference (``same``). Bytes: each operand read once, the
    output written once."""
    import math as _m

    elt = ELT_BYTES[p]
    for name, sa, sb in BROADCAST_SHAPES:
        rank = max(len(sa), len(sb))
        pa, pb = (1,) * (rank - len(sa)) + sa, (1,) * (rank - len(sb)) + sb
        out = tuple(max(x, y) for x, y in zip(pa, pb))
        n_out = _m.prod(out)

        def setup(sa=sa, sb=sb):
            a, b = _rand(sa, p), _rand(sb, p)
            return lambda: a * b
        yield OpCase(name, "broadcast", p, {"a": list(sa), "b": list(sb), "out_numel": n_out}, float(n_out),
                     float(elt * (_m.prod(sa) + _m.prod(sb) + n_out)), setup)


def _draw_sdpa(r) -> tuple | None:
    b = r.choice((1, 2, 8, 32))
    heads = r.choice((4, 8, 12, 16))
    s = r.choice((49, 64, 128, 197, 256, 512, 1024, 2048, 4096))
    d = r.choice((32, 64, 64, 128))
    causal = r.random() < 0.3
    return (b, heads, s, d, causal) if b * heads * s * s <= 2 ** 31 else None


SDPA_SHAPES = _seeded(10, 40, _draw_sdpa)


def _sdpa_broad_cases(p: str) -> Iterator[OpCase]:
    """F.scaled_dot_product_attention as PyTorch dispatches it (flash / efficient / math by dtype and shape)."""
    return _sdpa_shape_cases(p, "sdpa_broad", SDPA_SHAPES)


def _sdpa_shape_cases(p: str, family: str, shapes) -> Iterator[OpCase]:
    """One F.scaled_dot_product_attention call of q, k, v [B, H, S, D] per (B, H, S, D, causal) of ``shapes``."""
    elt = ELT_BYTES[p]
    for b, h, s, d, causal in shapes:
        def setup(b=b, h=h, s=s, d=d, causal=causal):
            import torch.nn.functional as F

            q, k, v = (_rand((b, h, s, d), p) for _ in range(3))
            return lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        yield OpCase("sdpa", family, p, {"B": b, "H": h, "S": s, "D": d, "causal": causal},
                     *sdpa_cost(b, h, s, d, causal, elt), setup)

def _draw_sdpa_masked(r) -> tuple | None:
    b = r.choice((1, 8, 32))
    heads = r.choice((4, 6, 12, 16))
    s = r.choice((49, 64, 128, 196, 197, 256, 512, 1024, 2048))
    d = r.choice((32, 64, 64, 128))
    mask = r.choice(("bias_heads", "bias_heads", "batch", "full"))
    return (b, heads, s, d, mask) if b * heads * s * s <= 2 ** 30 else None


SDPA_MASKED_SHAPES = _seeded(11, 30, _draw_sdpa_masked)
# an additive float mask's shape per kind: a relative-position bias per head (BEiT, Swin, CoAtNet), a padding mask
# broadcast over the heads, a full per-(batch, head) mask (Conformer's)
SDPA_MASK_SHAPE = {"bias_heads": lambda b, h, s: (1, h, s, s), "batch": lambda b, h, s: (b, 1, s, s),
                   "full": lambda b, h, s: (b, h, s, s)}


def _sdpa_masked_cases(p: str) -> Iterator[OpCase]:
    """F.scaled_dot_product_attention with an explicit additive float mask (no fused flash kernel takes one:
    PyTorch runs cuDNN's or the memory-efficient kernel with a bias, or the math path): the kernel data the attention
    class needs beside sdpa_broad's unmasked calls (BEiT's biased attention ran at ~0.55x ViT-B/16's unmasked rate
    of the same shape in the network kernel tables). Bytes: q, k, v, the output and the mask once."""
    elt = ELT_BYTES[p]
    for b, h, s, d, kind in SDPA_MASKED_SHAPES:
        mshape = SDPA_MASK_SHAPE[kind](b, h, s)

        def setup(b=b, h=h, s=s, d=d, mshape=mshape):
            import torch.nn.functional as F

            q, k, v = (_rand((b, h, s, d), p) for _ in range(3))
            m = _rand(mshape, p)
            return lambda: F.scaled_dot_product_attention(q, k, v, attn_mask=m)
        flops, nbytes = sdpa_cost(b, h, s, d, False, elt)
        yield OpCase("sdpa", "sdpa_masked", p, {"B": b, "H": h, "S": s, "D": d, "mask": kind},
                     flops, nbytes + elt * math.prod(mshape), setup)

# ----------------------------------------------------------------------------- run 10: attention beyond the fitted
# range (sdpa_broad draws 49-4,096 tokens, most of them short): long causal and full prefill attention, 1,536-16,384
# tokens, and decode attention, one query token against a cache of 128-16,384 keys (a slice of a larger static cache, as
# a serving engine's CUDA graph runs it; grouped-query heads through enable_gqa). 16-bit only: the flash kernels.
def _draw_sdpa_long(r) -> tuple | None:
    b = r.choice((1, 2, 4, 8))
    heads = r.choice((8, 12, 16, 32))
    s = r.choice((1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384))
    d = r.choice((64, 128))
    causal = r.random() < 0.6
    return (b, heads, s, d, causal) if b * heads * s * s * d <= 2 ** 40 else None


def _draw_sdpa_decode(r) -> tuple | None:
    b = r.choice((1, 4, 16, 64))
    heads = r.choice((12, 16, 32))
    kv_heads = r.choice((heads, heads, heads // 4))
    ctx = r.choice((128, 512, 1024, 2048, 4096, 8192, 16384))
    d = r.choice((64, 128))
    return (b, heads, kv_heads, ctx, d) if b * kv_heads * ctx * d <= 2 ** 31 else None


SDPA_LONG_SHAPES = _seeded(12, 24, _draw_sdpa_long)
SDPA_DECODE_SHAPES = _seeded(13, 30, _draw_sdpa_decode)


def _sdpa_long_cases(p: str) -> Iterator[OpCase]:
    return _sdpa_shape_cases(p, "sdpa_long", SDPA_LONG_SHAPES)


def _sdpa_decode_cases(p: str) -> Iterator[OpCase]:
    """One query token per sequence against ``ctx`` cached keys and values (views of a cache 64 positions longer).
    FLOPs 4 B H ctx D; bytes: the keys and values once, the query and the output."""
    elt = ELT_BYTES[p]
    for b, h, kvh, ctx, d in SDPA_DECODE_SHAPES:
        def setup(b=b, h=h, kvh=kvh, ctx=ctx, d=d):
            import torch.nn.functional as F

            q = _rand((b, h, 1, d), p)
            kc, vc = (_rand((b, kvh, ctx + 64, d), p) for _ in range(2))
            k, v = kc[:, :, :ctx], vc[:, :, :ctx]
            gqa = {"enable_gqa": True} if kvh != h else {}
            return lambda: F.scaled_dot_product_attention(q, k, v, **gqa)
        yield OpCase("sdpa_kv", "sdpa_decode", p, {"B": b, "H": h, "KVH": kvh, "Sq": 1, "Skv": ctx, "D": d},
                     4.0 * b * h * ctx * d, float(elt * (2 * b * kvh * ctx * d + 2 * b * h * d)), setup)


# ----------------------------------------------------------------------------- run 8: the layer shapes where the second
# blind set (spent on 2026-12-04) was missed most, as kernel data for the next fit: 1-D convolution front ends over
# long sequences (wav2vec 2.0's feature encoder, its grouped positional convolution, Whisper's two convolutions),
# group norm with one group per channel over a long axis, and 9x9 / 7x7 depthwise convolutions on 768 channels
# (ConvMixer). Batch 1 and 8 (audio) or 1 and 32 (images).
FRONTEND_CONV1D = (  # (C_in, L_in, C_out, kernel, stride, groups)
    (1, 16000, 512, 10, 5, 1), (512, 3199, 512, 3, 2, 1), (512, 799, 512, 3, 2, 1), (512, 99, 512, 2, 2, 1),
    (768, 49, 768, 128, 1, 16), (80, 3000, 384, 3, 1, 1), (384, 3000, 384, 3, 2, 1))
FRONTEND_DEPTHWISE = ((768, 32, 9), (768, 32, 7), (384, 56, 7), (1536, 16, 9))  # (C, H, kernel)


def _frontends_cases(p: str) -> Iterator[OpCase]:
    elt = ELT_BYTES[p]
    for n in (1, 8):
        for cin, length, cout, k, st, g in FRONTEND_CONV1D:
            yield _conv_nd_case(p, "frontends", n, cin, (length,), cout, (k,), (st,), (1,), groups=g)
        for c, length in ((512, 3199), (768, 1500)):
            def setup(n=n, c=c, length=length):
                import torch.nn.functional as F

                x, w, b = _rand((n, c, length), p), _rand((c,), p), _rand((c,), p)
                return lambda: F.group_norm(x, c, w, b)
            yield OpCase("group_norm_1d", "frontends", p, {"N": n, "C": c, "L": length, "groups": c},
                         8.0 * n * c * length, float(elt * 2 * n * c * length), setup)
    for n in (1, 32):
        for c, h, k in FRONTEND_DEPTHWISE:
            yield _conv_nd_case(p, "frontends", n, c, (h, h), c, (k, k), (1, 1), (1, 1), groups=c)


# run 20: small linear layers, the under-filled GEMMs where cuBLAS splits K or picks small tiles (SLANeXt's fp32
# 256 x 512 x 512 product: 5.4 us on the H100, sm80 xmma split-K kernels, where one 64x64 SIMT tile per SM was
# priced at 20 us; 10-17% of the H200 tables' under-filled fp32 linears run split-K kernels at K <= 1024). (M, N, K)
# of x [M, K] @ W^T, drawn once from a fixed seed, plus SLANeXt's own.
def _draw_linear_small(r) -> tuple | None:
    m = r.choice((16, 32, 64, 128, 256, 512, 1024, 2048, 4096))
    n = r.choice((64, 128, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096))
    k = r.choice((64, 128, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 8192))
    return (m, n, k) if m * n <= 2 ** 22 else None


LINEAR_SMALL_SHAPES = ((256, 512, 512),) + _seeded(20, 59, _draw_linear_small)


def _linear_small_cases(p: str) -> Iterator[OpCase]:
    return _linear_cases(p, "linear_small", LINEAR_SMALL_SHAPES)


# run 20: depthwise transposed 1-D convolutions (X-Codec2's anti-aliased up-sampling: groups = channels = 1536, 12
# taps, stride 2; cuDNN's dgrad2d_grouped_direct_kernel at ~137 ps an output element at every precision on the H100,
# h100/timing/blind21). (N, C, L, taps, stride), drawn once from a fixed seed.
def _draw_conv_transpose_dw(r) -> tuple | None:
    n = r.choice((1, 4, 32))
    c = r.choice((64, 256, 768, 1536))
    length = r.choice((256, 1024, 4096, 16384))
    k = r.choice((4, 6, 12, 16))
    s = r.choice((2, 2, 4))
    outs = n * c * length * s
    return (n, c, length, k, s) if 1e5 <= outs <= 4e8 and k >= s else None


CONV_TRANSPOSE_DW_SHAPES = ((32, 1536, 250, 12, 2),) + _seeded(22, 19, _draw_conv_transpose_dw)


def _conv_transpose_dw_cases(p: str) -> Iterator[OpCase]:
    elt = ELT_BYTES[p]
    for n, c, length, k, s in CONV_TRANSPOSE_DW_SHAPES:
        pad = (k - s) // 2
        lo = (length - 1) * s - 2 * pad + k
        flops = 2.0 * n * c * length * k
        nbytes = float(elt * (n * c * length + c * k + n * c * lo))

        def setup(n=n, c=c, length=length, k=k, s=s, pad=pad):
            import torch.nn.functional as F

            x, wt = _rand((n, c, length), p), _rand((c, 1, k), p)
            return lambda: F.conv_transpose1d(x, wt, None, s, pad, 0, c)
        yield OpCase("conv_transpose1d", "conv_transpose_dw", p,
                     {"N": n, "C": c, "L": length, "K": c, "R": k, "stride": s, "pad": pad, "groups": c, "Lo": lo},
                     flops, nbytes, setup)


# run 22: thread-loop resizes (PyTorch's upsample_bilinear2d / upsample_bicubic2d_out_frame: a thread per output pixel
# looping over the N x C planes). The network tables put a bicubic plane at 0.6-4.7 us (YOLOS-S's same-size position-
# embedding resizes: 384 planes of 32 x 54 in 221 us, 4224 in 8.2 ms on the H200), what sets the spread unknown: planes,
# output pixels (threads), input plane size and scale drawn over networks' ranges. (mode, N, C, Hin, Win, Ho, Wo), drawn
# once from a fixed seed, YOLOS-S's two first.
def _draw_resize_loop(r) -> tuple | None:
    mode = r.choice(("bicubic", "bicubic", "bilinear"))
    n = r.choice((1, 1, 4, 11, 32))
    c = r.choice((16, 64, 192, 384, 768, 1024))
    ho, wo = r.choice((7, 14, 24, 32, 48, 64, 128, 256)), r.choice((7, 14, 32, 54, 64, 128, 256))
    scale = r.choice((0.5, 1.0, 1.0, 2.0, 4.0))
    hi, wi = max(2, round(ho / scale)), max(2, round(wo / scale))
    loop = n * c * (16 if mode == "bicubic" else 1)
    steps = loop * max(1.0, ho * wo / 65536)
    return (mode, n, c, hi, wi, ho, wo) if 1e3 <= steps <= 2e5 and n * c * ho * wo <= 2e8 else None


RESIZE_LOOP_SHAPES = (("bicubic", 1, 384, 32, 54, 32, 54), ("bicubic", 11, 384, 32, 54, 32, 54)) + _seeded(
    23, 46, _draw_resize_loop)


def _resize_loop_cases(p: str) -> Iterator[OpCase]:
    elt = ELT_BYTES[p]
    for mode, n, c, hi, wi, ho, wo in RESIZE_LOOP_SHAPES:
        out = n * c * ho * wo
        taps = 16 if mode == "bicubic" else 4

        def setup(n=n, c=c, hi=hi, wi=wi, ho=ho, wo=wo, mode=mode):
            import torch.nn.functional as F

            x = _rand((n, c, hi, wi), p)
            return lambda: F.interpolate(x, size=(ho, wo), mode=mode, align_corners=False)
        yield OpCase(f"resize_{mode}", "resize_loop", p, {"N": n, "C": c, "H": hi, "W": wi, "Ho": ho, "Wo": wo},
                     float(2 * taps * out), float(elt * (n * c * hi * wi + out)), setup)


FAMILIES: dict[str, Callable[[str], Iterator[OpCase]]] = {
    "gemm": _gemm_cases, "bmm": _bmm_cases, "conv_resnet50": _conv_resnet50_cases,
    "conv_depthwise": _conv_depthwise_cases, "conv_grouped": _conv_grouped_cases,
    "elementwise": _elementwise_cases, "reduction": _reduction_cases, "softmax": _softmax_cases,
    "norm": _norm_cases, "pool": _pool_cases, "resize": _resize_cases, "transpose": _transpose_cases,
    "sdpa": _sdpa_cases, "rnn": _rnn_cases, "gemm_8bit": _gemm_8bit_cases, "conv_sweep": _conv_sweep_cases,
    "conv_grouped_width": _conv_grouped_width_cases, "layer_norm_rows": _layer_norm_rows_cases,
    "bmm_unaligned": _bmm_unaligned_cases, "softmax_rows": _softmax_rows_cases, "rnn_steps": _rnn_steps_cases,
    "elementwise_mixed": _elementwise_mixed_cases,
    "conv_broad": _conv_broad_cases, "conv_transpose": _conv_transpose_cases, "gemm_broad": _gemm_broad_cases,
    "norm_broad": _norm_broad_cases,
    "conv3d": _conv3d_cases, "conv1d": _conv1d_cases, "conv_large": _conv_large_cases, "pool_broad": _pool_broad_cases,
    "rnn_bidir": _rnn_bidir_cases, "rnn_persist": _rnn_persist_cases, "data": _data_cases, "sdpa_broad": _sdpa_broad_cases,
    "broadcast": _broadcast_cases,
    "frontends": _frontends_cases, "sdpa_masked": _sdpa_masked_cases,
    "sdpa_long": _sdpa_long_cases, "sdpa_decode": _sdpa_decode_cases, "reduce_shapes": _reduce_shapes_cases,
    "group_norm_shapes": _group_norm_shapes_cases, "loop_kernels": _loop_kernels_cases,
    "short_rows": _short_rows_cases, "linear_thin": _linear_thin_cases,
    "conv_depthwise_taps": _conv_depthwise_taps_cases, "softmax_axis": _softmax_axis_cases,
    "gather_rows": _gather_rows_cases, "transpose_broad": _transpose_broad_cases,
    "linear_small": _linear_small_cases, "conv_transpose_dw": _conv_transpose_dw_cases,
    "resize_loop": _resize_loop_cases,
}


def enumerate_cases(families: tuple[str, ...], precisions: tuple[str, ...]) -> list[OpCase]:
    """All cases, family-major; tf32 only for tensor-core families (elsewhere identical to fp32); each
    family only at its own precisions (FAMILY_PRECISIONS)."""
    out = []
    for fam in families:
        for p in precisions:
            if p == "tf32" and fam not in TENSOR_CORE_FAMILIES:
                continue
            if p not in FAMILY_PRECISIONS.get(fam, FLOAT_PRECISIONS):
                continue
            out.extend(FAMILIES[fam](p))
    return out


def subsample(cases: list[OpCase], limit: int) -> list[OpCase]:
    """At most `limit` evenly spaced cases (all when limit <= 0)."""
    if limit <= 0 or len(cases) <= limit:
        return cases
    step = len(cases) / limit
    return [cases[int(i * step)] for i in range(limit)]


# ----------------------------------------------------------------------------- timing
@dataclass
class CaseTiming:
    time_s: float = math.nan
    p10_s: float = math.nan
    p90_s: float = math.nan
    n_timed: int = 0
    method: str = ""
    n_kernels: int | None = None
    error: str = ""


GRAPH_REPLAY_MIN_S = 2 * GRAPH_BELOW_S  # a timed graph replay's GPU time: far above the host's cost of launching it
GRAPH_MAX_CALLS = 1000


def _graph_of(fn: Callable[[], Any], k: int):
    from .gpu_common import capture_graph

    def calls():
        for _ in range(k):
            fn()
    return capture_graph(calls, warmup=1)[0]


def _long_graph(fn: Callable[[], Any], k: int):
    """(graph, k): a CUDA graph of k back-to-back calls whose replay lasts at least GRAPH_REPLAY_MIN_S. The first k
    comes from the eager call time, which holds the host's dispatch; a replay shorter than the host's ~25-30 us cost of
    launching it is timed by the host (each event pair waits for the launch: runs before 2026-12-07's run 20 timed
    calls of a few us at ~27 us / k, 7.0 us for a 32 x 768 x 768 fp16 product captured 4 times, 4.3 us 6 times), so k
    grows from the replay's own time until it is long enough."""
    from .gpu_common import time_each

    graph = _graph_of(fn, k)
    for _ in range(4):
        replay_s = statistics.median(time_each(graph.replay, 5))
        if replay_s >= GRAPH_REPLAY_MIN_S or k >= GRAPH_MAX_CALLS:
            break
        k = min(GRAPH_MAX_CALLS, int(math.ceil(k * 1.5 * GRAPH_REPLAY_MIN_S / max(replay_s, 1e-7))))
        del graph
        graph = _graph_of(fn, k)
    return graph, k


def time_case(fn: Callable[[], Any], target_s: float = TARGET_CASE_S, max_iters: int = 50) -> CaseTiming:
    """Median per-call GPU time of fn: CUDA-graph replays of K calls (_long_graph), or events per call when the call
    cannot be captured. Until run 20 (2026-12-07) only calls whose eager event time was under GRAPH_BELOW_S were
    captured (at any duration for the host-bound library calls of rnn_steps, elementwise_mixed, rnn_bidir and
    rnn_persist), and others were timed by events per call, which times the
    host's dispatch of a call of a few us (55-67 us for fp32 linear layers whose cuBLAS call is slow on the host)."""
    from .gpu_common import time_each

    fn()
    sync()
    est = summarize(time_each(fn, 3))["median_s"]
    k = max(1, min(50, int(math.ceil(2 * GRAPH_BELOW_S / max(est, 1e-7)))))
    try:
        graph, k = _long_graph(fn, k)
        n = int(max(10, min(max_iters, target_s / max(est * k, 1e-7))))
        times = [t / k for t in time_each(graph.replay, n)]
        st = summarize(times)
        return CaseTiming(st["median_s"], st["p10_s"], st["p90_s"], n, f"graph_x{k}")
    except Exception as e:  # noqa: BLE001 - not capturable: fall back to events per call
        print(f"    graph capture failed ({type(e).__name__}: {str(e)[:120]}): timed by events", file=sys.stderr)
        sync()
    n = int(max(5, min(max_iters, target_s / max(est, 1e-7))))
    st = summarize(time_each(fn, n))
    return CaseTiming(st["median_s"], st["p10_s"], st["p90_s"], n, "events")


MAIN_KERNEL_CHARS = 80  # of the longest kernel's name kept in a row (which library path ran the call)


def count_kernels(setups: list[tuple[int, Callable[[], Any]]]) -> dict[int, tuple[int, str]]:
    """One profiler pass: (kernels launched by one call, the longest one's name) of each fn (keyed by case index)."""
    from torch.profiler import ProfilerActivity, profile, record_function

    from .kernel_table import enclosing_range, is_memop, launched_kernels

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for idx, fn in setups:
            with record_function(f"case::{idx}"):
                fn()
        sync()
    counts = {idx: 0 for idx, _ in setups}
    longest: dict[int, tuple[float, str]] = {}
    for op, name, dur, _start in launched_kernels(prof):
        rng = enclosing_range(op, "case::")
        if rng is not None and not is_memop(name):
            idx = int(rng.split("::")[1])
            counts[idx] += 1
            if dur > longest.get(idx, (-1.0, ""))[0]:
                longest[idx] = (dur, name[:MAIN_KERNEL_CHARS])
    return {idx: (n, longest.get(idx, (0.0, ""))[1]) for idx, n in counts.items()}


def _short(exc: BaseException) -> str:
    msg = f"{type(exc).__name__}: {exc}"
    return msg[:300]


def run_family(cases: list[OpCase], budget: Budget, count: bool) -> list[dict]:
    """Time every case of one family (errors per case recorded), then count kernels in one pass."""
    import torch

    from .gpu_common import set_precision_flags

    rows, fns, held_bytes = [], [], 0.0
    for idx, case in enumerate(cases):
        row = {"op": case.op, "family": case.family, "precision": case.precision,
               "params": json.dumps(case.params, separators=(",", ":")), "flops": case.flops,
               "bytes": case.bytes}
        if budget.over():
            row.update(error="skipped: over budget")
            rows.append(row)
            continue
        try:
            set_precision_flags(case.precision)
            with torch.inference_mode():
                fn = case.setup()
                t = time_case(fn)
            row.update(time_s=t.time_s, p10_s=t.p10_s, p90_s=t.p90_s, n_timed=t.n_timed, method=t.method)
            if count:
                fns.append((idx, case.precision, fn))
                held_bytes += case.bytes
        except Exception as exc:  # noqa: BLE001
            row.update(error=_short(exc))
            if "out of memory" in str(exc).lower():
                torch.cuda.empty_cache()
        rows.append(row)
        if count and (len(fns) >= 40 or held_bytes > 16e9):   # bound what the count pass holds
            _count_into(rows, fns)
            fns, held_bytes = [], 0.0
    if count and fns:
        _count_into(rows, fns)
    torch.cuda.empty_cache()
    return rows


def _count_into(rows: list[dict], fns: list[tuple[int, str, Callable[[], Any]]]) -> None:
    import torch

    from .gpu_common import set_precision_flags

    by_prec: dict[str, list[tuple[int, Callable[[], Any]]]] = {}
    for idx, prec, fn in fns:
        by_prec.setdefault(prec, []).append((idx, fn))
    for prec, items in by_prec.items():
        try:
            set_precision_flags(prec)
            with torch.inference_mode():
                for idx, (n, name) in count_kernels(items).items():
                    rows[idx]["n_kernels"] = n
                    rows[idx]["main_kernel"] = name
        except Exception as exc:  # noqa: BLE001
            for idx, _ in items:
                rows[idx]["error"] = (rows[idx].get("error", "") + f" [count] {_short(exc)}").strip()


def append_csv(path: Path, rows: list[dict]) -> None:
    new = not path.exists()
    with path.open("a", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=CSV_COLUMNS, extrasaction="ignore")
        if new:
            w.writeheader()
        w.writerows(rows)


def summary_table(rows: list[dict]) -> str:
    """Per family x precision: cases, errors, best achieved TFLOP/s and TB/s."""
    agg: dict[tuple[str, str], dict[str, float]] = {}
    for r in rows:
        a = agg.setdefault((r["family"], r["precision"]), {"n": 0, "err": 0, "tflops": 0.0, "tbs": 0.0, "sum_s": 0.0})
        a["n"] += 1
        t = r.get("time_s")
        if r.get("error") or not t or not math.isfinite(t):
            a["err"] += 1
            continue
        a["tflops"] = max(a["tflops"], r["flops"] / t / 1e12)
        a["tbs"] = max(a["tbs"], r["bytes"] / t / 1e12)
        a["sum_s"] += t
    lines = [f"{'family':15s} {'prec':4s} {'cases':>5s} {'err':>4s} {'maxTFLOP/s':>10s} {'maxTB/s':>8s}"]
    for (fam, p), a in agg.items():
        lines.append(f"{fam:15s} {p:4s} {a['n']:5d} {a['err']:4d} {a['tflops']:10.1f} {a['tbs']:8.2f}")
    return "\n".join(lines)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python3 -m calibration.networks.microbench", description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True)
    p.add_argument("--families", default=",".join(FAMILIES), help="comma list of: " + ",".join(FAMILIES))
    p.add_argument("--precisions", default=",".join(PRECISIONS))
    p.add_argument("--max-seconds", type=float, default=0.0, help="stop cleanly after this (0 = no limit)")
    p.add_argument("--no-kernel-count", action="store_true", help="skip the profiler pass per family")
    p.add_argument("--per-family-limit", type=int, default=0,
                   help="time at most N evenly spaced cases per family (0 = all; for smoke tests)")
    p.add_argument("--list", action="store_true", help="print the case count per family and exit")
    p.add_argument("--dry-run-cpu", action="store_true", help="exercise the code on CPU (numbers meaningless)")
    a = p.parse_args(argv)
    a.families = tuple(t.strip() for t in a.families.split(",") if t.strip())
    a.precisions = tuple(t.strip() for t in a.precisions.split(",") if t.strip())
    bad = [f for f in a.families if f not in FAMILIES] + [x for x in a.precisions if x not in PRECISIONS]
    if bad:
        p.error(f"unknown families/precisions: {bad}")
    return a


def main(argv: list[str] | None = None) -> int:
    import warnings

    warnings.filterwarnings("ignore")
    a = parse_args(argv)
    if a.list:
        for fam in a.families:
            print(f"{fam:15s} {len(enumerate_cases((fam,), a.precisions)):5d}")
        return 0
    import torch

    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    csv_path = out / "microbench.csv"
    csv_path.unlink(missing_ok=True)
    command = " ".join(["python3", "-m", "calibration.networks.microbench", *(argv if argv is not None else sys.argv[1:])])
    gpu_common.use_device("cpu" if a.dry_run_cpu else "cuda")
    if not a.dry_run_cpu and not torch.cuda.is_available():
        print("ERROR: CUDA not available")
        return 1
    (out / "microbench_env.json").write_text(json.dumps(environment(command), indent=1, default=str))
    budget = Budget(a.max_seconds)
    all_rows: list[dict] = []
    for fam in a.families:
        cases = subsample(enumerate_cases((fam,), a.precisions), a.per_family_limit)
        t0 = time.perf_counter()
        rows = run_family(cases, budget, count=not a.no_kernel_count)
        append_csv(csv_path, rows)
        all_rows += rows
        print(f"  {fam:15s} {len(rows):4d} cases {time.perf_counter() - t0:6.1f}s  "
              f"errors {sum(1 for r in rows if r.get('error'))}", flush=True)
    print(summary_table(all_rows))
    print(f"elapsed {budget.elapsed_s():.0f} s, {len(all_rows)} rows -> {csv_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
