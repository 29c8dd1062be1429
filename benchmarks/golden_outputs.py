"""Dump ``predict``'s reports for a fixed set of models and settings, to check that a speed change leaves the
output byte-identical.

    python benchmarks/golden_outputs.py dump DIR        # one file per (model, gpu, precision, batch, format)
    python benchmarks/golden_outputs.py compare A B     # names the files that differ; exit 1 if any

Each report is written by ``predictor.cli.main`` in this process (the same code path as the console script)
with ``-o FILE``. Models: every ``examples/*.onnx`` plus a few committed graphs of other kinds (dynamo
export, RNN, depthwise conv, decoder). Settings: fp32/fp16/amp/tf32/int8 at batch 1 and 8 on h200 in JSON,
a smaller set on other GPUs and in table/CSV format, and one training step.
"""
from __future__ import annotations

import hashlib
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
NETS = REPO / "calibration" / "data" / "networks" / "onnx"
MODELS = sorted(REPO.glob("examples/*.onnx")) + [NETS / n for n in (
    "gpt2.dynamo.onnx", "gru.torchscript.onnx", "mobilenet_v3_large.torchscript.onnx", "swin_t.torchscript.onnx",
    "llama_small.torchscript.onnx", "bilstm.torchscript.onnx", "t5_encoder.torchscript.onnx")]


def cases():
    for m in MODELS:
        for prec in ("fp32", "fp16", "amp", "tf32", "int8"):
            for b in ("1", "8"):
                yield m, ["--gpu", "h200", "--precision", prec, "--batch", b, "--format", "json"]
        for gpu in ("h100", "a100", "v100", "t4"):
            yield m, ["--gpu", gpu, "--precision", "fp16", "--batch", "4", "--format", "json"]
        yield m, ["--gpu", "h200", "--batch", "2", "--format", "table", "--top", "all"]
        yield m, ["--gpu", "h200", "--batch", "2", "--format", "csv"]
        yield m, ["--gpu", "h200", "--batch", "2", "--format", "json", "--optimize", "all"]
        yield m, ["--gpu", "h200", "--batch", "2", "--format", "json", "--uncalibrated"]
    for m in MODELS[:3]:
        yield m, ["--gpu", "h200", "--batch", "4", "--format", "json", "--mode", "train"]


def dump(out: Path) -> int:
    from predictor.cli import main

    out.mkdir(parents=True, exist_ok=True)
    for model, args in cases():
        name = model.stem + "_" + "_".join(a.lstrip("-") for a in args) + ".out"
        rc = main([str(model), *args, "-o", str(out / name)])
        if rc != 0:
            (out / name).write_text(f"exit {rc}\n")
    print(f"wrote {len(list(out.iterdir()))} reports to {out}")
    return 0


def compare(a: Path, b: Path) -> int:
    names = sorted({p.name for p in a.iterdir()} | {p.name for p in b.iterdir()})
    bad = []
    for n in names:
        pa, pb = a / n, b / n
        ha = hashlib.sha256(pa.read_bytes()).hexdigest() if pa.exists() else None
        hb = hashlib.sha256(pb.read_bytes()).hexdigest() if pb.exists() else None
        if ha != hb:
            bad.append(n)
    for n in bad:
        print("differs:", n)
    print(f"{len(names) - len(bad)} of {len(names)} identical")
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "dump":
        raise SystemExit(dump(Path(sys.argv[2])))
    if len(sys.argv) == 4 and sys.argv[1] == "compare":
        raise SystemExit(compare(Path(sys.argv[2]), Path(sys.argv[3])))
    print(__doc__)
    raise SystemExit(2)
