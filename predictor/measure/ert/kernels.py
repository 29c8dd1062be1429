"""CUDA C++ sources of the ERT kernels, compiled at run time by CuPy (NVRTC).

Pure Python: this module only builds source strings and describes the kernels; ``load_module``
imports CuPy lazily. Every kernel is ``extern "C"`` (no name mangling), so ``RawModule.get_function``
takes the plain name. Each family is a separate module, so one compile error costs one family.

Bandwidth kernels (ERT style: the trials loop runs INSIDE the kernel, around a grid-stride loop):
- ``ert_rmw_<t>``: A[i] = A[i] * 0.5 + 0.8 (read-modify-write; 2 accesses of sizeof(T) per element
  per trial; the canonical ERT kernel is the fp32 one).
- ``ert_copy_<t>``: ping-pong copy, trial j copies A->B (even j) or B->A (odd j); working set 2n.
- ``ert_read_<t>``: sums every element into registers; one store per thread at the end, guarded by
  a comparison with a run-time sentinel the sum never equals, so the loads cannot be removed.
- ``ert_l1_read_fp32x4`` (block-local): how L1 is measured. Each block owns a private slice of the
  array and re-reads it ``ntrials`` times through the read-only/L1 path (``__ldg``), so after the
  first trial an SM's loads hit its own L1 as long as the slices of the blocks resident on it fit
  in L1 (4 blocks of 512 threads per SM, held by ``__launch_bounds__``). Growing the slice walks
  L1 -> L2 -> HBM. It measures L1 *load* bandwidth only (L1 is write-through, stores go to L2).
Compute kernels (``compute_source``): the ERT FLOPs-per-element sweep with ``k`` independent
accumulator chains (ILP) and ``rounds`` unrolled rounds; results are stored so nothing folds away.
WMMA kernel: 16x16x16 half inputs, float accumulation, register-resident fragments.
Empty kernel: launch overhead.
"""
from __future__ import annotations

from dataclasses import dataclass

COMPILE_OPTIONS = ("-std=c++17",)

# (C++ storage type, bytes per element) of the bandwidth kernels
BW_TYPES = {"fp32": ("float", 4), "fp32x4": ("float4", 16)}
BW_VARIANTS = ("rmw", "copy", "read")

_BW_COMMON = r"""
__device__ __forceinline__ float ert_rmw1(float a) { return a * 0.5f + 0.8f; }
__device__ __forceinline__ float4 ert_rmw1(float4 a) {
    return make_float4(a.x * 0.5f + 0.8f, a.y * 0.5f + 0.8f, a.z * 0.5f + 0.8f, a.w * 0.5f + 0.8f);
}
__device__ __forceinline__ float ert_hsum(float a) { return a; }
__device__ __forceinline__ float ert_hsum(float4 a) { return (a.x + a.y) + (a.z + a.w); }

extern "C" __global__ void ert_empty() {}
"""

_BW_TEMPLATE = r"""
extern "C" __global__ void __launch_bounds__(256, 8)
ert_rmw_{t}({T}* A, long long n, int ntrials) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    const long long start = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    for (int j = 0; j < ntrials; ++j) {
        for (long long i = start; i < n; i += stride) {
            A[i] = ert_rmw1(A[i]);
        }
    }
}

extern "C" __global__ void __launch_bounds__(256, 8)
ert_copy_{t}({T}* A, {T}* B, long long n, int ntrials) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    const long long start = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    for (int j = 0; j < ntrials; ++j) {
        const {T}* src = (j & 1) ? B : A;
        {T}* dst = (j & 1) ? A : B;
        for (long long i = start; i < n; i += stride) {
            dst[i] = src[i];
        }
    }
}

extern "C" __global__ void __launch_bounds__(256, 8)
ert_read_{t}(const {T}* A, long long n, int ntrials, float* out, float sentinel) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    const long long start = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    float s0 = 0.0f, s1 = 0.0f;
    for (int j = 0; j < ntrials; ++j) {
        long long i = start;
        for (; i + stride < n; i += 2 * stride) {
            s0 += ert_hsum(A[i]);
            s1 += ert_hsum(A[i + stride]);
        }
        if (i < n) s0 += ert_hsum(A[i]);
    }
    const float s = s0 + s1;
    if (s == sentinel) out[start] = s;
}
"""

_L1_SOURCE = r"""
extern "C" __global__ void __launch_bounds__(512, 4)
ert_l1_read_fp32x4(const float4* A, int slice, int ntrials, float* out, float sentinel) {
    const float4* base = A + (long long)blockIdx.x * slice;
    float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
    for (int j = 0; j < ntrials; ++j) {
        int i = threadIdx.x;
        for (; i + (int)blockDim.x < slice; i += 2 * (int)blockDim.x) {
            const float4 a = __ldg(base + i);
            const float4 b = __ldg(base + i + blockDim.x);
            s0 += a.x + a.y;
            s1 += a.z + a.w;
            s2 += b.x + b.y;
            s3 += b.z + b.w;
        }
        if (i < slice) {
            const float4 a = __ldg(base + i);
            s0 += a.x + a.y;
            s1 += a.z + a.w;
        }
    }
    const float s = (s0 + s1) + (s2 + s3);
    if (s == sentinel) out[(long long)blockIdx.x * blockDim.x + threadIdx.x] = s;
}
"""

L1_KERNEL = "ert_l1_read_fp32x4"
L1_THREADS = 512
L1_BLOCKS_PER_SM = 4
L1_ELEMENT_BYTES = 16


def bandwidth_source() -> str:
    """One module with every global bandwidth kernel and the empty kernel."""
    parts = [_BW_COMMON]
    for t, (ctype, _) in BW_TYPES.items():
        parts.append(_BW_TEMPLATE.replace("{t}", t).replace("{T}", ctype))
    return "\n".join(parts)


def l1_source() -> str:
    return _L1_SOURCE


def bandwidth_kernel_name(variant: str, dtype: str) -> str:
    if variant not in BW_VARIANTS or dtype not in BW_TYPES:
        raise ValueError(f"unknown bandwidth kernel {variant}/{dtype} "
                         f"(variants {BW_VARIANTS}, dtypes {tuple(BW_TYPES)})")
    return f"ert_{variant}_{dtype}"


# ---------------------------------------------------------------- compute (FLOPs-per-element sweep)

@dataclass(frozen=True)
class ComputeType:
    """How one precision is written in CUDA: element type, scalar type and its operations."""

    precision: str
    ctype: str
    header: str
    fma_flops: int  # FLOPs of one fused multiply-add on one element (half2: 2 lanes x 2)
    add_flops: int
    elem_bytes: int
    from_float: str  # C++ expression template turning float literal/variable {x} into ctype
    fma: str         # template over {a} {b} {c}: a*b+c
    add: str
    sub: str
    mul: str


COMPUTE_TYPES = {
    "fp64": ComputeType("fp64", "double", "", 2, 1, 8, "(double)({x})",
                        "fma({a}, {b}, {c})", "({a} + {b})", "({a} - {b})", "({a} * {b})"),
    "fp32": ComputeType("fp32", "float", "", 2, 1, 4, "({x})",
                        "fmaf({a}, {b}, {c})", "({a} + {b})", "({a} - {b})", "({a} * {b})"),
    "fp16": ComputeType("fp16", "__half2", "#include <cuda_fp16.h>\n", 4, 2, 4,
                        "__float2half2_rn({x})", "__hfma2({a}, {b}, {c})", "__hadd2({a}, {b})",
                        "__hsub2({a}, {b})", "__hmul2({a}, {b})"),
    "bf16": ComputeType("bf16", "__nv_bfloat162", "#include <cuda_bf16.h>\n", 4, 2, 4,
                        "__float2bfloat162_rn({x})", "__hfma2({a}, {b}, {c})", "__hadd2({a}, {b})",
                        "__hsub2({a}, {b})", "__hmul2({a}, {b})"),
}
MAX_CHAINS = 8


@dataclass(frozen=True)
class ComputeKernel:
    """One point of the FLOPs sweep: ``chains`` independent accumulators x ``rounds`` rounds.

    nominal_flops: ERT_FLOPS-style count of the chained ops per element (chains*rounds*op FLOPs);
    flops_per_element: exact count including the combine adds (and, for add kernels, the final
    scaling multiply) that keep the stored value meaningful.
    """

    name: str
    precision: str
    op: str  # "fma" | "add"
    chains: int
    rounds: int
    nominal_flops: int
    flops_per_element: int
    elem_bytes: int

    @property
    def bytes_per_element(self) -> int:
        """Bytes moved per element per trial: one load and one store."""
        return 2 * self.elem_bytes


def compute_kernel(precision: str, op: str, nominal_flops: int) -> ComputeKernel:
    """The kernel for ``nominal_flops`` per element (a power-of-two multiple of one op's FLOPs)."""
    ct = COMPUTE_TYPES[precision]
    if op not in ("fma", "add"):
        raise ValueError(f"op must be 'fma' or 'add', not {op!r}")
    op_flops = ct.fma_flops if op == "fma" else ct.add_flops
    ops = nominal_flops // op_flops
    if ops < 1 or ops * op_flops != nominal_flops or ops & (ops - 1):
        raise ValueError(f"{precision}/{op}: nominal FLOPs {nominal_flops} is not a power-of-two "
                         f"multiple of {op_flops}")
    chains = min(MAX_CHAINS, ops)
    rounds = ops // chains
    mul_flops = ct.add_flops  # a multiply is one op per lane, like an add
    extra = (chains - 1) * ct.add_flops + (mul_flops if op == "add" and chains > 1 else 0)
    return ComputeKernel(name=f"ert_{op}_{precision}_f{nominal_flops}", precision=precision, op=op,
                         chains=chains, rounds=rounds, nominal_flops=nominal_flops,
                         flops_per_element=nominal_flops + extra, elem_bytes=ct.elem_bytes)


def sweep_kernels(precision: str, op: str, max_nominal_flops: int = 1024,
                  step: int = 2) -> tuple[ComputeKernel, ...]:
    """Kernels from one op per element up to ``max_nominal_flops``, multiplying by ``step``."""
    ct = COMPUTE_TYPES[precision]
    f = ct.fma_flops if op == "fma" else ct.add_flops
    out = []
    while f <= max_nominal_flops:
        out.append(compute_kernel(precision, op, f))
        f *= step
    return tuple(out)


def _compute_kernel_source(ct: ComputeType, k: ComputeKernel) -> str:
    T = ct.ctype
    lines = [f'extern "C" __global__ void {k.name}({T}* A, long long n, int ntrials, float h_in) {{',
             "    const long long stride = (long long)gridDim.x * blockDim.x;",
             "    const long long start = (long long)blockIdx.x * blockDim.x + threadIdx.x;"]
    if k.op == "fma":
        lines.append(f"    const {T} h = {ct.from_float.format(x='h_in')};")
    for c in range(k.chains):
        lines.append(f"    const {T} c{c} = {ct.from_float.format(x=f'{0.01 * (c + 1):.2f}f')};")
    if k.op == "add" and k.chains > 1:
        lines.append(f"    const {T} inv = {ct.from_float.format(x=f'{1.0 / k.chains!r}f')};")
    lines += ["    for (int j = 0; j < ntrials; ++j) {",
              "        for (long long i = start; i < n; i += stride) {",
              f"            const {T} x = A[i];"]
    for c in range(k.chains):
        lines.append(f"            {T} a{c} = x;")
    lines += ["#pragma unroll",
              f"            for (int r = 0; r < {k.rounds}; ++r) {{"]
    for c in range(k.chains):
        if k.op == "fma":  # a <- a*h + c: contracts towards c/(1-h), stays finite
            expr = ct.fma.format(a=f"a{c}", b="h", c=f"c{c}")
            lines.append(f"                a{c} = {expr};")
        else:  # alternate +c / -c so the value stays bounded; FP rounding forbids folding
            plus = ct.add.format(a=f"a{c}", b=f"c{c}")
            minus = ct.sub.format(a=f"a{c}", b=f"c{c}")
            lines.append(f"                a{c} = (r & 1) ? {minus} : {plus};")
    lines.append("            }")
    acc = [f"a{c}" for c in range(k.chains)]
    while len(acc) > 1:  # pairwise tree: chains-1 adds
        nxt = [ct.add.format(a=acc[i], b=acc[i + 1]) for i in range(0, len(acc) - 1, 2)]
        if len(acc) % 2:
            nxt.append(acc[-1])
        acc = nxt
    result = acc[0]
    if k.op == "add" and k.chains > 1:
        result = ct.mul.format(a=result, b="inv")
    lines += [f"            A[i] = {result};", "        }", "    }", "}", ""]
    return "\n".join(lines)


def _init_source(ct: ComputeType) -> str:
    T = ct.ctype
    val = ct.from_float.format(x="0.5f + 1.0e-3f * (float)(i % 7)")
    return (f'extern "C" __global__ void ert_init_{ct.precision}({T}* A, long long n) {{\n'
            "    const long long stride = (long long)gridDim.x * blockDim.x;\n"
            "    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; "
            "i += stride) {\n"
            f"        A[i] = {val};\n"
            "    }\n}\n")


def compute_source(precision: str, kernels: tuple[ComputeKernel, ...]) -> str:
    """One module per precision: its init kernel and every sweep kernel given."""
    ct = COMPUTE_TYPES[precision]
    parts = [ct.header, _init_source(ct)]
    parts += [_compute_kernel_source(ct, k) for k in kernels]
    return "\n".join(parts)


# ---------------------------------------------------------------- tensor cores (WMMA)

WMMA_KERNEL = "ert_wmma_fp16_f32"
WMMA_CHAINS = 4
WMMA_FLOPS_PER_MMA = 2 * 16 * 16 * 16  # 8192: one 16x16x16 multiply-accumulate
WMMA_THREADS = 256

_WMMA_SOURCE = r"""
#include <cuda_fp16.h>
#include <mma.h>
using namespace nvcuda;

extern "C" __global__ void __launch_bounds__(256)
ert_wmma_fp16_f32(const __half* A, const __half* B, float* C, int iters) {
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> a;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> b;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> c0, c1, c2, c3;
    wmma::load_matrix_sync(a, A, 16);
    wmma::load_matrix_sync(b, B, 16);
    wmma::fill_fragment(c0, 0.0f);
    wmma::fill_fragment(c1, 1.0f);
    wmma::fill_fragment(c2, 2.0f);
    wmma::fill_fragment(c3, 3.0f);
    for (int it = 0; it < iters; ++it) {
        wmma::mma_sync(c0, a, b, c0);
        wmma::mma_sync(c1, a, b, c1);
        wmma::mma_sync(c2, a, b, c2);
        wmma::mma_sync(c3, a, b, c3);
    }
    for (int t = 0; t < c0.num_elements; ++t) {
        c0.x[t] = (c0.x[t] + c1.x[t]) + (c2.x[t] + c3.x[t]);
    }
    const long long warp = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    wmma::store_matrix_sync(C + warp * 256, c0, 16, wmma::mem_row_major);
}
"""


def wmma_source() -> str:
    return _WMMA_SOURCE


# ---------------------------------------------------------------- loading

def load_module(source: str):
    """Compile ``source`` with CuPy's NVRTC (CuPy picks the arch); returns a ``cupy.RawModule``.

    Compilation happens lazily on the first ``get_function``; errors surface there.
    """
    import cupy as cp

    return cp.RawModule(code=source, options=COMPILE_OPTIONS)


def all_sources(max_nominal_flops: int = 1024) -> dict[str, str]:
    """Every module's source, keyed by family; for compile checks (e.g. ``nvcc -arch=sm_90``)."""
    out = {"bandwidth": bandwidth_source(), "l1": l1_source(), "wmma": wmma_source()}
    for p in COMPUTE_TYPES:
        ks = sweep_kernels(p, "fma", max_nominal_flops) + sweep_kernels(p, "add", max_nominal_flops)
        out[f"compute_{p}"] = compute_source(p, ks)
    return out
