"""Accuracy of ``--optimize``: predicted vs measured TorchInductor speedups on the H200.

    python -m calibration.evaluate.optimize_accuracy [--passes all] [--out calibration/data/h200/accuracy]

For every network with a measured ``inductor_fp16`` batch-32 case in calibration/data/h200/whatif/inductor
(``speedup`` = baseline_time_s / reference_time_s: PyTorch eager fp16 against ``torch.compile`` of the same
module, both CUDA-graph replays or eager kernel sums, in one process), predicts the committed TorchScript
graph at fp16, batch 32 on the bundled h200 profile and calibration, without and with ``--optimize PASSES``,
and compares predicted speedup (time without / time with) to the measured one: error = predicted /
measured - 1. All four measured networks are held out (no fit has seen them). Writes
optimize_accuracy.json (per network, mean |error|, worst, the files read and the command) and prints a
table. Nothing measured is changed.
"""
from __future__ import annotations

import argparse
import json
import math
from datetime import datetime, timezone
from pathlib import Path

from predictor.fitted import bundled_calibration
from predictor.machine.profile import load_profile
from predictor.optimize import resolve
from predictor.predict import predict_file

from ..fit.dataset import DATA, ONNX_DIR

WHATIF = DATA / "h200" / "whatif" / "inductor"
OUT = DATA / "h200" / "accuracy"
ROOT = DATA.parents[1]
MODE, PRECISION, BATCH = "inductor_fp16", "fp16", 32
TARGET = 0.15  # mean |predicted speedup / measured speedup - 1|


def measured_cases() -> list[dict]:
    """The measured inductor fp16 batch-32 cases with a finite speedup, one per network (sorted by name)."""
    out = []
    for path in sorted(WHATIF.glob("*/whatif.json")):
        doc = json.loads(path.read_text())
        for c in doc.get("cases", []):
            sp = c.get("speedup")
            if c.get("mode") == MODE and c.get("batch") == BATCH and not c.get("error") \
                    and isinstance(sp, (int, float)) and math.isfinite(sp) and sp > 0:
                out.append({**c, "_file": path})
    return out


def _rel(p: Path) -> str:
    try:
        return str(p.resolve().relative_to(ROOT))
    except ValueError:
        return str(p)


def evaluate(passes: str = "all") -> dict:
    names = resolve(passes)
    profile = load_profile("h200")
    cal = bundled_calibration(profile)
    rows = []
    for c in measured_cases():
        net = c["network"]
        model = ONNX_DIR / f"{net}.torchscript.onnx"
        base = predict_file(str(model), profile, PRECISION, BATCH, calibration=cal)
        opt = predict_file(str(model), profile, PRECISION, BATCH, calibration=cal, optimize=names)
        predicted = base.total_time_s / opt.total_time_s
        rows.append({
            "network": net, "split": c.get("split"),
            "measured_speedup": c["speedup"], "predicted_speedup": predicted,
            "error": predicted / c["speedup"] - 1.0,
            "measured_baseline_s": c.get("baseline_time_s"), "measured_compiled_s": c.get("reference_time_s"),
            "predicted_baseline_s": base.total_time_s, "predicted_optimized_s": opt.total_time_s,
            "measured_kernels_compiled": c.get("n_kernels_replay"),
            "predicted_kernels_baseline": base.kernels, "predicted_kernels_optimized": opt.kernels,
            "baseline_source": c.get("baseline_source"), "reference_source": c.get("reference_source"),
            "whatif": _rel(c["_file"]), "model": _rel(model),
        })
    errs = [abs(r["error"]) for r in rows]
    worst = max(rows, key=lambda r: abs(r["error"])) if rows else None
    summary = {
        "n": len(rows),
        "mean_abs_error": sum(errs) / len(errs) if errs else None,
        "worst_abs_error": abs(worst["error"]) if worst else None,
        "worst_network": worst["network"] if worst else None,
        "target_mean_abs_error": TARGET,
        "target_met": bool(errs) and sum(errs) / len(errs) <= TARGET,
    }
    return {
        "summary": summary,
        "networks": rows,
        "provenance": {
            "command": f"python -m calibration.evaluate.optimize_accuracy --passes {passes}",
            "date_utc": datetime.now(timezone.utc).strftime("%Y-%m-%d"),
            "passes": list(names),
            "precision": PRECISION, "batch": BATCH, "gpu_profile": profile.name,
            "calibration": cal.name if cal else "uncalibrated",
            "calibration_file": "predictor/data/" + cal.source if cal else None,
            "calibration_fitted": (cal.doc.get("provenance") or {}).get("date") if cal else None,
            "measured": f"{_rel(WHATIF)}/<network>/whatif.json, mode {MODE} (calibration/networks/whatif.py)",
            "models": f"{_rel(ONNX_DIR)}/<network>.torchscript.onnx",
            "error": "predicted speedup / measured speedup - 1; speedup = time without / time with the passes",
            "semantics": "pass semantics follow TorchInductor's kernel lists on the H200 (torch 2.11; see the "
                         "docstrings of predictor/optimize/*.py): cuDNN/cuBLAS keep only their bias, pointwise "
                         "work is fused in Triton, activations channels-last, SDPA's math path for masks "
                         "broadcast along the key axis",
        },
    }


def table(doc: dict) -> str:
    lines = ["| network | measured speedup | predicted speedup | error | predicted eager / compiled | "
             "measured eager / compiled |", "| --- | --- | --- | --- | --- | --- |"]
    for r in doc["networks"]:
        lines.append(f"| {r['network']} | {r['measured_speedup']:.3f} | {r['predicted_speedup']:.3f} | "
                     f"{r['error']:+.1%} | {r['predicted_baseline_s'] * 1e3:.3f} / "
                     f"{r['predicted_optimized_s'] * 1e3:.3f} ms | {r['measured_baseline_s'] * 1e3:.3f} / {r['measured_compiled_s'] * 1e3:.3f} ms |")
    s = doc["summary"]
    if s["n"]:
        lines.append(f"\nmean |error| {s['mean_abs_error']:.1%} (target {s['target_mean_abs_error']:.0%}: "
                     f"{'met' if s['target_met'] else 'not met'}), worst {s['worst_abs_error']:.1%} "
                     f"({s['worst_network']}), passes {','.join(doc['provenance']['passes'])}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m calibration.evaluate.optimize_accuracy",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("--passes", default="all", help="the --optimize passes to evaluate (default all)")
    ap.add_argument("--out", type=Path, default=OUT)
    a = ap.parse_args(argv)
    doc = evaluate(a.passes)
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "optimize_accuracy.json").write_text(json.dumps(doc, indent=1) + "\n")
    print(table(doc), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
