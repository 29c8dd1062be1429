"""The data-parallel scaling model against published measurements.

    python -m calibration.evaluate.scaling_accuracy [--out calibration/data/published/scaling_accuracy]

Reads ``calibration/data/published/scaling_published.json`` (each number copied from its source address,
with what the comparison assumes), predicts each figure with ``predictor.distributed`` and writes
``scaling_accuracy.json`` and ``scaling_accuracy.md`` (error = predicted / published - 1).
Kinds: ``speedup`` (N-GPU over 1-GPU throughput at the same per-GPU batch), ``busbw`` (nccl-tests bus
bandwidth, GB/s), ``efficiency`` (scaling efficiency at a GPU count).
It then compares the collective model with the published nccl-tests rows of
``calibration/data/published/nccl_tests_published.json`` size by size (``calibration/evaluate/nccl_tests_accuracy.py``)
and writes them into the same outputs (``nccl_tests`` in the JSON, a second section in the Markdown).
"""
from __future__ import annotations

import argparse
import json
import os
from dataclasses import replace

from calibration.evaluate import nccl_tests_accuracy
from predictor.calibrate import Uncalibrated
from predictor.distributed.collectives import collective_time, layout_for
from predictor.distributed.ddp import DPConfig
from predictor.distributed.gradients import step_profile
from predictor.distributed.scaling import sweep
from predictor.distributed.system import load_system
from predictor.fitted import bundled_calibration
from predictor.machine.profile import load_profile
from predictor.types import MemLevel

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # calibration/
TABLE = os.path.join(HERE, "data", "published", "scaling_published.json")
OUT = os.path.join(HERE, "data", "published", "scaling_accuracy")
ROOT = os.path.dirname(HERE)


def _system(check: dict):
    s = load_system(check["system"])
    for path, value in check.get("system_overrides", {}).items():
        section, key = path.split(".")
        part = getattr(s, "inter" if section == "inter_node" else "intra")
        part = replace(part, **{key: type(getattr(part, key))(value)})
        s = replace(s, **{"inter" if section == "inter_node" else "intra": part})
    return s


def _shapes(check: dict) -> dict:
    if "shape" not in check:
        return {}
    name, dims = check["shape"].split("=")
    return {name: tuple(int(d) for d in dims.split(","))}


def _steps(check: dict, profile):
    cal = bundled_calibration(profile) or Uncalibrated()
    models = check.get("models") or [check["model"]]
    return [step_profile(os.path.join(ROOT, m), profile, precision=check["precision"], batch=check.get("batch"),
                         shapes=_shapes(check), calibration=cal, optimizer=check.get("optimizer", "adamw"),
                         loss=check.get("loss", "cross_entropy")) for m in models]


def predict_check(check: dict) -> dict:
    system = _system(check)
    kind = check["kind"]
    out = {"id": check["id"], "kind": kind, "system": system.name, "gpus": check["gpus"],
           "published": check["published"], "source": check["source"]}
    if kind == "busbw":
        c = collective_time(check["op"], check["size_bytes"], system, layout_for(system, check["gpus"]),
                            nvls=check.get("nvls", True))
        out.update(predicted=c.busbw_Bps / 1e9, algorithm=f"{c.algorithm}/{c.protocol}",
                   detail=f"{check['op']} {check['size_bytes'] / 2**20:g} MiB on {check['gpus']} GPUs")
    else:
        profile = load_profile(system.gpu)
        parts = _steps(check, profile)
        cfg = DPConfig(accumulate=int(check.get("accumulate", 1)), input_rate=float(check.get("input_rate", 0.0)))
        n = check["gpus"]
        hybrid = check.get("hybrid_group")
        sc = sweep(parts, system, [1, n], cfg, profile.bandwidth(MemLevel.HBM), hybrid)
        r = sc.rows[-1]
        if kind == "speedup":
            out.update(predicted=r.speedup, detail=f"{check['precision']} on {profile.name}, step "
                       f"{sc.rows[0].step_s * 1e3:.2f} ms -> {r.step_s * 1e3:.2f} ms, exposed comm "
                       f"{r.exposed_comm_s * 1e3:.2f} ms")
        else:
            pred = r.hybrid_efficiency if hybrid else r.efficiency
            head = f"hybrid groups of {hybrid}: {pred:.1%} (staleness {r.hybrid_staleness}); " if hybrid else ""
            out.update(predicted=pred, synchronous=r.efficiency,
                       detail=f"{(pred - check['published']) * 100:+.1f} points; {head}fully synchronous DDP "
                              f"{r.efficiency:.1%}; one-GPU step {sc.rows[0].step_s * 1e3:.3f} ms, exposed comm "
                              f"{r.exposed_comm_s * 1e3:.2f} ms")
    out["error"] = out["predicted"] / check["published"] - 1.0
    out["assumptions"] = check.get("assumptions", [])
    return out


def _fmt(kind: str, v: float) -> str:
    return f"{v:.1f} GB/s" if kind == "busbw" else f"{v:.1%}" if kind == "efficiency" else f"{v:.2f}x"


def to_markdown(rows: list[dict]) -> str:
    lines = ["| check | kind | GPUs | published | predicted | error | detail |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        lines.append(f"| [{r['id']}]({r['source']}) | {r['kind']} | {r['gpus']} | {_fmt(r['kind'], r['published'])} | "
                     f"{_fmt(r['kind'], r['predicted'])} | {r['error']:+.1%} | {r.get('detail', '')} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--table", default=TABLE)
    ap.add_argument("--nccl-tests", default=nccl_tests_accuracy.TABLES, help="published nccl-tests rows")
    ap.add_argument("--out", default=OUT, help="output path without extension (.json and .md are written)")
    args = ap.parse_args(argv)
    with open(args.table, encoding="utf-8") as f:
        checks = json.load(f)["checks"]
    rows = [predict_check(c) for c in checks]
    nrows, groups, ndoc = nccl_tests_accuracy.run(args.nccl_tests)
    with open(args.out + ".json", "w", encoding="utf-8") as f:
        json.dump({"table": os.path.relpath(args.table, ROOT), "rows": rows,
                   "nccl_tests": {"table": os.path.relpath(args.nccl_tests, ROOT), "summary": groups,
                                  "rows": nrows}}, f, indent=1)
    md = (to_markdown(rows) + "\n## nccl-tests all_reduce_perf rows, size by size\n\n"
          "error = published time / predicted time - 1 (= predicted busbw / published busbw - 1)\n\n"
          + nccl_tests_accuracy.to_markdown(nrows, groups, ndoc))
    with open(args.out + ".md", "w", encoding="utf-8") as f:
        f.write(md)
    print(to_markdown(rows))
    by = {}
    for r in rows:
        by.setdefault(r["kind"], []).append(abs(r["error"]))
    for k, v in by.items():
        print(f"{k}: {len(v)} checks, mean |error| {sum(v) / len(v):.1%}, worst {max(v):.1%}")
    print(f"nccl-tests rows: {len(nrows)} in {len(ndoc['tables'])} tables")
    for g in groups:
        if g["table"].startswith("all "):
            print(f"  {g['table']}, {g['range']}: {g['rows']} rows, median {g['median_error']:+.1%}, "
                  f"mean |error| {g['mean_abs_error']:.1%}, worst {g['worst_error']:+.1%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
