"""Grid-sweep throughput: settings per second of ``predict sweep GRID.yaml`` at 1 and 2 worker processes.

The grid: ResNet-50 and BERT-base (examples/) x v100,a100,h100,h200 x fp32,tf32,fp16,fp8 x batch 1,8,32,128
= 128 settings (32 of them n/a: the V100 has no tf32/fp8 ceiling, the A100 no fp8; an n/a setting costs a
prediction attempt too). Each run is the whole command in a fresh process (``predict sweep`` with ``--workers
N`` and a new output file, so nothing is resumed): process start, imports, worker start-up, the predictions and
the CSV. Median of ``--repeat`` runs after one warm-up, the worker counts interleaved. Writes
``benchmarks/results/gridsweep.json``. The machine's core count and load bound what 2 workers can gain (see
"machine" in the result: on a machine whose cores other work shares, 2 workers may gain little).

    python benchmarks/bench_gridsweep.py [--repeat 3] [--workers 1,2]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _measure import REPO, machine_info, measure_interleaved, predict_cmd  # noqa: E402

GRID = {"models": [str(REPO / "examples" / "resnet50.onnx"), str(REPO / "examples" / "bert_base.onnx")],
        "gpus": ["v100", "a100", "h100", "h200"], "precisions": ["fp32", "tf32", "fp16", "fp8"],
        "batches": [1, 8, 32, 128]}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--workers", default="1,2")
    p.add_argument("--out", type=Path, default=HERE / "results" / "gridsweep.json")
    args = p.parse_args(argv)
    workers = [int(w) for w in args.workers.split(",")]
    settings = 1
    for k in ("models", "gpus", "precisions", "batches"):
        settings *= len(GRID[k])
    with tempfile.TemporaryDirectory() as tmp:
        grid = Path(tmp) / "grid.json"
        grid.write_text(json.dumps(GRID))
        # a fresh output per run: the command name carries a unique path, removed before each run by a wrapper
        cmds = {}
        for w in workers:
            out = Path(tmp) / f"out{w}.csv"
            cmds[f"workers_{w}"] = ["/bin/sh", "-c", f"rm -f {out} && exec \"$@\"", "sh", *predict_cmd(), "sweep",
                                   str(grid), "--out", str(out), "--workers", str(w), "--quiet"]
        runs = measure_interleaved(cmds, repeat=args.repeat, warmup=1)
        rows = sum(1 for _ in open(Path(tmp) / f"out{workers[0]}.csv")) - 1
    result = {
        "what": "predict sweep GRID --workers N, whole process, fresh output file each run",
        "grid": {k: [os.path.relpath(m, REPO) for m in v] if k == "models" else v for k, v in GRID.items()},
        "settings": settings,
        "rows_written": rows,
        "repeat": args.repeat,
        "runs": runs,
        "settings_per_s": {k: settings / v["wall_s_median"] for k, v in runs.items()},
        "machine": machine_info(),
        "reproduce": "python benchmarks/bench_gridsweep.py",
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    for k, v in result["settings_per_s"].items():
        print(f"{k}: {v:.3g} settings/s (median wall {runs[k]['wall_s_median']:.2f} s for {settings} settings)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
