"""Recurrent training accuracy: ``predict --mode train`` against the LSTM / GRU steps rnn_steps measured.

    python -m calibration.evaluate.rnn_training_accuracy --csv RNN_STEPS.csv [--out DIR] [--gpu h200]

Measured: calibration/training/rnn_steps.py's CSV (one row per cell, layers, directions, precision, hidden H,
sequence S, batch B, input I: GPU time of forward + MSE loss + backward, in a CUDA graph where it captured).
Predicted: the same network built here as ONNX, as PyTorch's exporter writes ``nn.LSTM`` / ``nn.GRU`` (one
LSTM/GRU node per layer with W [D, G H, I], R [D, G H, H], B [D, 2 G H]; GRU with ``linear_before_reset=1``;
Y [S, D, B, H] to [S, B, D H] by Squeeze (one direction) or Transpose + Reshape (two) before the next layer),
input x[S, B, I] as data (no gradient), predicted with the bundled calibration as one training step with the
MSE loss; its forward and backward phases are compared (the optimizer phase is not measured).

Per row (error = predicted / measured - 1):

* ``step_error``: forward + backward against ``graph_step_s`` (the captured step) when the row has it, else
  ``eager_step_s`` (CUDA events around an eager step: GPU time with launch gaps); ``reference`` says which;
* ``forward_error`` / ``backward_error``: against the graph's (else eager) phase marks where measured.

NB: at fp16 the predictor's training step includes loss scaling (GradScaler) kernels that the measured half
module (no scaler) does not run: a few small kernels. Rows with an ``error`` are listed and not scored.
Writes rnn_training_accuracy.json (provenance, every row, summaries) and rnn_training_accuracy.md.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import json
import math
import statistics
import sys
from pathlib import Path

GATES = {"lstm": 4, "gru": 3}
OUT = Path(__file__).resolve().parents[1] / "data" / "h200" / "accuracy"


def build_rnn(cell: str, layers: int, directions: int, hidden: int, seq: int, batch: int, inp: int):
    """The ONNX graph PyTorch's exporter writes for ``nn.LSTM``/``nn.GRU(inp, hidden, layers,
    bidirectional=directions == 2)`` over x[seq, batch, inp] (weights without values: only shapes count)."""
    from onnx import TensorProto, helper

    g = GATES[cell]
    d, h = directions, hidden
    nodes, inits = [], []

    def weight(name, dims):
        t = TensorProto(name=name, data_type=TensorProto.FLOAT, dims=dims)
        t.data_location = TensorProto.EXTERNAL   # shapes only: the loader never reads weights
        t.external_data.add(key="location", value="none.bin")
        inits.append(t)
        return name

    x, width = "x", inp
    for layer in range(layers):
        p = f"/rnn/l{layer}"
        attrs = {"hidden_size": h}
        if d == 2:
            attrs["direction"] = "bidirectional"
        if cell == "gru":
            attrs["linear_before_reset"] = 1
        ins = [x, weight(f"{p}.W", [d, g * h, width]), weight(f"{p}.R", [d, g * h, h]), weight(f"{p}.B", [d, 2 * g * h])]
        nodes.append(helper.make_node(cell.upper(), ins, [f"{p}.Y"], name=f"{p}/{cell.upper()}", **attrs))
        out = f"{p}.out" if layer < layers - 1 else "y"
        if d == 1:
            inits.append(helper.make_tensor(f"{p}.axes", TensorProto.INT64, [1], [1]))
            nodes.append(helper.make_node("Squeeze", [f"{p}.Y", f"{p}.axes"], [out], name=f"{p}/Squeeze"))
        else:
            inits.append(helper.make_tensor(f"{p}.shape", TensorProto.INT64, [3], [0, 0, -1]))
            nodes += [helper.make_node("Transpose", [f"{p}.Y"], [f"{p}.T"], perm=[0, 2, 1, 3], name=f"{p}/Transpose"),
                      helper.make_node("Reshape", [f"{p}.T", f"{p}.shape"], [out], name=f"{p}/Reshape")]
        x, width = out, d * h
    graph = helper.make_graph(nodes, f"{cell}_{layers}x{d}", [helper.make_tensor_value_info(
        "x", TensorProto.FLOAT, [seq, batch, inp])], [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        initializer=inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="rnn_training_accuracy")


def predict_row(row: dict, profile, calibration):
    """The predicted training step (a TrainingPrediction) of one measured row's network."""
    from predictor.graph.loader import load_model_proto
    from predictor.train import predict_training_graph

    model = build_rnn(row["cell"], row["layers"], row["directions"], row["hidden"], row["seq"], row["batch"],
                      row["input"])
    g = load_model_proto(model, path=f"{row['cell']}.onnx")
    return predict_training_graph(g, profile, row["precision"], calibration, batch=row["batch"], loss="mse")


def _err(pred: float, meas: float) -> float:
    return pred / meas - 1.0 if meas and meas > 0 and not math.isnan(meas) else math.nan


def compare(rows: list[dict], profile, calibration) -> list[dict]:
    out = []
    for r in rows:
        key = {k: r[k] for k in ("cell", "layers", "directions", "precision", "hidden", "seq", "batch", "input")}
        if r.get("error"):
            out.append({**key, "skipped": r["error"]})
            continue
        graph = not math.isnan(r["graph_step_s"])
        ref = "graph" if graph else "eager"
        meas = {ph: r[f"{ref}_{ph}_s"] for ph in ("step", "forward", "backward")}
        tp = predict_row(r, profile, calibration)
        fwd, bwd = tp.phase("forward").time_s, tp.phase("backward").time_s
        out.append({**key, "reference": ref, "measured_s": meas,
                    "predicted_s": {"step": fwd + bwd, "forward": fwd, "backward": bwd},
                    "step_error": _err(fwd + bwd, meas["step"]), "forward_error": _err(fwd, meas["forward"]),
                    "backward_error": _err(bwd, meas["backward"]),
                    "unsupported": dict(tp.unsupported)})
    return out


def _mape(errs) -> float | None:
    vals = [abs(e) for e in errs if e is not None and not math.isnan(e)]
    return round(100 * statistics.mean(vals), 1) if vals else None


def summarise(results: list[dict]) -> dict:
    scored = [r for r in results if "step_error" in r]
    groups: dict[str, list[dict]] = {}
    for r in scored:
        for g in (r["cell"], r["precision"], f"{r['directions']} direction(s)", f"{r['layers']} layer(s)",
                  f"batch {r['batch']}"):
            groups.setdefault(g, []).append(r)
    return {"rows": len(results), "scored": len(scored), "skipped": len(results) - len(scored),
            "step_mape_pct": _mape(r["step_error"] for r in scored),
            "forward_mape_pct": _mape(r["forward_error"] for r in scored),
            "backward_mape_pct": _mape(r["backward_error"] for r in scored),
            "by_group_step_mape_pct": {g: _mape(r["step_error"] for r in rs) for g, rs in sorted(groups.items())}}


def markdown(doc: dict) -> str:
    s = doc["summary"]
    lines = ["# Recurrent training steps: predicted against measured", "",
             f"{doc['provenance']['csv']} ({s['scored']} rows scored, {s['skipped']} skipped); "
             f"`{doc['provenance']['command']}`", "",
             f"MAPE: step {s['step_mape_pct']}%, forward {s['forward_mape_pct']}%, backward {s['backward_mape_pct']}%",
             "", "| group | step MAPE % |", "| --- | ---: |"]
    lines += [f"| {g} | {v} |" for g, v in s["by_group_step_mape_pct"].items()]
    lines += ["", "| cell | L | D | prec | H | S | B | ref | measured ms | predicted ms | error % |",
              "| --- | ---: | ---: | --- | ---: | ---: | ---: | --- | ---: | ---: | ---: |"]
    for r in doc["rows"]:
        if "step_error" not in r:
            continue
        lines.append(f"| {r['cell']} | {r['layers']} | {r['directions']} | {r['precision']} | {r['hidden']} | "
                     f"{r['seq']} | {r['batch']} | {r['reference']} | {r['measured_s']['step'] * 1e3:.3f} | "
                     f"{r['predicted_s']['step'] * 1e3:.3f} | {100 * r['step_error']:+.1f} |")
    return "\n".join(lines) + "\n"


def _clean(x):
    """NaN (not measured) as null, for strict JSON."""
    if isinstance(x, float) and math.isnan(x):
        return None
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_clean(v) for v in x]
    return x


def main(argv: list[str] | None = None) -> int:
    from predictor.fitted import bundled_calibration
    from predictor.machine.profile import load_profile

    from calibration.training.rnn_steps import read_csv

    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--csv", required=True, help="rnn_steps.py's CSV")
    p.add_argument("--out", default=str(OUT), help="folder for rnn_training_accuracy.json and .md")
    p.add_argument("--gpu", default="h200")
    a = p.parse_args(argv)
    profile = load_profile(a.gpu)
    cal = bundled_calibration(profile)
    results = compare(read_csv(a.csv), profile, cal)
    doc = {"provenance": {"what": "predict --mode train (forward + backward, MSE loss) against rnn_steps.py",
                          "csv": a.csv, "gpu": profile.name, "calibration": getattr(cal, "name", "none"),
                          "command": "python -m calibration.evaluate.rnn_training_accuracy --csv " + a.csv,
                          "date_utc": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")},
           "summary": summarise(results), "rows": results}
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "rnn_training_accuracy.json").write_text(json.dumps(_clean(doc), indent=1, allow_nan=False) + "\n")
    (out / "rnn_training_accuracy.md").write_text(markdown(doc))
    s = doc["summary"]
    print(f"{s['scored']} rows: step MAPE {s['step_mape_pct']}%, forward {s['forward_mape_pct']}%, "
          f"backward {s['backward_mape_pct']}%; wrote {out}/rnn_training_accuracy.json and .md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
