"""Per-op accuracy: predicted kernel time per ONNX node against the committed Nsight Compute samples.

    python -m calibration.evaluate.per_op_accuracy [--out calibration/data/h200/accuracy]

For every sample in calibration/data/h200/ncu (its .meta.json names network, precision and batch), runs
`predict validate` on the committed TorchScript graph with the bundled fit and takes |predicted / measured - 1| of the time of
each node that both the prediction and the kernel-to-node mapping give a time. Measured times are ncu
kernel replays (cold L2, no launch gap); predicted ones leave out the hidden kernels and the graph gap.
Writes per_op.json and per_op.md (median and share within 20% per sample and over all, and the share of measured op
time whose predicted bound is the one ncu's counters give: predictor/validate.py measured_bound).
"""
from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

from predictor.fitted import bundled_calibration
from predictor.machine.profile import load_profile
from predictor.validate import rel_error, validate

from ..fit.dataset import DATA, ONNX_DIR

NCU_DIR = DATA / "h200" / "ncu"
OUT = DATA / "h200" / "accuracy"


def op_errors(meta_path: Path, profile, calibration=None) -> list[dict]:
    """One row per node with a predicted and a measured time in one ncu sample (bundled fit by default)."""
    meta = json.loads(meta_path.read_text())
    csv = meta_path.with_name(meta_path.name.replace(".meta.json", ".csv"))
    model = ONNX_DIR / f"{meta['network']}.torchscript.onnx"
    cal = calibration or bundled_calibration(profile)
    v = validate(str(model), profile, str(csv), meta["precision"], int(meta["batch"]), calibration=cal)
    rows = []
    for r in v.rows:
        if r.predicted is None or r.measured is None or not r.measured.time_s or not r.predicted.time_s:
            continue
        rows.append({"sample": csv.stem, "node": r.name, "op_type": r.op_type, "measured_s": r.measured.time_s,
                     "predicted_s": r.predicted.time_s, "error": rel_error(r.predicted.time_s, r.measured.time_s),
                     "bound_predicted": str(r.predicted.bound), "bound_measured": str(r.measured.bound)})
    return rows


def summarise(rows: list[dict]) -> dict:
    errs = [abs(r["error"]) for r in rows]
    total = sum(r["measured_s"] for r in rows)
    agree = sum(r["measured_s"] for r in rows if r["bound_predicted"] == r["bound_measured"])
    return {"n": len(errs), "median": statistics.median(errs) if errs else None,
            "within_20pct": sum(e <= 0.2 for e in errs) / len(errs) if errs else None,
            "bound_agreement_time_share": agree / total if total else None}


def evaluate() -> dict:
    profile = load_profile("h200")
    rows = [row for meta in sorted(NCU_DIR.glob("*.meta.json")) for row in op_errors(meta, profile)]
    samples = sorted({r["sample"] for r in rows})
    return {"all": summarise(rows), "samples": {s: summarise([r for r in rows if r["sample"] == s]) for s in samples},
            "ops": rows}


def markdown(doc: dict) -> str:
    lines = ["| ncu sample | ops | median abs error | within 20% | bound as ncu's, share of op time |",
             "| --- | --- | --- | --- | --- |"]
    for name, s in [*doc["samples"].items(), ("all", doc["all"])]:
        lines.append(f"| {name} | {s['n']} | {s['median']:.1%} | {s['within_20pct']:.0%} | "
                     f"{s['bound_agreement_time_share']:.0%} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m calibration.evaluate.per_op_accuracy",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=OUT)
    a = ap.parse_args(argv)
    doc = evaluate()
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "per_op.json").write_text(json.dumps(doc, indent=1) + "\n")
    md = markdown(doc)
    (a.out / "per_op.md").write_text(md)
    print(md, end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
