"""Accuracy benchmark: `predict` against whole-network GPU time measured on the H200 (or another GPU).

    python -m calibration.evaluate.accuracy [--calibration FILE] [--gpu h200] [--out calibration/data/h200/accuracy]

``--gpu h100`` reads calibration/data/h100/timing and whatif and predicts with the H100 profile (the H200 fit
transferred): the measurements a device call got on an H100.

Reference: calibration/data/h200/timing (PyTorch eager, CUDA-graph replay median, or eager kernel sum +
0.45 us per kernel where the captured program differs; see calibration/networks/timing.py). Prediction:
the committed TorchScript-exported graph at the case's batch and precision with the fitted calibration.
Writes accuracy.json (every case) and accuracy.md (MAPE, median and worst error per split, precision and
batch; eager estimate against measured eager time; autocast forwards of the held-out networks from
calibration/data/h200/whatif/amp against ``--precision amp`` / ``amp-bf16``). Train networks were used by the fit; held-out never;
blind networks (families absent from the calibration, measured once) never chose anything either.
"""
from __future__ import annotations

import argparse
import json
import math
import statistics
from pathlib import Path

from predictor.fitted import bundled_calibration, load_calibration
from predictor.machine.profile import load_profile
from predictor.predict import predict_graph

from ..fit.dataset import DATA, graph_for, load_cases
from ..networks.zoo import NETWORKS, SPLITS

OUT = DATA / "h200" / "accuracy"


def _split(network: str) -> str:
    spec = NETWORKS.get(network)
    return spec.split if spec else "unknown"


def evaluate(calibration=None, gpu: str = "h200") -> list[dict]:
    """One row per measured case of ``gpu`` (its folder under calibration/data); ``calibration`` defaults to the
    bundled fit (pass Uncalibrated() for the pure roofline on the ERT ceilings)."""
    profile = load_profile(gpu)
    cal = calibration or bundled_calibration(profile)
    rows = []
    for case in load_cases(DATA / gpu / "timing"):
        graph = graph_for(case.network, case.batch)
        if graph is None:
            continue
        pred = predict_graph(graph, profile, case.precision, cal, batch=case.batch)
        err = pred.total_time_s / case.reference_time_s - 1
        eager_err = (pred.eager_time_s / case.eager_median_s - 1
                     if pred.eager_time_s and math.isfinite(case.eager_median_s) else None)
        rows.append({"network": case.network, "split": _split(case.network), "precision": case.precision,
                     "batch": case.batch, "measured_s": case.reference_time_s, "predicted_s": pred.total_time_s,
                     "error": err, "measured_spread": case.spread, "reference_source": case.reference_source,
                     "eager_measured_s": case.eager_median_s, "eager_predicted_s": pred.eager_time_s,
                     "eager_error": eager_err, "kernels_predicted": pred.kernels,
                     "kernels_measured": case.n_kernels_eager, "unsupported": dict(pred.unsupported)})
    return rows


WHATIF = "whatif"  # under DATA/<gpu>: amp/: the held-out networks' autocast forwards; amp_blind*/: each blind set's


def evaluate_amp(calibration=None, gpu: str = "h200") -> list[dict]:
    """One row per measured autocast case (every whatif.json under calibration/data/h200/whatif/amp and amp_blind*:
    fp32 modules under torch.autocast; reference as timing.py), its split the zoo's (a blind set's until it is
    spent): predicted with ``--precision amp`` / ``amp-bf16``."""
    profile = load_profile(gpu)
    cal = calibration or bundled_calibration(profile)
    rows = []
    cases: dict[tuple, dict] = {}  # a case measured in several runs keeps the last run's (paths in name order)
    whatif = DATA / gpu / WHATIF
    dirs = [whatif / "amp"] + sorted(whatif.glob("amp_blind*"))
    for path in [f for d in dirs for f in sorted(d.glob("**/whatif.json"))]:
        for c in json.loads(path.read_text())["cases"]:
            if not c.get("error"):
                cases[(c["network"], c["precision"], c["batch"])] = c
    for c in cases.values():
        ref = c.get("reference_time_s")
        if c.get("error") or not isinstance(ref, (int, float)) or not math.isfinite(ref) or ref <= 0:
            continue
        graph = graph_for(c["network"], c["batch"])
        if graph is None:
            continue
        prec = c["precision"].replace("_", "-")
        pred = predict_graph(graph, profile, prec, cal, batch=c["batch"])
        rows.append({"network": c["network"], "split": _split(c["network"]), "precision": prec,
                     "batch": c["batch"], "measured_s": ref, "predicted_s": pred.total_time_s,
                     "error": pred.total_time_s / ref - 1, "reference_source": c.get("reference_source", ""),
                     "kernels_predicted": pred.kernels, "kernels_measured": c.get("n_kernels_eager"),
                     "unsupported": dict(pred.unsupported)})
    return rows


def summarise(rows: list[dict], key: str = "error") -> dict:
    errs = [abs(r[key]) for r in rows if r.get(key) is not None]
    if not errs:
        return {"n": 0}
    worst = max(rows, key=lambda r: abs(r[key]) if r.get(key) is not None else -1)
    return {"n": len(errs), "mape": statistics.fmean(errs), "median": statistics.median(errs), "worst": max(errs),
            "within_10": sum(e <= 0.10 for e in errs) / len(errs),
            "worst_case": f"{worst['network']} {worst['precision']} b{worst['batch']}"}


def split_summary(sel: list[dict]) -> dict:
    """All cases, eager time, and each (precision, batch 1 / 32) of one split's rows."""
    out = {"all": summarise(sel), "eager": summarise(sel, "eager_error")}
    for p in ("fp32", "tf32", "fp16", "bf16"):
        for b in (1, 32):
            out[f"{p} b{b}"] = summarise([r for r in sel if r["precision"] == p and r["batch"] == b])
    return out


def tables(rows: list[dict]) -> dict:
    return {split: split_summary([r for r in rows if r["split"] == split]) for split in SPLITS}


def amp_tables(rows: list[dict]) -> dict:
    out = {"all": summarise(rows)}
    for p in ("amp", "amp-bf16"):
        for b in (1, 32):
            out[f"{p} b{b}"] = summarise([r for r in rows if r["precision"] == p and r["batch"] == b])
    return out


def markdown(rows: list[dict], summary: dict) -> str:
    lines = ["| split | setting | cases | MAPE | median | within 10% | worst (case) |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for split, by in summary.items():
        for setting, s in by.items():
            if s.get("n"):
                lines.append(f"| {split} | {setting} | {s['n']} | {s['mape']:.1%} | {s['median']:.1%} | "
                             f"{s['within_10']:.0%} | {s['worst']:.1%} ({s['worst_case']}) |")
    lines += ["", "| network | split | precision | batch | measured ms | predicted ms | error |",
              "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        lines.append(f"| {r['network']} | {r['split']} | {r['precision']} | {r['batch']} | "
                     f"{r['measured_s'] * 1e3:.3f} | {r['predicted_s'] * 1e3:.3f} | {r['error']:+.1%} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m calibration.evaluate.accuracy",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("--calibration", default=None, help="fitted calibration JSON (default: the bundled one)")
    ap.add_argument("--gpu", default="h200", help="whose measurements (calibration/data/GPU) and profile")
    ap.add_argument("--out", type=Path, default=None, help="default: calibration/data/GPU/accuracy")
    a = ap.parse_args(argv)
    a.out = a.out or DATA / a.gpu / "accuracy"
    cal = load_calibration(a.calibration, load_profile(a.gpu)) if a.calibration else None
    rows = evaluate(cal, a.gpu)
    summary = tables(rows)
    from predictor.calibrate import Uncalibrated

    base = evaluate(Uncalibrated(), a.gpu)
    summary["roofline baseline (uncalibrated, ERT ceilings)"] = {
        split: summarise([r for r in base if r["split"] == split]) for split in SPLITS}
    amp = evaluate_amp(cal, a.gpu)
    summary["autocast (training: the spent blind sets, whatif/amp_blind*)"] = amp_tables(
        [r for r in amp if r["split"] == "train"])
    summary["autocast (held-out, whatif/amp)"] = amp_tables([r for r in amp if r["split"] == "heldout"])
    for split in SPLITS[2:]:  # a blind set's autocast forwards, while it is one
        summary[f"autocast ({split})"] = amp_tables([r for r in amp if r["split"] == split])
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "accuracy.json").write_text(json.dumps({"summary": summary, "cases": rows + amp}, indent=1) + "\n")
    md = markdown(rows + amp, summary)
    (a.out / "accuracy.md").write_text(md)
    print(md.split("\n\n")[0])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
