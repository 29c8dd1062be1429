"""Predicted vs published speed of real networks on other GPUs (calibration/data/published/).

    python -m calibration.evaluate.published_accuracy [--csv FILE] [--latency-csv FILE] [--json OUT.json]
        [--graph-time]

Two suites of published rows:

* ``throughput.csv`` (suite ``DLE``): a (GPU, network, precision, batch) throughput of NVIDIA's DeepLearningExamples
  tables (PyTorch eager with torch.cuda.amp; TensorFlow 1 with TF-AMP), compared with our ONNX graph of the network;
* ``neusight.csv`` (suite ``NeuSight``): a (GPU, model, sequence, batch) latency of the NeuSight artifact (ASPLOS
  2025; PyTorch 2.1 eager HuggingFace transformers at fp32: BERT-large, GPT-2-large, GPT-3-XL/2.7B-shaped and
  OPT-1.3B, inference and training steps without the optimizer), compared with the eager program of the model
  written by calibration/evaluate/published_graphs.py; a training row is the predicted forward + backward phases.

We predict the same network at the same batch and precision on the bundled profile of that GPU with the bundled
calibration (the H200 fit, transferred: predictor/machine/transfer.py) and compare throughput = batch / predicted
time (a latency row's published throughput is batch / its latency).

The predicted time is ``eager_time_s`` (kernels issued one by one by the host, as these frameworks run them), or
with ``--graph-time`` the CUDA-graph time ``total_time_s``. What it assumes: the published stack runs the kernels
our model expects (cuDNN/cuBLAS through PyTorch/TF, no TensorRT, no graph fusion beyond what we model), data
loading is not in the timed loop, and the GPU runs at its boost clock. The benchmark loops also time the
framework's per-iteration work (Python, session.run, copies), which is why small batches are far slower than
any GPU model predicts. So the report also gives MAPE over *GPU-bound rows*, chosen from the published numbers
alone: rows whose published average latency is at least twice the batch-1 latency of the same table (the
fixed per-iteration cost is under half the time). Every NeuSight row is GPU-bound by the same reasoning: where the
artifact has two batch sizes of a model on a GPU, the fixed per-iteration cost they imply (latency = F + batch x v)
is at most 29% of the smaller batch's latency.
"""
from __future__ import annotations

import argparse
import csv
import json
import statistics
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CSV = REPO / "calibration" / "data" / "published" / "throughput.csv"
LATENCY_CSV = REPO / "calibration" / "data" / "published" / "neusight.csv"
BUILT = "neusight:"  # ``onnx`` of a row whose graph calibration/evaluate/published_graphs.py builds: neusight:MODEL


@dataclass(frozen=True)
class Row:
    source: str
    table: str
    gpu: str
    network: str
    onnx: str
    precision: str
    batch: int
    published: float  # throughput, items/s
    latency_ms: float
    unit: str
    gpu_bound: bool = False
    suite: str = "DLE"
    mode: str = "infer"  # infer | train (forward + backward, no optimizer step)
    seq_len: int = 0

    @property
    def group(self) -> str:
        """The GPU and the suite its row comes from: ``t4 [DLE]``."""
        return f"{self.gpu} [{self.suite}]"


@dataclass(frozen=True)
class Result:
    row: Row
    predicted: float  # throughput, items/s
    error: float  # predicted / published - 1


def read_rows(path: Path = CSV) -> list[Row]:
    with open(path, newline="", encoding="utf-8") as f:
        raw = list(csv.DictReader(f))
    rows = [Row(r["source"], r["table"], r["gpu_profile"], r["network"], r["onnx"], r["precision"], int(r["batch"]),
                float(r["throughput_published"]), float(r["latency_avg_ms_published"]), r["unit"]) for r in raw]
    base = {(r.source, r.table, r.precision): r.latency_ms for r in rows if r.batch == 1}
    return [Row(**{**asdict(r), "gpu_bound": r.latency_ms >= 2.0 * base.get((r.source, r.table, r.precision),
                                                                             float("inf"))}) for r in rows]


def read_latency_rows(path: Path = LATENCY_CSV) -> list[Row]:
    """The NeuSight rows: latency per batch of ``seq_len`` tokens; throughput = batch / latency (sequences/s)."""
    with open(path, newline="", encoding="utf-8") as f:
        raw = list(csv.DictReader(f))
    return [Row(r["source"], r["table"], r["gpu_profile"], r["network"], BUILT + r["network"], r["precision"],
                int(r["batch"]), 1000.0 * int(r["batch"]) / float(r["latency_ms_published"]),
                float(r["latency_ms_published"]), "sequences/s", gpu_bound=True, suite="NeuSight", mode=r["mode"],
                seq_len=int(r["seq_len"])) for r in raw]


def _graph(r: Row):
    from predictor.graph.loader import load, load_model_proto

    if not r.onnx.startswith(BUILT):
        return load(str(REPO / r.onnx), batch=r.batch)
    from .published_graphs import build

    return load_model_proto(build(r.onnx[len(BUILT):], r.seq_len, training=r.mode == "train"), batch=r.batch)


def _time_s(graph, prof, cal, r: Row, graph_time: bool) -> float:
    """Predicted seconds of the row's program: eager (or CUDA-graph) time of inference, or of a training step's
    forward + backward (the optimizer phase excluded: the published steps have none)."""
    from predictor.predict import predict_graph

    if r.mode == "train":
        from predictor.train import predict_training_graph

        pred = predict_training_graph(graph, prof, r.precision, cal, batch=r.batch, loss="cross_entropy")
        phases = [pred.phase(p) for p in ("forward", "backward")]
        if graph_time or any(p.eager_time_s is None for p in phases):
            return sum(p.time_s for p in phases)
        return sum(p.eager_time_s for p in phases)
    pred = predict_graph(graph, prof, r.precision, cal, batch=r.batch)
    return pred.total_time_s if graph_time or pred.eager_time_s is None else pred.eager_time_s


def predict_rows(rows: list[Row], graph_time: bool = False) -> list[Result]:
    from predictor.fitted import bundled_calibration
    from predictor.machine.profile import load_profile

    out, graphs, profiles = [], {}, {}
    for r in rows:
        if r.gpu not in profiles:
            prof = load_profile(r.gpu)
            profiles[r.gpu] = (prof, bundled_calibration(prof))
        prof, cal = profiles[r.gpu]
        key = (r.onnx, r.batch, r.seq_len, r.mode)
        if key not in graphs:
            graphs[key] = _graph(r)
        thr = r.batch / _time_s(graphs[key], prof, cal, r, graph_time)
        out.append(Result(r, thr, thr / r.published - 1.0))
    return out


def _mape(rs: list[Result]) -> float | None:
    return 100.0 * statistics.fmean(abs(x.error) for x in rs) if rs else None


def summary(results: list[Result]) -> dict:
    by_gpu: dict[str, list[Result]] = {}
    for x in results:
        by_gpu.setdefault(x.row.group, []).append(x)

    def block(rs):
        bound = [x for x in rs if x.row.gpu_bound]
        return {"rows": len(rs), "mape_pct": _mape(rs), "signed_mean_pct": 100 * statistics.fmean(x.error for x in rs),
                "gpu_bound_rows": len(bound), "gpu_bound_mape_pct": _mape(bound)}

    groups: dict[tuple, list[Result]] = {}
    for x in results:
        prec = x.row.precision if x.row.mode == "infer" else f"{x.row.precision} train"
        groups.setdefault((x.row.group, x.row.network, prec), []).append(x)
    return {
        "all": block(results),
        "by_gpu": {g: block(rs) for g, rs in sorted(by_gpu.items())},
        "by_gpu_network_precision": [{"gpu": g, "network": n, "precision": p, **block(rs)}
                                     for (g, n, p), rs in sorted(groups.items())],
        "rows": [{"gpu": x.row.gpu, "suite": x.row.suite, "network": x.row.network, "mode": x.row.mode,
                  "precision": x.row.precision, "batch": x.row.batch, "seq_len": x.row.seq_len,
                  "published": x.row.published, "predicted": round(x.predicted, 2), "error_pct": round(100 * x.error, 1),
                  "gpu_bound": x.row.gpu_bound, "unit": x.row.unit} for x in results],
    }


def _fmt(v) -> str:
    return "-" if v is None else f"{v:.1f}%"


def to_table(s: dict, what: str) -> str:
    lines = [f"predicted ({what}) vs published throughput (DLE: DeepLearningExamples tables; NeuSight: its artifact)",
             f"{'gpu [suite]':<27} {'rows':>4} {'MAPE':>7} {'signed':>7} {'bound':>5} {'MAPE bound':>10}"]
    for g, b in list(s["by_gpu"].items()) + [("all", s["all"])]:
        lines.append(f"{g:<27} {b['rows']:>4} {_fmt(b['mape_pct']):>7} {_fmt(b['signed_mean_pct']):>7} "
                     f"{b['gpu_bound_rows']:>5} {_fmt(b['gpu_bound_mape_pct']):>10}")
    lines.append("")
    lines.append(f"{'gpu [suite]':<27} {'network':<16} {'precision':<10} {'rows':>4} {'MAPE':>7} {'signed':>7} "
                 f"{'MAPE bound':>10}")
    for b in s["by_gpu_network_precision"]:
        lines.append(f"{b['gpu']:<27} {b['network']:<16} {b['precision']:<10} {b['rows']:>4} {_fmt(b['mape_pct']):>7} "
                     f"{_fmt(b['signed_mean_pct']):>7} {_fmt(b['gpu_bound_mape_pct']):>10}")
    lines.append("signed: mean of predicted / published - 1 (positive: we predict faster than published); "
                 "bound: GPU-bound rows (published latency >= 2x the table's batch-1 latency)")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m calibration.evaluate.published_accuracy",
                                description=__doc__.split("\n")[0])
    p.add_argument("--csv", type=Path, default=CSV)
    p.add_argument("--latency-csv", type=Path, default=LATENCY_CSV, help="the NeuSight latency rows ('' for none)")
    p.add_argument("--json", type=Path, default=None, help="write the summary and every row's error here")
    p.add_argument("--graph-time", action="store_true", help="compare the CUDA-graph time instead of the eager time")
    args = p.parse_args(argv)
    rows = read_rows(args.csv) + (read_latency_rows(args.latency_csv) if str(args.latency_csv) not in ("", ".")
                                  else [])
    results = predict_rows(rows, args.graph_time)
    s = summary(results)
    what = "CUDA-graph time" if args.graph_time else "eager time"
    sys.stdout.write(to_table(s, what))
    if args.json:
        args.json.write_text(json.dumps({"compared_with": what, **s}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
