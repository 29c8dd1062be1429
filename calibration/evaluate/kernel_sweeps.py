"""The time-based-roofline study's kernel sweeps as a benchmark: predicted against measured kernel time.

    python -m calibration.evaluate.kernel_sweeps [--calibration FILE] [--out calibration/data/h200/accuracy]
        [--plot PNG]

* conv2d: the study's sweep (input 64 x 112 x 112, batch 16/32/64, kernel 3/7/9, filters 64-512, stride 1-3, fp32
  and fp16; microbenchmark family ``conv_sweep``, 216 cases, never read by any fit: calibration/fit/kernel_samples.py
  keeps it out);
* LSTM: one-layer LSTMs of widths 256-1024 at batch 1 and 32 over 32-128 steps (family ``rnn_steps``, CUDA-graph
  replays, every precision).
Each measured call is rebuilt as one ONNX node and predicted as ``predict`` would (FittedCalibration.predict_op:
its kernels, hidden kernels and graph gaps). Writes kernel_sweeps.json and kernel_sweeps.md (MAPE, median, worst
per sweep and precision) and, with --plot, predicted against measured time.
"""
from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

from predictor.fitted import bundled_calibration, load_calibration
from predictor.graph.cost import cost_graph
from predictor.graph.traffic import traffic_for
from predictor.machine.profile import load_profile
from predictor.precision import policy
from predictor.types import DEFAULT_OPSET

from ..fit.micro_fit import conv_node, microbench_rows, rnn_node, row_params

OUT = Path(__file__).resolve().parents[1] / "data" / "h200" / "accuracy"
SWEEPS = {"conv2d": ("conv_sweep", conv_node), "lstm": ("rnn_steps", rnn_node)}


def evaluate(calibration=None) -> list[dict]:
    profile = load_profile("h200")
    cal = calibration or bundled_calibration(profile)
    traffic = traffic_for(profile)
    out = []
    for sweep, (family, build) in SWEEPS.items():
        for r in microbench_rows((family,)):
            p = row_params(r)
            if sweep == "lstm" and (p.get("op") != "lstm" or p.get("layers") != 1):
                continue
            node = build(p)
            pol = policy(r["precision"])
            cost = cost_graph([node], pol, DEFAULT_OPSET, traffic, frozenset(t.name for t in node.inputs
                                                                   if not t.is_initializer)).costs[0]
            pred = cal.predict_op(node, cost, profile, pol)
            meas = float(r["time_s"])
            out.append({"sweep": sweep, "precision": r["precision"], "params": p, "measured_s": meas,
                        "predicted_s": pred.time_s, "error": pred.time_s / meas - 1, "bound": pred.bound.value})
    return out


def summarise(rows: list[dict]) -> dict:
    out: dict = {}
    for sweep in SWEEPS:
        for prec in ("all", "fp32", "tf32", "fp16", "bf16"):
            e = [abs(r["error"]) for r in rows if r["sweep"] == sweep and prec in ("all", r["precision"])]
            if e:
                out.setdefault(sweep, {})[prec] = {"n": len(e), "mape": statistics.mean(e),
                                                   "median": statistics.median(e), "worst": max(e)}
    return out


def markdown(summary: dict) -> str:
    lines = ["| sweep | precision | cases | MAPE | median | worst |", "| --- | --- | --- | --- | --- | --- |"]
    for sweep, by_p in summary.items():
        for prec, s in by_p.items():
            lines.append(f"| {sweep} | {prec} | {s['n']} | {s['mape']:.1%} | {s['median']:.1%} | {s['worst']:.1%} |")
    return "\n".join(lines) + "\n"


def plot(rows: list[dict], path: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4.6))
    for ax, sweep in zip(axes, SWEEPS):
        rs = [r for r in rows if r["sweep"] == sweep]
        for prec, colour in (("fp32", "tab:blue"), ("tf32", "tab:green"), ("fp16", "tab:orange"), ("bf16", "tab:red")):
            sel = [r for r in rs if r["precision"] == prec]
            if sel:
                ax.scatter([r["measured_s"] * 1e6 for r in sel], [r["predicted_s"] * 1e6 for r in sel], s=12,
                           alpha=0.7, color=colour, label=prec)
        lo = min(min(r["measured_s"], r["predicted_s"]) for r in rs) * 1e6 / 1.5
        hi = max(max(r["measured_s"], r["predicted_s"]) for r in rs) * 1e6 * 1.5
        ax.plot([lo, hi], [lo, hi], color="k", lw=0.8)
        for f in (0.85, 1.15):
            ax.plot([lo, hi], [lo * f, hi * f], color="grey", lw=0.6, ls="--")
        ax.set(xscale="log", yscale="log", xlim=(lo, hi), ylim=(lo, hi), xlabel="measured kernel time (us)",
               ylabel="predicted (us)", title=f"{sweep} sweep (H200): dashed = +-15%")
        ax.legend(loc="upper left", frameon=False)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m calibration.evaluate.kernel_sweeps",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("--calibration")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--plot")
    a = ap.parse_args(argv)
    cal = load_calibration(a.calibration) if a.calibration else None
    rows = evaluate(cal)
    summary = summarise(rows)
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "kernel_sweeps.json").write_text(json.dumps({"summary": summary, "rows": rows}, indent=1) + "\n")
    (a.out / "kernel_sweeps.md").write_text("# Kernel sweeps of the time-based roofline study (H200)\n\n"
                                            "`python -m calibration.evaluate.kernel_sweeps`\n\n" + markdown(summary))
    print(markdown(summary))
    if a.plot:
        plot(rows, a.plot)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
