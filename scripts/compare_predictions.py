"""Byte-identity guard for refactors: run ``predict`` (the CLI, in-process) over the bundled ONNX models and dump
every JSON report, then compare two dumps.

    python scripts/compare_predictions.py dump OUT.json [--jobs N]
    python scripts/compare_predictions.py diff BEFORE.json AFTER.json

Cases: every examples/*.onnx and calibration/data/networks/onnx/*.onnx, at fp32/fp16/bf16/amp and batch 1/32
(inference), plus four ``predict validate`` runs, ``predict serve`` on the bundled decoders, table and CSV reports, on the bundled ncu samples, ``--optimize all`` and ``--mode train`` (fp32, amp) on a few models and one multi-GPU case.
A case that fails records its one-line error (compared too). The report is the CLI's ``--format json`` text unless a case names its format.
"""
from __future__ import annotations

import argparse
import contextlib
import glob
import io
import json
import os
import sys
import tempfile
from multiprocessing import Pool

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PRECISIONS = ("fp32", "fp16", "bf16", "amp")
BATCHES = (1, 32)
TRAIN_MODELS = ("resnet18", "bert_base.torchscript", "gpt2.torchscript", "lstm.torchscript", "mobilenet_v3_large",
                "vit_b_16.torchscript", "convnext_tiny", "swin_t")
OPT_MODELS = ("resnet50.torchscript", "bert_base.torchscript", "gpt2.torchscript", "vit_b_16.dynamo",
              "efficientnet_b0", "swin_t", "unet", "llama_small")


def models() -> list[str]:
    found = sorted(glob.glob(os.path.join(ROOT, "examples", "*.onnx")))
    found += sorted(glob.glob(os.path.join(ROOT, "calibration", "data", "networks", "onnx", "*.onnx")))
    return [os.path.relpath(p, ROOT) for p in found]


def _stem(path: str) -> str:
    return os.path.basename(path)[: -len(".onnx")]


def cases() -> list[tuple[str, ...]]:
    out: list[tuple[str, ...]] = []
    ms = models()
    for m in ms:
        for p in PRECISIONS:
            for b in BATCHES:
                out.append((m, "--gpu", "h200", "--precision", p, "--batch", str(b)))
    for m in ms:
        if _stem(m) in OPT_MODELS:
            for p in ("fp16", "amp"):
                out.append((m, "--gpu", "h200", "--precision", p, "--batch", "8", "--optimize", "all"))
        if _stem(m) in TRAIN_MODELS and "torchscript_train" not in m:
            for p in ("fp32", "amp"):
                out.append((m, "--gpu", "h200", "--precision", p, "--batch", "16", "--mode", "train"))
            out.append((m, "--gpu", "h200", "--precision", "bf16", "--batch", "4", "--mode", "train", "--optimizer",
                        "sgd", "--no-fused-optimizer"))
    out.append(("examples/resnet50.onnx", "--gpu", "h100", "--precision", "fp16", "--batch", "64", "--uncalibrated"))
    out.append(("examples/resnet50.onnx", "--gpu", "a100", "--precision", "tf32", "--batch", "8"))
    out.append(("examples/bert_base.onnx", "--gpu", "h200", "--precision", "fp16", "--batch", "8", "--mode", "train",
                "--gpus", "8"))
    for name, prec, batch in (("resnet50", "fp16", 8), ("bert_base", "fp32", 8), ("lstm", "fp16", 16),
                              ("deeplabv3_resnet50", "fp32", 2)):
        out.append(("validate", f"examples/{name}.onnx", "--ncu", f"calibration/data/h200/ncu/{name}_{prec}_b{batch}.csv",
                    "--gpu", "h200", "--precision", prec, "--batch", str(batch)))
    for m in sorted(glob.glob(os.path.join(ROOT, "calibration", "data", "llm", "h200", "onnx", "*.decode.onnx"))):
        out.append(("serve", os.path.relpath(m, ROOT), "--gpu", "h200"))  # LLM serving (predict serve)
    for fmt in ("table", "csv"):  # the other two output formats, inference and training
        out.append(("examples/resnet50.onnx", "--gpu", "h200", "--precision", "amp", "--batch", "8", "--top", "all",
                    "--format", fmt))
        out.append(("examples/bert_base.onnx", "--gpu", "h100", "--precision", "bf16", "--batch", "4", "--mode", "train",
                    "--top", "all", "--format", fmt))
    return out


def run_case(case: tuple[str, ...]) -> tuple[str, str]:
    from predictor.cli import main

    key = " ".join(case)
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "r.json")
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            fmt = () if "--format" in case else ("--format", "json")
            quiet = () if case[0] == "serve" else ("--quiet",)
            rc = main([*case, *fmt, "-o", out, *quiet])
        if rc != 0:
            return key, f"rc={rc} {err.getvalue().strip()}"
        with open(out) as f:
            return key, f.read()


def dump(path: str, jobs: int) -> None:
    os.chdir(ROOT)
    cs = cases()
    with Pool(jobs) as pool:
        results = dict(pool.imap(run_case, cs, chunksize=4))
    with open(path, "w") as f:
        json.dump(results, f, indent=0, sort_keys=True)
    failed = sum(1 for v in results.values() if v.startswith("rc="))
    print(f"{len(results)} cases ({failed} errors) -> {path}")


def diff(a_path: str, b_path: str) -> int:
    with open(a_path) as f:
        a = json.load(f)
    with open(b_path) as f:
        b = json.load(f)
    bad = [k for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
    for k in bad[:20]:
        print("DIFFERS:", k)
    print(f"{len(a)} vs {len(b)} cases, {len(bad)} differ")
    return 1 if bad else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("dump")
    d.add_argument("out")
    d.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    c = sub.add_parser("diff")
    c.add_argument("before")
    c.add_argument("after")
    args = ap.parse_args()
    if args.cmd == "dump":
        dump(args.out, args.jobs)
        return 0
    return diff(args.before, args.after)


if __name__ == "__main__":
    sys.exit(main())
