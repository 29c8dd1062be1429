"""Per-phase traffic of a training step: ``predict --mode train`` against Nsight Compute samples of one step.

    python -m calibration.evaluate.training_ncu [--out calibration/data/h200/accuracy]

Samples: calibration/data/h200/ncu/training/<net>_<precision>_b<batch>_train.csv, taken by
``python3 -m calibration.ncu.collect --plan calibration/ncu/plans/h200_training.json`` (one training step as
calibration/training/measure.py runs it: MSE loss, fused AdamW; core counters, cache control none, kernel
replay). The step's phases are NVTX ranges ``phase::<name>`` of the main thread; the autograd engine launches
the backward kernels from its own thread, outside every range, so a kernel with no phase range between the
forward's and the optimizer's is counted as backward. Per phase: summed kernel time (ncu replays: no launch
gaps), FLOPs and bytes at L1, L2 and HBM, against the prediction's phase (GPU time without the graph gap).
Writes training_ncu.json and training_ncu.md.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from predictor.fitted import bundled_calibration
from predictor.machine.profile import load_profile
from predictor.types import MemLevel

from ..fit.dataset import DATA, ONNX_DIR

SAMPLES = DATA / "h200" / "ncu" / "training"
OUT = DATA / "h200" / "accuracy"
PHASES = ("forward", "backward", "optimizer")
LEVELS = ("L1", "L2", "HBM")


def kernel_phases(kernels) -> list[str]:
    """Phase of each kernel in launch order (see the module docstring)."""
    tagged = [next((s.split("::", 1)[1] for s in (k.nvtx or ()) if str(s).startswith("phase::")), None)
              for k in kernels]
    out, seen_forward = [], False
    for t in tagged:
        if t == "forward":
            seen_forward = True
        out.append(t or ("backward" if seen_forward else "forward"))
    return out


def measured_phases(csv_path: Path) -> dict[str, dict]:
    from predictor.measure.ncu.parse import parse_file

    ks = parse_file(str(csv_path))
    out = {p: {"time_s": 0.0, "flops": 0.0, "kernels": 0, **{lv: 0.0 for lv in LEVELS}} for p in PHASES}
    for k, ph in zip(ks, kernel_phases(ks)):
        e = out[ph]
        e["time_s"] += k.time_s or 0.0
        e["flops"] += sum((k.flops or {}).values())
        e["kernels"] += 1
        for lv in LEVELS:
            e[lv] += (k.bytes or {}).get(lv, 0.0)
    return out


def evaluate() -> list[dict]:
    from predictor.train import predict_training_file

    profile = load_profile("h200")
    cal = bundled_calibration(profile)
    rows = []
    for meta_path in sorted(SAMPLES.glob("*_train.meta.json")):
        meta = json.loads(meta_path.read_text())
        csv_path = meta_path.with_name(meta_path.name.replace(".meta.json", ".csv"))
        meas = measured_phases(csv_path)
        pred = predict_training_file(str(ONNX_DIR / f"{meta['network']}.torchscript.onnx"), profile,
                                     meta["precision"], int(meta["batch"]), calibration=cal, optimizer="adamw",
                                     impl="fused", loss="mse", max_batch=False)
        for ph in PHASES:
            p = pred.phase(ph)
            gap = p.kernels * cal.kernel_gap_s
            row = {"sample": csv_path.stem, "phase": ph, "kernels": [p.kernels, meas[ph]["kernels"]],
                   "time_s": [p.time_s - gap, meas[ph]["time_s"]], "flops": [p.flops, meas[ph]["flops"]]}
            for lv in LEVELS:
                row[lv] = [p.bytes.get(MemLevel(lv), 0.0), meas[ph][lv]]
            rows.append(row)
    return rows


def _err(pair) -> str:
    p, m = pair
    return f"{p / m - 1:+.0%}" if m else "-"


def markdown(rows: list[dict]) -> str:
    lines = ["| sample | phase | kernels pred / ncu | time | FLOPs | L1 bytes | L2 bytes | HBM bytes |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        lines.append(f"| {r['sample']} | {r['phase']} | {r['kernels'][0]} / {r['kernels'][1]} | "
                     f"{r['time_s'][0] * 1e3:.3f} / {r['time_s'][1] * 1e3:.3f} ms ({_err(r['time_s'])}) | "
                     + " | ".join(f"{_err(r[k])}" for k in ("flops", *LEVELS)) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m calibration.evaluate.training_ncu",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=OUT)
    a = ap.parse_args(argv)
    rows = evaluate()
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "training_ncu.json").write_text(json.dumps({"samples": str(SAMPLES.relative_to(DATA.parent.parent)),
                                                        "rows": rows}, indent=1) + "\n")
    md = markdown(rows)
    (a.out / "training_ncu.md").write_text(md)
    print(md, end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
