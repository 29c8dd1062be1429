"""ERT drivers on the GPU (CuPy imported lazily): bandwidth, L1, FLOPs sweeps and launch overhead.

Every driver returns a plain JSON-able dict; a failure inside a driver is the caller's to record.
Bandwidths count the bytes the kernel's loads and stores ask for (rmw and copy: one read and one
write of each element per trial; read: one read), not what the memory system moved (no ECC,
no sector over-fetch, no write-allocate traffic). Times are CUDA-event times of one launch that
runs all trials in-kernel (see ``timing``).
"""
from __future__ import annotations

import functools
import statistics
import time

import numpy as np

from . import kernels as K
from .device import gpu_info, import_cupy
from .gemm import tensor_core_ceilings  # noqa: F401  (re-exported: the GEMM ceilings driver)
from .timing import Deadline, geometric_counts, grid_for, resident_blocks_per_sm, time_trials

BW_THREADS = 256
COMPUTE_THREADS = 256
_SENTINEL = np.float32(-1.2345e-30)  # the read kernels' sum never equals this (all data >= 1)


@functools.lru_cache(maxsize=None)
def _module(source: str):
    return K.load_module(source)


def _free_bytes(cp) -> int:
    try:
        free, _total = cp.cuda.runtime.memGetInfo()
        return int(free)
    except Exception:
        return 8 << 30


def _release(cp) -> None:
    try:
        cp.get_default_memory_pool().free_all_blocks()
    except Exception:
        pass


def _point(timing, **fields) -> dict:
    rec = dict(fields)
    rec.update({"trials": timing.trials, "time_s": timing.best_s, "median_time_s": timing.median_s,
                "times_s": list(timing.times_s)})
    return rec


def warm_up(seconds: float = 0.3, working_set_bytes: int = 256 << 20) -> dict:
    """Keep the GPU busy for ``seconds`` (rmw over HBM) so clocks leave idle before measuring."""
    cp = import_cupy()
    gpu = gpu_info(cp)
    kernel = _module(K.bandwidth_source()).get_function("ert_rmw_fp32")
    n = int(working_set_bytes) // 4
    a = cp.full(n, 1.0, dtype=cp.float32)
    blocks = gpu.sm_count * resident_blocks_per_sm(cp, kernel, BW_THREADS,
                                                   gpu.max_threads_per_sm // BW_THREADS)
    t0 = time.perf_counter()
    try:
        while time.perf_counter() - t0 < seconds:
            kernel((blocks,), (BW_THREADS,), (a, np.int64(n), np.int32(4)))
            cp.cuda.runtime.deviceSynchronize()
    finally:
        a = None
        _release(cp)
    return {"seconds": time.perf_counter() - t0, "working_set_bytes": n * 4}


def bandwidth_sweep(variant: str = "rmw", dtype: str = "fp32", *, min_bytes: float = 4096,
                    max_bytes: float = 4 << 30, growth: float = 1.1, min_time_s: float = 5e-3,
                    repeats: int = 3, budget_s: float | None = None) -> dict:
    """Bandwidth vs working set for one global kernel (grid-stride, trials in-kernel).

    working_set_bytes: bytes of the arrays touched (copy: both arrays).
    bandwidth_Bps = trials * bytes_per_trial / best time; bytes_per_trial = n * sizeof(T) * 2 for
    rmw and copy (one read + one write per element), n * sizeof(T) for read.
    The grid is one resident wave (occupancy API), fewer blocks when the data is smaller.
    """
    cp = import_cupy()
    gpu = gpu_info(cp)
    name = K.bandwidth_kernel_name(variant, dtype)
    elem = K.BW_TYPES[dtype][1]
    arrays = 2 if variant == "copy" else 1
    rw = 1 if variant == "read" else 2
    max_bytes = min(float(max_bytes), 0.45 * _free_bytes(cp))
    counts = geometric_counts(min_bytes, max_bytes, growth, elem * arrays)
    kernel = _module(K.bandwidth_source()).get_function(name)
    bps = resident_blocks_per_sm(cp, kernel, BW_THREADS, gpu.max_threads_per_sm // BW_THREADS)
    n_max = counts[-1]
    a = cp.full(n_max * elem // 4, 1.0, dtype=cp.float32)
    b = cp.full(n_max * elem // 4, 1.0, dtype=cp.float32) if variant == "copy" else None
    out = cp.zeros(gpu.sm_count * bps * BW_THREADS, dtype=cp.float32)

    def args(n: int, trials: int) -> tuple:
        if variant == "rmw":
            return (a, np.int64(n), np.int32(trials))
        if variant == "copy":
            return (a, b, np.int64(n), np.int32(trials))
        return (a, np.int64(n), np.int32(trials), out, _SENTINEL)

    deadline = Deadline(budget_s)
    points: list[dict] = []
    truncated = False
    try:
        kernel((1,), (BW_THREADS,), args(counts[0], 1))  # load the module before timing
        cp.cuda.runtime.deviceSynchronize()
        for n in counts:
            if deadline.passed():
                truncated = True
                break
            blocks = grid_for(n, BW_THREADS, gpu.sm_count, bps)

            def run(trials: int, n=n, blocks=blocks) -> None:
                kernel((blocks,), (BW_THREADS,), args(n, trials))

            t = time_trials(cp, run, min_time_s=min_time_s, repeats=repeats)
            bytes_per_trial = n * elem * rw
            points.append(_point(
                t, working_set_bytes=n * elem * arrays, n_elements=n, blocks=blocks,
                bytes_per_trial=bytes_per_trial,
                bandwidth_Bps=bytes_per_trial * t.trials / t.best_s,
                median_bandwidth_Bps=bytes_per_trial * t.trials / t.median_s))
    finally:
        a = b = out = None
        _release(cp)
    return {"kernel": name, "variant": variant, "dtype": dtype, "scope": "global",
            "element_bytes": elem, "accesses_per_element_per_trial": rw,
            "threads_per_block": BW_THREADS, "blocks_per_sm": bps, "sm_count": gpu.sm_count,
            "min_time_s": min_time_s, "repeats": repeats, "growth": growth,
            "truncated": truncated, "elapsed_s": deadline.elapsed_s(), "points": points}


def l1_sweep(*, min_slice_bytes: float = 2048, max_slice_bytes: float = 4 << 20,
             growth: float = 1.1, min_time_s: float = 5e-3, repeats: int = 3,
             budget_s: float | None = None) -> dict:
    """Block-local read sweep (``ert_l1_read_fp32x4``): each block re-reads its own slice.

    per_sm_bytes = slice * resident blocks per SM is what must fit in one SM's L1;
    working_set_bytes = slice * grid is the aggregate (comparable with the global sweeps).
    The kernel asks for the largest L1 carve-out (preferred shared-memory carveout 0%).
    Measures load bandwidth only; the first trial's misses are included in the time.
    """
    cp = import_cupy()
    gpu = gpu_info(cp)
    kernel = _module(K.l1_source()).get_function(K.L1_KERNEL)
    carveout = None
    try:
        kernel.preferred_shared_memory_carveout = 0
        carveout = 0
    except Exception as e:
        carveout = f"not set ({type(e).__name__}: {e})"[:200]
    bps = resident_blocks_per_sm(cp, kernel, K.L1_THREADS, K.L1_BLOCKS_PER_SM)
    bps = min(bps, K.L1_BLOCKS_PER_SM)
    grid = gpu.sm_count * bps
    e = K.L1_ELEMENT_BYTES
    max_slice_bytes = min(float(max_slice_bytes), 0.45 * _free_bytes(cp) / grid)
    slices = geometric_counts(min_slice_bytes, max_slice_bytes, growth, e)
    a = cp.full(grid * slices[-1] * e // 4, 1.0, dtype=cp.float32)
    out = cp.zeros(grid * K.L1_THREADS, dtype=cp.float32)
    deadline = Deadline(budget_s)
    points: list[dict] = []
    truncated = False
    try:
        kernel((grid,), (K.L1_THREADS,), (a, np.int32(slices[0]), np.int32(1), out, _SENTINEL))
        cp.cuda.runtime.deviceSynchronize()
        for s in slices:
            if deadline.passed():
                truncated = True
                break

            def run(trials: int, s=s) -> None:
                kernel((grid,), (K.L1_THREADS,),
                       (a, np.int32(s), np.int32(trials), out, _SENTINEL))

            t = time_trials(cp, run, min_time_s=min_time_s, repeats=repeats)
            bytes_per_trial = s * e * grid
            points.append(_point(
                t, slice_bytes=s * e, per_sm_bytes=s * e * bps, working_set_bytes=bytes_per_trial,
                blocks=grid, bytes_per_trial=bytes_per_trial,
                bandwidth_Bps=bytes_per_trial * t.trials / t.best_s,
                median_bandwidth_Bps=bytes_per_trial * t.trials / t.median_s))
    finally:
        a = out = None
        _release(cp)
    return {"kernel": K.L1_KERNEL, "variant": "read", "dtype": "fp32x4", "scope": "block-local",
            "element_bytes": e, "accesses_per_element_per_trial": 1,
            "threads_per_block": K.L1_THREADS, "blocks_per_sm": bps, "sm_count": gpu.sm_count,
            "carveout_percent": carveout, "min_time_s": min_time_s, "repeats": repeats,
            "growth": growth, "truncated": truncated, "elapsed_s": deadline.elapsed_s(),
            "points": points}


def compute_sweep(precision: str = "fp32", fma: bool = True, *, max_nominal_flops: int = 1024,
                  step: int = 2, working_set_bytes: float = 8 << 20, min_time_s: float = 5e-3,
                  repeats: int = 3, budget_s: float | None = None) -> dict:
    """The ERT FLOPs-per-element sweep on CUDA cores for one precision and op (FMA or add).

    Working set ``working_set_bytes`` (L2-resident by default) so the top of the sweep is
    compute-bound. flops_per_s = n * flops_per_element * trials / best time; peak = its max.
    fp16/bf16 work on packed pairs (half2: one __hfma2 = 4 FLOPs, one __hadd2 = 2 FLOPs).
    Ignores the integer/loop instructions, which share the issue slots (the peak is achieved, not
    theoretical).
    """
    cp = import_cupy()
    gpu = gpu_info(cp)
    op = "fma" if fma else "add"
    both = (K.sweep_kernels(precision, "fma", max_nominal_flops, step)
            + K.sweep_kernels(precision, "add", max_nominal_flops, step))
    mod = _module(K.compute_source(precision, both))
    ks = [k for k in both if k.op == op]
    elem = K.COMPUTE_TYPES[precision].elem_bytes
    n = max(1, int(working_set_bytes) // elem)
    a = cp.empty(n * elem // 4, dtype=cp.float32)
    init = mod.get_function(f"ert_init_{precision}")
    init((max(1, min(4096, -(-n // 256))),), (256,), (a, np.int64(n)))
    cp.cuda.runtime.deviceSynchronize()
    deadline = Deadline(budget_s)
    points: list[dict] = []
    truncated = False
    try:
        for k in ks:
            if deadline.passed():
                truncated = True
                break
            kern = mod.get_function(k.name)
            bps = resident_blocks_per_sm(cp, kern, COMPUTE_THREADS,
                                         gpu.max_threads_per_sm // COMPUTE_THREADS)
            blocks = grid_for(n, COMPUTE_THREADS, gpu.sm_count, bps)

            def run(trials: int, kern=kern, blocks=blocks) -> None:
                kern((blocks,), (COMPUTE_THREADS,),
                     (a, np.int64(n), np.int32(trials), np.float32(0.5)))

            run(1)  # load before timing
            t = time_trials(cp, run, min_time_s=min_time_s, repeats=repeats)
            points.append(_point(
                t, kernel=k.name, nominal_flops=k.nominal_flops,
                flops_per_element=k.flops_per_element, chains=k.chains, rounds=k.rounds,
                ai_flops_per_byte=k.flops_per_element / k.bytes_per_element, blocks=blocks,
                blocks_per_sm=bps,
                flops_per_s=n * k.flops_per_element * t.trials / t.best_s,
                median_flops_per_s=n * k.flops_per_element * t.trials / t.median_s,
                bandwidth_Bps=n * k.bytes_per_element * t.trials / t.best_s))
    finally:
        a = None
        _release(cp)
    peak = max((p["flops_per_s"] for p in points), default=None)
    return {"precision": precision, "op": op, "unit": "cuda", "n_elements": n,
            "element_bytes": elem, "working_set_bytes": n * elem,
            "threads_per_block": COMPUTE_THREADS, "min_time_s": min_time_s, "repeats": repeats,
            "truncated": truncated, "elapsed_s": deadline.elapsed_s(),
            "peak_flops_per_s": peak, "points": points}


def launch_overhead(n_launches: int = 2000, graph_kernels: int = 1000,
                    graph_replays: int = 5) -> dict:
    """Empty-kernel launch costs (1 block of 32 threads).

    eager_per_launch_s: CUDA-event time of ``n_launches`` back-to-back launches from Python / n;
      the GPU waits on the host here, so this is the host issue cost per launch (CuPy's Python
      overhead included), which is what an eager framework pays per kernel.
    graph_per_kernel_s: event time of replaying a CUDA graph of ``graph_kernels`` empty kernels,
      per kernel (the GPU-side gap between dependent kernels, no host cost).
    launch_sync_s: median wall time of launch + synchronize (round-trip latency).
    """
    cp = import_cupy()
    empty = _module(K.bandwidth_source()).get_function("ert_empty")
    for _ in range(50):
        empty((1,), (32,), ())
    cp.cuda.runtime.deviceSynchronize()

    start, end = cp.cuda.Event(), cp.cuda.Event()
    w0 = time.perf_counter()
    start.record()
    for _ in range(n_launches):
        empty((1,), (32,), ())
    end.record()
    end.synchronize()
    wall = time.perf_counter() - w0
    eager = cp.cuda.get_elapsed_time(start, end) * 1e-3 / n_launches

    rtt = []
    for _ in range(100):
        w0 = time.perf_counter()
        empty((1,), (32,), ())
        cp.cuda.runtime.deviceSynchronize()
        rtt.append(time.perf_counter() - w0)

    rec = {"eager_per_launch_s": eager, "eager_wall_per_launch_s": wall / n_launches,
           "launch_sync_s": statistics.median(rtt), "n_launches": n_launches,
           "graph_kernels": graph_kernels, "graph_replays": graph_replays}
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        stream.begin_capture()
        try:
            for _ in range(graph_kernels):
                empty((1,), (32,), ())
        finally:
            graph = stream.end_capture()
        graph.launch(stream)
        stream.synchronize()
        g0, g1 = cp.cuda.Event(), cp.cuda.Event()
        g0.record(stream)
        for _ in range(graph_replays):
            graph.launch(stream)
        g1.record(stream)
        g1.synchronize()
    rec["graph_per_kernel_s"] = cp.cuda.get_elapsed_time(g0, g1) * 1e-3 / (graph_replays
                                                                          * graph_kernels)
    return rec
