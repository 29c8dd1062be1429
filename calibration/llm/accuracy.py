"""Predicted against measured LLM serving steps: the error of ``predict serve``'s prefill and decode times.

    python -m calibration.llm.accuracy DIR [--gpu h200] [--calibration FILE] [--out DIR/accuracy.json]

DIR holds what ``calibration/llm/serving.py`` wrote: ``serving.json`` (the CUDA-graph medians) and
``onnx/<arch>.{prefill,decode}.onnx`` (the graphs of the same decoders). Each measured case is predicted from the
graph of its kind at its own sizes and precision: a prefill case from the prefill graph with input_ids
[batch, prompt]; a decode case from the decode graph with the past bound to the context (the exporter's
Concat(past, new) run as the in-place append the measured static cache does, as ``predict serve`` does).
Writes the per-case table and the MAPE per (architecture, kind) and overall; prints a summary.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path


def predict_case(case: dict, onnx_dir: Path, profile, cal) -> float:
    """Predicted seconds of one measured case (prefill or decode)."""
    from predictor.serve import decoder_inputs, predict_step, step_shapes

    kind, b = case["kind"], int(case["batch"])
    path = str(onnx_dir / f"{case['arch']}.{kind}.onnx")
    inp = decoder_inputs(path)
    if kind == "prefill":
        _, pred = predict_step(path, profile, case["precision"], cal, {inp.tokens: (b, int(case["prompt"]))}, b)
        return pred.total_time_s
    c = int(case["context"])
    _, pred = predict_step(path, profile, case["precision"], cal, step_shapes(inp, b, 1, c), b,
                           past_names=frozenset(n for n, _ in inp.past))
    return pred.total_time_s


def run(data_dir: str, gpu: str = "h200", onnx_dir: str = "", calibration: str = "") -> dict:
    from predictor.calibrate import Uncalibrated
    from predictor.fitted import bundled_calibration, load_calibration
    from predictor.machine.profile import load_profile

    root = Path(data_dir)
    doc = json.loads((root / "serving.json").read_text())
    profile = load_profile(gpu)
    cal = load_calibration(calibration, profile) if calibration else (bundled_calibration(profile) or Uncalibrated())
    rows = []
    for arch, sub in doc.get("archs", {}).items():
        for case in sub.get("cases", []):
            measured = case.get("median_s")
            if case.get("error") or not measured or not math.isfinite(measured):
                continue
            c = {**case, "arch": arch}
            try:
                pred = predict_case(c, Path(onnx_dir) if onnx_dir else root / "onnx", profile, cal)
            except Exception as exc:  # noqa: BLE001 - a case that cannot be predicted is listed, not hidden
                rows.append({**_key(c), "measured_s": measured, "error": f"{type(exc).__name__}: {exc}"[:200]})
                continue
            rows.append({**_key(c), "measured_s": measured, "predicted_s": pred,
                         "error_pct": 100.0 * (pred - measured) / measured})
    groups: dict[str, list[float]] = {}
    for r in rows:
        if "error_pct" in r:
            groups.setdefault(f"{r['arch']}/{r['kind']}", []).append(abs(r["error_pct"]))
            groups.setdefault(r["kind"], []).append(abs(r["error_pct"]))
            groups.setdefault("all", []).append(abs(r["error_pct"]))
    mape = {k: sum(v) / len(v) for k, v in sorted(groups.items())}
    worst = {k: max(v) for k, v in sorted(groups.items())}
    return {"source": str(root / "serving.json"), "graphs": str(Path(onnx_dir) if onnx_dir else root / "onnx"),
            "command": "python -m calibration.llm.accuracy " + str(root) + (f" --onnx-dir {onnx_dir}" if onnx_dir else ""),
            "gpu": gpu, "calibration": cal.name,
            "measured_environment": doc.get("environment"), "mape_pct": mape, "worst_pct": worst,
            "n_cases": len(rows), "cases": rows}


def _key(c: dict) -> dict:
    return {k: c[k] for k in ("arch", "kind", "precision", "batch", "prompt", "context") if k in c}


def summary(res: dict) -> str:
    lines = [f"{res['n_cases']} measured cases ({res['calibration']})"]
    for k, v in res["mape_pct"].items():
        lines.append(f"  {k:16s} MAPE {v:6.1f}%  worst {res['worst_pct'][k]:6.1f}%")
    bad = [r for r in res["cases"] if "error" in r]
    if bad:
        lines.append(f"  {len(bad)} cases not predicted, e.g. {bad[0]['error']}")
    return "\n".join(lines)


def plot(res: dict, path: str, precision: str = "fp16") -> None:
    """Decode tokens/s against batch, measured (markers) and predicted (dashed), one panel per architecture."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for r in res["cases"] if r["kind"] == "decode" and r["precision"] == precision and "predicted_s" in r]
    archs = sorted({r["arch"] for r in rows})
    fig, axes = plt.subplots(1, len(archs), figsize=(4.2 * len(archs), 3.8), squeeze=False)
    for ax, arch in zip(axes[0], archs):
        for k, ctx in enumerate(sorted({r["context"] for r in rows if r["arch"] == arch})):
            pts = sorted((r for r in rows if r["arch"] == arch and r["context"] == ctx), key=lambda r: r["batch"])
            color = f"C{k}"
            ax.plot([r["batch"] for r in pts], [r["batch"] / r["measured_s"] for r in pts], "o-", color=color,
                    label=f"context {ctx}")
            ax.plot([r["batch"] for r in pts], [r["batch"] / r["predicted_s"] for r in pts], "--", color=color)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_title(f"{arch} decode, {precision} (H200)")
        ax.set_xlabel("batch")
        ax.grid(True, which="both", alpha=0.3)
    axes[0][0].set_ylabel("tokens/s: measured (o), predicted (--)")
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("data_dir")
    p.add_argument("--gpu", default="h200")
    p.add_argument("--onnx-dir", default="", help="the graphs to predict (default DATA_DIR/onnx)")
    p.add_argument("--out", default="")
    p.add_argument("--calibration", default="", help="a fitted calibration file (default: the GPU's bundled one)")
    p.add_argument("--plot", default="", help="decode tokens/s chart, measured against predicted (.png)")
    a = p.parse_args(argv)
    res = run(a.data_dir, a.gpu, a.onnx_dir, a.calibration)
    out = Path(a.out) if a.out else Path(a.data_dir) / "accuracy.json"
    out.write_text(json.dumps(res, indent=1) + "\n")
    print(summary(res))
    print(f"wrote {out}")
    if a.plot:
        plot(res, a.plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
