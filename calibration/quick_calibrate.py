"""``predict calibrate --out DIR [--name NAME]``: calibrate a GPU we do not ship, in about 3 minutes.

On a machine with an NVIDIA GPU (CuPy for ERT, PyTorch for the kernels):

1. ERT, quick configuration (``predictor/measure/ert``, ~60 s): ceilings -> ``DIR/NAME.json`` (a profile ``predict --gpu``
   loads; L2/HBM from the float4 copy series, L1 from the float4 read series, as the bundled H200 profile) and the
   raw data beside it.
2. A small subset of the op microbenchmarks (``calibration/networks/microbench.py``: ResNet-50's convolutions and
   batched matmuls at fp32/tf32/fp16/bf16, at most ``--per-family`` cases each, ``--max-seconds``) ->
   ``DIR/microbench/microbench.csv``.
3. The H200 calibration, rescaled per (kernel class, precision) by what differs from the H200: the median of
   measured / predicted time of those kernels on the new profile over the same median on the H200's own
   microbenchmark runs (calibration/data/h200/microbench, predicted on the bundled h200 profile), clamped to
   [1/4, 4]: ``eff_compute`` and ``eff_memory`` are divided by it (on the H200's own data every factor is 1);
   classes without measured kernels keep the H200's values -> ``DIR/calibration_NAME.json``.

Then: ``predict MODEL.onnx --gpu DIR/NAME.json --calibration DIR/calibration_NAME.json``.
Without a GPU, ``--from-ert RAW.json --from-microbench CSV`` runs steps 1 and 3 on saved data (what the tests do with
the committed H200 runs). Ignores: classes the subset does not measure (elementwise, norms, RNNs keep the H200 fit
at the new ceilings), per-kernel fixed costs (t0 stays the H200's).
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

FAMILIES = ("conv_resnet50", "bmm")
PRECISIONS = ("fp32", "tf32", "fp16", "bf16")
SCALE_RANGE = (0.25, 4.0)


def _node(row: dict):
    from calibration.fit.micro_fit import bmm_node, conv_node, row_params

    return {"conv_resnet50": conv_node, "bmm": bmm_node}[row["family"]](row_params(row))


def kernel_ratios(rows: list[dict], profile, calibration) -> dict[tuple[str, str], list[float]]:
    """measured / predicted time per (kernel class, precision) of microbenchmark rows (one ONNX node each)."""
    from predictor.graph.cost import cost_graph
    from predictor.graph.fused import runtime_op
    from predictor.graph.opclass import kernel_class
    from predictor.graph.traffic import traffic_for
    from predictor.precision import policy
    from predictor.types import DEFAULT_OPSET

    out: dict[tuple[str, str], list[float]] = {}
    for r in rows:
        if r.get("error") or not r.get("time_s") or r["precision"] not in PRECISIONS:
            continue
        node, pol = _node(r), policy(r["precision"])
        gc = cost_graph([node], pol, DEFAULT_OPSET, traffic_for(profile),
                        frozenset(t.name for t in node.inputs if not t.is_initializer))
        cost = gc.costs[0]
        pred = calibration.predict_op(node, cost, profile, pol).time_s
        if pred > 0:
            cls = kernel_class(node, runtime_op(node, cost.work), r["precision"])
            out.setdefault((cls, r["precision"]), []).append(float(r["time_s"]) / pred)
    return out


def scaled_calibration(doc: dict, ratios: dict[tuple[str, str], list[float]], gpu: str, note: str,
                       reference: dict[tuple[str, str], list[float]] | None = None) -> dict:
    """``doc`` (a calibration) with each measured (class, precision) entry's efficiencies divided by the median
    ratio over the reference GPU's median ratio of the same class and precision (1 where it has none), clamped to
    SCALE_RANGE; a ``quick_calibration`` record says what was scaled and from how many kernels."""
    out = json.loads(json.dumps(doc))
    out["gpu"] = gpu
    scaled = {}
    for (cls, prec), rs in sorted(ratios.items()):
        ref = statistics.median(reference[(cls, prec)]) if reference and reference.get((cls, prec)) else 1.0
        f = min(max(statistics.median(rs) / ref, SCALE_RANGE[0]), SCALE_RANGE[1])
        by_p = out["classes"].setdefault(cls, {})
        base = by_p.get(prec) or by_p.get("*") or out["classes"]["default"]["*"]
        entry = dict(base)
        entry["eff_compute"] = min(max(base["eff_compute"] / f, 1e-6), 1e3)
        entry["eff_memory"] = min(max(base["eff_memory"] / f, 1e-6), 1e3)
        by_p[prec] = entry
        scaled[f"{cls}.{prec}"] = {"median_measured_over_predicted": statistics.median(rs),
                                   "reference_median": ref, "factor": f, "kernels": len(rs)}
    out["quick_calibration"] = {"from": doc.get("gpu"), "note": note, "scaled": scaled,
                                "unscaled": "every other class and precision: the fit of " + str(doc.get("gpu"))}
    return out


def _microbench_rows(csv_path: Path) -> list[dict]:
    import csv

    with open(csv_path, newline="", encoding="utf-8") as f:
        return [r for r in csv.DictReader(f) if r["family"] in FAMILIES]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="predict calibrate", description="Calibrate the local NVIDIA GPU: ERT ceilings "
                                "and a small kernel subset (about 3 minutes), written as a profile and a calibration "
                                "that predict loads. 'predict calibrate ert ...' runs the ERT part alone.")
    p.add_argument("--out", required=True, type=Path, help="folder for NAME.json, calibration_NAME.json and raw data")
    p.add_argument("--name", default="mygpu", help="profile name (default mygpu)")
    p.add_argument("--max-seconds", type=float, default=90.0, help="time for the kernel subset (default 90)")
    p.add_argument("--per-family", type=int, default=16, help="kernels per microbenchmark family (default 16)")
    p.add_argument("--from-ert", type=Path, default=None, help="saved ERT raw JSON instead of measuring (no GPU)")
    p.add_argument("--from-microbench", type=Path, default=None,
                   help="saved microbench.csv instead of measuring (no GPU)")
    return p


def _err(msg: str) -> int:
    print("error: " + " ".join(str(msg).split()), file=sys.stderr)
    return 2


def main(argv: list[str] | None = None) -> int:
    try:
        args = _parser().parse_args(argv)
    except SystemExit as e:
        return 0 if e.code in (0, None) else 2
    from predictor.measure.ert.profile_writer import build_profile, write_json

    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    raw_path = out / f"{args.name}_ert_raw.json"
    if args.from_ert is not None:
        try:
            raw = json.loads(args.from_ert.read_text())
        except (OSError, ValueError) as e:
            return _err(f"cannot read ERT raw data {args.from_ert}: {e}")
    else:
        from predictor.measure.ert.device import ErtUnavailable, import_cupy

        try:
            import_cupy()
        except ErtUnavailable as e:
            return _err(f"{e} (or give --from-ert RAW.json --from-microbench CSV)")
        from predictor.measure.ert.run import QUICK, characterise

        print(f"ERT (quick, budget {QUICK.total_budget_s:.0f} s)", flush=True)
        raw = characterise(QUICK, command="predict calibrate " + " ".join(argv or sys.argv[1:]),
                           progress=lambda line: print(line, flush=True))
    write_json(raw, raw_path)
    profile_doc = build_profile(raw, {}, name=args.name, raw_data=raw_path.name)
    profile_path = write_json(profile_doc, out / f"{args.name}.json")
    print(f"wrote {profile_path} ({time.monotonic() - t0:.0f} s)", flush=True)

    if args.from_microbench is not None:
        csv_path = args.from_microbench
    else:
        bench = out / "microbench"
        cmd = [sys.executable, "-m", "calibration.networks.microbench", "--out", str(bench), "--families",
               ",".join(FAMILIES), "--precisions", ",".join(PRECISIONS), "--max-seconds", str(args.max_seconds),
               "--per-family-limit", str(args.per_family), "--no-kernel-count"]
        print("kernels: " + " ".join(cmd), flush=True)
        if subprocess.run(cmd).returncode != 0:
            return _err("the kernel subset failed (is PyTorch with CUDA installed?)")
        csv_path = bench / "microbench.csv"
    try:
        rows = _microbench_rows(csv_path)
    except (OSError, KeyError) as e:
        return _err(f"cannot read microbenchmark rows {csv_path}: {e}")

    from importlib import resources

    from predictor.fitted import FittedCalibration, parse_calibration
    from predictor.machine.profile import load_profile

    profile = load_profile(str(profile_path))
    base = parse_calibration(json.loads(resources.files("predictor").joinpath("data", "calibration_h200.json")
                                        .read_text()), "calibration_h200.json")
    from calibration.fit.micro_fit import microbench_rows

    h200_cal = FittedCalibration(base, "calibration_h200.json")
    ratios = kernel_ratios(rows, profile, h200_cal)
    reference = kernel_ratios(microbench_rows(FAMILIES), load_profile("h200"), h200_cal)
    doc = scaled_calibration(base, ratios, args.name, f"{len(rows)} microbenchmark rows of {csv_path.name} "
                             f"({', '.join(FAMILIES)}) on profile {profile_path.name}, relative to the H200's "
                             "microbenchmark runs (calibration/data/h200/microbench)", reference)
    parse_calibration(doc, "quick calibration")
    cal_path = write_json(doc, out / f"calibration_{args.name}.json")
    for k, v in doc["quick_calibration"]["scaled"].items():
        print(f"  {k:<24} x{v['factor']:.3g} from {v['kernels']} kernels")
    print(f"wrote {cal_path} ({time.monotonic() - t0:.0f} s); use: predict MODEL.onnx --gpu {profile_path} "
          f"--calibration {cal_path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
