"""The kernel time model: one formula for ``predict`` (floats) and the fits (numpy arrays).

    t = fixed + body
    fixed = kernels x t0_s + (rows_per_sm + walk_bytes_per_sm + loop_steps) x row_s + walk_waves x block_s
    body  = max( compute_s / (eff_compute x K / (K + gemm_k_half)),
                 hbm_s / eff_memory, l2_s / eff_l2, l1_s )

Parameters are those of predictor.timing.params (a class's ``ClassParams``; in a fit, arrays indexed per kernel).
Ignores: overlap of compute and memory phases below the max (each kernel is taken as perfectly overlapped),
kernel overlap across streams, clock changes.
"""
from __future__ import annotations

from typing import Any


class _ScalarOps:
    """The two array operations the formula needs, on floats."""

    @staticmethod
    def maximum(a: float, b: float) -> float:
        return a if a >= b else b

    @staticmethod
    def where(cond: Any, a: float, b: float) -> float:
        return a if cond else b


class _NumpyOps:
    def __getattr__(self, name: str):
        import numpy as np

        return getattr(np, name)


SCALAR_OPS = _ScalarOps()
NUMPY_OPS = _NumpyOps()


def kernel_time(f: Any, p: Any, gemm_k_half: float, xp: Any = SCALAR_OPS) -> tuple[Any, Any, dict[str, Any]]:
    """(fixed, body, level times) of kernels with features ``f`` (KernelFeatures or arrays with its fields) under
    parameters ``p`` (t0_s, eff_compute, eff_memory, eff_l2, row_s, block_s: floats or arrays)."""
    k = f.gemm_k
    k_eff = xp.where(k > 0, k / (k + gemm_k_half + (k == 0)), 1.0)
    compute = xp.where(f.compute_s > 0, f.compute_s / (p.eff_compute * k_eff), 0.0)
    hbm = f.hbm_s / p.eff_memory
    l2 = f.l2_s / p.eff_l2
    l1 = f.l1_s
    fixed = f.kernels * p.t0_s + (f.rows_per_sm + f.walk_bytes_per_sm + f.loop_steps) * p.row_s + \
        f.walk_waves * p.block_s
    body = xp.maximum(xp.maximum(compute, hbm), xp.maximum(l2, l1))
    return fixed, body, {"compute": compute, "HBM": hbm, "L2": l2, "L1": l1, "latency": fixed}


def hidden_bytes_share(count: Any) -> Any:
    """Share of a node's ``bytes_of`` bytes its hidden kernels move: a transform each of the input and the
    output (weights are small), so one kernel moves about half and two or more move all of it."""
    return (count if count < 2.0 else 2.0) / 2.0 if isinstance(count, (int, float)) else _np_share(count)


def _np_share(count: Any) -> Any:
    import numpy as np

    return np.minimum(count, 2.0) / 2.0


def hidden_kernel_time(count: Any, hbm_s: Any, t0_s: Any, eff_memory: Any) -> Any:
    """Time of ``count`` hidden kernels (layout transforms, casts) around a node: t0 each plus one memory pass over
    the share of the node's bytes they move (``hbm_s``: those bytes' time at the HBM ceiling)."""
    return count * t0_s + hidden_bytes_share(count) * hbm_s / eff_memory
