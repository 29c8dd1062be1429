"""Tensor-core ceilings: large library GEMMs (cuBLAS through CuPy; fp8 through PyTorch) and an
ERT-deep-learning-style WMMA kernel.

Each case is measured independently: a failure records ``error`` and the others still run.
FLOPs = 2*m*n*k (int8: integer ops counted the same way). Ceilings use the MEDIAN of the timed
runs (after warm-up) of random, non-zero data. The library GEMM, not the WMMA kernel, is the
ceiling the profile uses: it is what real networks reach (cuBLAS uses Hopper's warpgroup MMA;
WMMA compiles to the older mma.sync path, which tops out lower on sm_90).
Ignores: cuBLAS heuristics may pick different kernels on other shapes; power/clock throttling over
long runs (these runs are short).
"""
from __future__ import annotations

import statistics

import numpy as np

from . import kernels as K
from .device import gpu_info, import_cupy
from .timing import Deadline, event_time_s, resident_blocks_per_sm, time_trials

# cudaDataType_t (library_types.h) and cublasComputeType_t / cublasOperation_t (cublas_api.h)
CUDA_R_32F, CUDA_R_64F, CUDA_R_16F, CUDA_R_8I, CUDA_R_32I, CUDA_R_16BF = 0, 1, 2, 3, 10, 14
COMPUTE_32F, COMPUTE_32F_FAST_TF32, COMPUTE_64F, COMPUTE_32I = 68, 77, 70, 72
OP_N, OP_T = 0, 1
GEMM_DEFAULT = -1
POINTER_MODE_HOST = 0

# name: (precision, unit, A/B type, C type, compute type, transa, host scalar dtype, note)
GEMMEX_CASES = {
    "fp16": ("fp16", "tensor", CUDA_R_16F, CUDA_R_16F, COMPUTE_32F, OP_N, np.float32,
             "fp16 in/out, fp32 accumulate"),
    "bf16": ("bf16", "tensor", CUDA_R_16BF, CUDA_R_16BF, COMPUTE_32F, OP_N, np.float32,
             "bf16 in/out, fp32 accumulate"),
    "tf32": ("tf32", "tensor", CUDA_R_32F, CUDA_R_32F, COMPUTE_32F_FAST_TF32, OP_N, np.float32,
             "fp32 in/out, CUBLAS_COMPUTE_32F_FAST_TF32"),
    "int8": ("int8", "tensor", CUDA_R_8I, CUDA_R_32I, COMPUTE_32I, OP_T, np.int32,
             "int8 in, int32 out, CUBLAS_COMPUTE_32I, A transposed (T,N)"),
    "fp64": ("fp64", "tensor", CUDA_R_64F, CUDA_R_64F, COMPUTE_64F, OP_N, np.float64,
             "DGEMM (fp64 tensor cores on sm_80+)"),
    "fp32_sgemm": ("fp32", "cuda", CUDA_R_32F, CUDA_R_32F, COMPUTE_32F, OP_N, np.float32,
                   "SGEMM without TF32: a cross-check of the fp32 CUDA-core ceiling"),
}


def _cublas():
    try:
        from cupy_backends.cuda.libs import cublas
    except ImportError:
        from cupy.cuda import cublas
    return cublas


def _random_matrix(cp, type_id: int, rows: int, cols: int):
    """Random non-zero-heavy data in the storage cuBLAS expects (bf16 as uint16 bit patterns)."""
    if type_id == CUDA_R_8I:
        return cp.random.randint(-64, 64, size=(rows, cols)).astype(cp.int8)
    x = cp.random.standard_normal((rows, cols), dtype=cp.float32)
    if type_id == CUDA_R_16F:
        return x.astype(cp.float16)
    if type_id == CUDA_R_16BF:
        return (x.view(cp.uint32) >> 16).astype(cp.uint16)
    if type_id == CUDA_R_64F:
        return x.astype(cp.float64)
    return x


def _out_matrix(cp, type_id: int, rows: int, cols: int):
    dtype = {CUDA_R_16F: cp.float16, CUDA_R_16BF: cp.uint16, CUDA_R_32F: cp.float32,
             CUDA_R_64F: cp.float64, CUDA_R_32I: cp.int32}[type_id]
    return cp.zeros((rows, cols), dtype=dtype)


def _result(name: str, precision: str, unit: str, method: str, m: int, n: int, k: int,
            times: list[float], note: str) -> dict:
    flops = 2.0 * m * n * k
    med = statistics.median(times)
    return {"case": name, "precision": precision, "unit": unit, "method": method, "note": note,
            "m": m, "n": n, "k": k, "flops": flops, "times_s": times, "median_time_s": med,
            "best_time_s": min(times), "flops_per_s": flops / med,
            "best_flops_per_s": flops / min(times), "error": None}


def gemmex_case(name: str, size: int = 8192, repeats: int = 10, warmup: int = 3) -> dict:
    """One cublasGemmEx measurement, C = op(A) B with square size x size x size (column-major)."""
    cp = import_cupy()
    cublas = _cublas()
    precision, unit, ab_type, c_type, compute, transa, scalar, note = GEMMEX_CASES[name]
    m = n = k = int(size)
    a = _random_matrix(cp, ab_type, k if transa == OP_T else m, m if transa == OP_T else k)
    b = _random_matrix(cp, ab_type, k, n)
    c = _out_matrix(cp, c_type, m, n)
    lda = k if transa == OP_T else m
    alpha = np.array(1, dtype=scalar)
    beta = np.array(0, dtype=scalar)
    handle = cp.cuda.device.get_cublas_handle()
    old_mode = cublas.getPointerMode(handle)
    cublas.setPointerMode(handle, POINTER_MODE_HOST)
    try:
        cublas.setStream(handle, cp.cuda.get_current_stream().ptr)

        def run() -> None:
            cublas.gemmEx(handle, transa, OP_N, m, n, k, alpha.ctypes.data, a.data.ptr, ab_type,
                          lda, b.data.ptr, ab_type, k, beta.ctypes.data, c.data.ptr, c_type, m,
                          compute, GEMM_DEFAULT)

        for _ in range(warmup):
            run()
        cp.cuda.runtime.deviceSynchronize()
        times = [event_time_s(cp, run) for _ in range(repeats)]
    finally:
        cublas.setPointerMode(handle, old_mode)
    return _result(name, precision, unit, "cublasGemmEx via cupy_backends", m, n, k, times, note)


def torch_cases(size: int = 8192, repeats: int = 10, warmup: int = 3) -> dict:
    """fp8 (e4m3 x e4m3 -> bf16, torch._scaled_mm on cuBLASLt) and a bf16 torch.matmul cross-check."""
    out: dict = {}
    try:
        import torch
    except Exception as e:
        reason = f"PyTorch not importable ({type(e).__name__}); fp8 needs cuBLASLt, not reachable from CuPy"
        return {"fp8": _error("fp8", "fp8", "tensor", reason),
                "bf16_torch": _error("bf16_torch", "bf16", "tensor", reason)}
    if not torch.cuda.is_available():
        reason = "torch.cuda.is_available() is False"
        return {"fp8": _error("fp8", "fp8", "tensor", reason),
                "bf16_torch": _error("bf16_torch", "bf16", "tensor", reason)}
    m = n = k = int(size)

    def time_torch(fn) -> list[float]:
        for _ in range(warmup):
            fn()
        torch.cuda.synchronize()
        times = []
        for _ in range(repeats):
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            fn()
            e.record()
            e.synchronize()
            times.append(s.elapsed_time(e) * 1e-3)
        return times

    try:
        a = torch.randn(m, k, device="cuda").to(torch.float8_e4m3fn)
        b = torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn).t()  # column-major operand
        one = torch.tensor(1.0, device="cuda", dtype=torch.float32)
        fast = {"use_fast_accum": True}
        try:
            torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16, **fast)
        except TypeError:
            fast = {}
        times = time_torch(lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one,
                                                    out_dtype=torch.bfloat16, **fast))
        out["fp8"] = _result("fp8", "fp8", "tensor", "torch._scaled_mm (cuBLASLt)", m, n, k, times,
                             f"e4m3 x e4m3 -> bf16, per-tensor scales, {fast or 'default accum'}")
        del a, b
    except Exception as e:
        out["fp8"] = _error("fp8", "fp8", "tensor", f"{type(e).__name__}: {e}")
    try:
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        y = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
        times = time_torch(lambda: torch.matmul(x, y))
        out["bf16_torch"] = _result("bf16_torch", "bf16", "tensor", "torch.matmul (cuBLAS)", m, n,
                                    k, times, "bf16 cross-check of the gemmEx value")
        del x, y
    except Exception as e:
        out["bf16_torch"] = _error("bf16_torch", "bf16", "tensor", f"{type(e).__name__}: {e}")
    try:
        torch.cuda.empty_cache()
    except Exception:
        pass
    return out


def wmma_case(min_time_s: float = 5e-3, repeats: int = 3) -> dict:
    """Own WMMA kernel: 16x16x16 half x half -> float, 4 independent accumulators per warp,
    register-resident fragments (no memory traffic in the loop)."""
    cp = import_cupy()
    gpu = gpu_info(cp)
    kernel = K.load_module(K.wmma_source()).get_function(K.WMMA_KERNEL)
    bps = resident_blocks_per_sm(cp, kernel, K.WMMA_THREADS, 4)
    grid = gpu.sm_count * bps
    warps = grid * K.WMMA_THREADS // 32
    a = (cp.random.standard_normal(256, dtype=cp.float32) * 0.05).astype(cp.float16)
    b = (cp.random.standard_normal(256, dtype=cp.float32) * 0.05).astype(cp.float16)
    c = cp.zeros(warps * 256, dtype=cp.float32)

    def run(iters: int) -> None:
        kernel((grid,), (K.WMMA_THREADS,), (a, b, c, np.int32(iters)))

    run(1)
    cp.cuda.runtime.deviceSynchronize()
    t = time_trials(cp, run, min_time_s=min_time_s, repeats=repeats)
    flops = float(warps) * t.trials * K.WMMA_CHAINS * K.WMMA_FLOPS_PER_MMA
    return {"case": "wmma_fp16", "precision": "fp16", "unit": "tensor",
            "method": "own WMMA kernel (mma.sync 16x16x16, fp32 accumulate)",
            "note": "ERT deep-learning extension style; NOT the profile ceiling", "grid": grid,
            "blocks_per_sm": bps, "iters": t.trials, "flops": flops, "times_s": list(t.times_s),
            "median_time_s": t.median_s, "best_time_s": t.best_s,
            "flops_per_s": flops / t.median_s, "best_flops_per_s": flops / t.best_s, "error": None}


def _error(name: str, precision: str, unit: str, reason: str) -> dict:
    return {"case": name, "precision": precision, "unit": unit, "flops_per_s": None,
            "error": reason[:500]}


def tensor_core_ceilings(size: int = 8192, repeats: int = 10, warmup: int = 3,
                         include_torch: bool = True, budget_s: float | None = None,
                         min_time_s: float = 5e-3) -> dict:
    """Every tensor-core case keyed by name; each is a result dict or one with ``error`` set."""
    cp = import_cupy()
    deadline = Deadline(budget_s)
    out: dict = {}
    for name in GEMMEX_CASES:
        precision, unit = GEMMEX_CASES[name][:2]
        if deadline.passed():
            out[name] = _error(name, precision, unit, "skipped: stage time budget spent")
            continue
        try:
            out[name] = gemmex_case(name, size, repeats, warmup)
        except Exception as e:
            out[name] = _error(name, precision, unit, f"{type(e).__name__}: {e}")
        finally:
            try:
                cp.get_default_memory_pool().free_all_blocks()
            except Exception:
                pass
    try:
        out["wmma_fp16"] = wmma_case(min_time_s=min_time_s)
    except Exception as e:
        out["wmma_fp16"] = _error("wmma_fp16", "fp16", "tensor", f"{type(e).__name__}: {e}")
    if include_torch and not deadline.passed():
        try:
            out.update(torch_cases(size, repeats, warmup))
        except Exception as e:
            out["fp8"] = _error("fp8", "fp8", "tensor", f"{type(e).__name__}: {e}")
    elif "fp8" not in out:
        out["fp8"] = _error("fp8", "fp8", "tensor",
                            "not measured: torch cases disabled or stage budget spent")
    return out
