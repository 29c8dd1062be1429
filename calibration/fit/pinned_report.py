"""What the pinned-class fits (batchnorm_fit, thin_gemm_fit, gemv_fit) report alike: which parameters the data
determined, a log line per precision, the class's "*" entry."""
from __future__ import annotations

import math

import numpy as np


def determined(params: tuple[str, ...], stderr_rel, lo, hi, x, active) -> dict[str, bool]:
    """Per parameter: relative standard error under 0.5, the solution ``x`` (log values) inside its log bounds
    ``lo``..``hi``, and some sample's time depends on it (``active``)."""
    return {n: bool(e < 0.5 and lo[i] + 1e-6 < x[i] < hi[i] - 1e-6 and active[i])
            for i, (n, e) in enumerate(zip(params, stderr_rel))}


def summary(cls: str, prec: str, what: str, vals: dict, r: dict) -> str:
    """One log line of a pinned class's fit at one precision: its parameters, errors and undetermined ones."""
    return (f"{cls} {prec}: {what}, " + ", ".join(f"{k} {v:.3g}" for k, v in vals.items())
            + f"; MAPE {r['mape']:.1%}, median {r['median_abs_error']:.1%}, worst {r['worst']:.0%}; undetermined: "
            + (", ".join(k for k, d in r["determined"].items() if not d) or "none"))


def with_mean_entry(entry: dict, params: tuple[str, ...]) -> dict:
    """``entry`` with its "*" entry (any other precision): the geometric mean of the fitted precisions' values."""
    if entry:
        entry["*"] = {k: float(np.exp(np.mean([math.log(v[k]) for v in entry.values()]))) for k in params}
    return entry
