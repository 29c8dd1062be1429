"""Coverage over the onnx package's own test models: how many predict with all their work costed.

Sources (whatever the installed ``onnx`` ships or generates):
  * shipped: ``onnx/backend/test/data/{pytorch-converted,pytorch-operator,simple}/*/model.onnx`` and
    ``light/light_*.onnx`` (real CNNs: AlexNet, DenseNet-121, Inception, ResNet-50, ShuffleNet, SqueezeNet, VGG...)
    (loaded from the file, as ``predict FILE`` does);
  * generated: the backend node tests, ``onnx.backend.test.case.node.collect_testcases()`` (one model per
    test case, built in memory by the package's own case generators; the wheel does not ship their files).
Each model is predicted on the bundled H200 profile (fp32, the bundled calibration, default batch 1) and
counted as: ``costed`` (no op left out), ``named`` (predicted, naming the ops it could not cost, with
counts), ``refused`` (a one-line error: the reason is recorded) or ``crashed`` (any other exception: a bug).
A named model whose uncosted ops are mostly unknown shapes is also counted under ``cli_needs_allow_partial``:
the ``predict`` command prints it only with ``--allow-partial`` (predictor/coverage.py).

    python benchmarks/onnx_coverage.py [--out benchmarks/results/onnx_coverage.json] [--limit N]

Writes the JSON (provenance, counts per source, refusal reasons, the op types left uncosted with how many
models each, every model's outcome), the same summary as Markdown beside it (``.md``), and prints it.
"""
from __future__ import annotations

import argparse
import contextlib
import datetime as _dt
import io
import json
import os
import sys
import time
import warnings
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SHIPPED = ("light", "pytorch-converted", "pytorch-operator", "simple")


def shipped_models() -> list[tuple[str, str, object]]:
    import onnx

    base = Path(onnx.__file__).parent / "backend" / "test" / "data"
    out = []
    for kind in SHIPPED:
        for path in sorted((base / kind).glob("*/model.onnx")):
            out.append((kind, path.parent.name, str(path)))
        for path in sorted((base / kind).glob("*.onnx")):   # light/light_<model>.onnx
            out.append((kind, path.stem, str(path)))
    return out


def generated_models() -> list[tuple[str, str, object]]:
    from onnx.backend.test.case import node

    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        cases = node.collect_testcases(None)
    return [("node", c.name, c.model) for c in cases]


def classify(source, profile, calibration) -> tuple[str, str, dict]:
    """(status, reason, uncosted op counts) of one model (a path or a ModelProto)."""
    from predictor.graph.loader import load, load_model_proto
    from predictor.predict import predict_graph
    from predictor.types import PredictorError

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            g = load(source) if isinstance(source, str) else load_model_proto(_copy(source))
            pred = predict_graph(g, profile, "fp32", calibration)
    except PredictorError as e:
        return "refused", " ".join(str(e).split())[:300], {}
    except Exception as e:  # noqa: BLE001 - counted: a crash is a bug to fix
        return "crashed", f"{type(e).__name__}: {' '.join(str(e).split())[:250]}", {}
    if pred.unsupported:
        from predictor.coverage import require_coverage

        try:
            require_coverage(pred, allow_partial=False)
            note = ""
        except PredictorError:
            note = "cli: --allow-partial"
        return "named", note, dict(pred.unsupported)
    return "costed", "", {}


def _copy(m):
    c = type(m)()
    c.CopyFrom(m)
    return c


def _reason_key(reason: str) -> str:
    """A refusal reason without the names it quotes (for grouping)."""
    import re

    return re.sub(r"'[^']*'", "'…'", reason.split("; bind it with")[0])[:160]


def run(limit: int = 0) -> dict:
    import onnx

    from predictor.fitted import bundled_calibration
    from predictor.machine.profile import load_profile
    from predictor.calibrate import Uncalibrated

    profile = load_profile("h200")
    cal = bundled_calibration(profile) or Uncalibrated()
    t0 = time.perf_counter()
    models = shipped_models() + generated_models()
    if limit:
        models = models[:limit]
    rows = []
    for kind, name, src in models:
        status, reason, uncosted = classify(src, profile, cal)
        rows.append({"source": kind, "model": name, "status": status,
                     **({"reason": reason} if reason else {}), **({"uncosted": uncosted} if uncosted else {})})
    by_source: dict[str, Counter] = {}
    for r in rows:
        by_source.setdefault(r["source"], Counter())[r["status"]] += 1
    total = Counter(r["status"] for r in rows)
    missing = Counter()
    for r in rows:
        for op in r.get("uncosted", {}):
            missing[op] += 1
    refusals = Counter(_reason_key(r["reason"]) for r in rows if r["status"] == "refused")
    uncosted_ops = Counter()
    for r in rows:
        for op, n in r.get("uncosted", {}).items():
            uncosted_ops[op] += n
    crashes = Counter(r["reason"] for r in rows if r["status"] == "crashed")
    return {
        "provenance": {"what": "predict over the onnx package's shipped and generated backend test models",
                       "command": "python benchmarks/onnx_coverage.py", "onnx": onnx.__version__,
                       "date_utc": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                       "gpu": "h200", "precision": "fp32", "calibration": cal.name,
                       "elapsed_s": round(time.perf_counter() - t0, 1)},
        "counts": {"total": len(rows), **{k: total.get(k, 0) for k in ("costed", "named", "refused", "crashed")},
                   "cli_needs_allow_partial": sum(1 for r in rows if r.get("reason") == "cli: --allow-partial")},
        "by_source": {k: dict(v) for k, v in by_source.items()},
        "uncosted_op_types": dict(missing.most_common()),
        "uncosted_op_counts": dict(uncosted_ops.most_common()),
        "refusal_reasons": dict(refusals.most_common()),
        "crashes": dict(crashes.most_common()),
        "models": rows,
    }


def markdown(doc: dict) -> str:
    """The summary as a Markdown page: outcomes per source, then every uncosted op type with its counts."""
    c, p = doc["counts"], doc["provenance"]
    lines = [f"# predict over the onnx package's test models (onnx {p['onnx']})", "",
             f"`{p['command']}` on {p['date_utc']}: {p['gpu']}, {p['precision']}, calibration `{p['calibration']}`.",
             "", f"{c['total']} models: **{c['costed']} costed fully**, **{c['named']} named** what they could not "
             f"cost (op type and count), **{c['refused']} refused**, **{c['crashed']} crashed**. Of the named, "
             f"{c.get('cli_needs_allow_partial', 0)} have mostly unknown shapes (sizes that are graph inputs): "
             "`predict` prints them with `--allow-partial`.", "",
             "| source | costed | named | refused | crashed |", "| --- | ---: | ---: | ---: | ---: |"]
    for k, v in doc["by_source"].items():
        lines.append(f"| {k} | " + " | ".join(str(v.get(s, 0)) for s in ("costed", "named", "refused", "crashed"))
                     + " |")
    lines += ["", "## Not costed (op type: models naming it, instances)", "", "| op | models | instances |",
              "| --- | ---: | ---: |"]
    counts = doc.get("uncosted_op_counts", {})
    for op, n in doc["uncosted_op_types"].items():
        lines.append(f"| {op} | {n} | {counts.get(op, n)} |")
    if doc["refusal_reasons"]:
        lines += ["", "## Refused", ""] + [f"- x{n}: {r}" for r, n in doc["refusal_reasons"].items()]
    if doc["crashes"]:
        lines += ["", "## Crashed", ""] + [f"- x{n}: {r}" for r, n in doc["crashes"].items()]
    return "\n".join(lines) + "\n"


def summary(doc: dict) -> str:
    c = doc["counts"]
    lines = [f"{c['total']} models: costed fully {c['costed']}, named what it could not cost {c['named']}, "
             f"refused {c['refused']}, crashed {c['crashed']} (named, printed by predict with --allow-partial: "
             f"{c.get('cli_needs_allow_partial', 0)})"]
    for k, v in doc["by_source"].items():
        lines.append(f"  {k:18s} " + ", ".join(f"{s} {n}" for s, n in sorted(v.items())))
    lines.append("uncosted op types (models): " + ", ".join(f"{k} {v}" for k, v in
                                                             list(doc["uncosted_op_types"].items())[:40]))
    for reason, n in list(doc["refusal_reasons"].items())[:15]:
        lines.append(f"  refused x{n}: {reason}")
    for reason, n in list(doc["crashes"].items())[:10]:
        lines.append(f"  CRASH x{n}: {reason}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "onnx_coverage.json"))
    p.add_argument("--limit", type=int, default=0, help="only the first N models (a quick look)")
    a = p.parse_args(argv)
    doc = run(a.limit)
    Path(a.out).write_text(json.dumps(doc, indent=0, ensure_ascii=False) + "\n")
    md = Path(a.out).with_suffix(".md")
    md.write_text(markdown(doc))
    print(summary(doc))
    print(f"wrote {os.path.relpath(a.out)} and {os.path.relpath(md)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
