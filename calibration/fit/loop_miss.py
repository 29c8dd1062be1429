"""How long a thread loop's iteration waits when its tensor is not in the L2: timing/features.LOOP_MISS_LATENCY.

    python -m calibration.fit.loop_miss [--ratios 1.0,1.4,1.7,2.0]

For each factor, fits t0 x kernels + loop steps x row_s + HBM bytes / (bandwidth x eff_memory) per precision by least
squares on the log time of the H100's group_norm_shapes calls (calibration/data/h100/microbench/run13, priced on the
H100's own profile) and prints the fitted values and the MAPE: the factor is read off where the MAPE stops falling
(1.0: no miss penalty). Ignores: the main fit's other classes and samples (this is a check of one constant).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from scipy.optimize import least_squares

ROOT = Path(__file__).resolve().parents[1] / "data" / "h100" / "microbench"


def fit_ratio(rows, profile, ratio: float) -> dict[str, tuple[tuple[float, float, float], float]]:
    """{precision: ((t0_s, row_s, eff_memory), MAPE)} of the calls ``rows`` (kernel_samples.micro_costs) with the
    loop's miss factor set to ``ratio``."""
    from predictor.timing import features

    saved = features.LOOP_MISS_LATENCY
    features.LOOP_MISS_LATENCY = ratio
    try:
        out = {}
        for prec in sorted({r["precision"] for r, _, _ in rows}):
            feats = [(features.kernel_features(c, profile, prec, n), float(r["time_s"]))
                     for r, n, c in rows if r["precision"] == prec]
            x = np.array([(f.kernels, f.loop_steps, f.hbm_s) for f, _ in feats])
            y = np.array([t for _, t in feats])

            def res(th, x=x, y=y):
                t0, row, em = np.exp(th)
                return np.log((x[:, 0] * t0 + x[:, 1] * row + x[:, 2] / em) / y)
            sol = least_squares(res, np.log([3e-6, 2e-7, 0.7]))
            out[prec] = (tuple(float(v) for v in np.exp(sol.x)), float(np.mean(np.abs(np.exp(res(sol.x)) - 1))))
        return out
    finally:
        features.LOOP_MISS_LATENCY = saved


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m calibration.fit.loop_miss", description=__doc__.splitlines()[0])
    ap.add_argument("--ratios", default="1.0,1.4,1.7,2.0", help="comma list of factors to try (each > 0)")
    args = ap.parse_args(argv)
    try:
        ratios = [float(v) for v in args.ratios.split(",")]
        if not ratios or any(not v > 0 for v in ratios):
            raise ValueError
    except ValueError:
        print(f"error: --ratios must be a comma list of positive numbers, not {args.ratios!r}", file=sys.stderr)
        return 2
    from calibration.fit.kernel_samples import micro_costs
    from predictor.machine.profile import load_profile

    profile = load_profile("h100")
    rows = micro_costs(("group_norm_shapes",), profile, ROOT)
    print(f"{len(rows)} group_norm_shapes calls (H100)")
    for ratio in ratios:
        fitted = fit_ratio(rows, profile, ratio)
        print(f"factor {ratio:.2f}: " + ", ".join(
            f"{p} MAPE {m:.1%} (t0 {v[0] * 1e6:.2f} us, row {v[1] * 1e6:.3f} us, eff_memory {v[2]:.2f})"
            for p, (v, m) in fitted.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
