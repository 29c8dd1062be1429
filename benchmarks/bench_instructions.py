"""Instructions executed by ``predict FILE --gpu h200 -o /dev/null``: this tree against ``predictor/`` of a git
revision.

On a shared VM wall and CPU seconds move with other work (2 vCPUs at load 4-7 stretch a run 3-5x); the count of
user-space instructions of one process does not, to a fraction of a percent. Each command runs once under
``valgrind --tool=cachegrind --cache-sim=no`` (about 50x slower than native: the graphs are small), as the console
script runs it. Graphs: a 10k-node synthetic decoder (``synth_transformer.py``: 370 layers, d_model 256, weights
external and absent; a tenth of ``bench_robustness.py``'s 100k-node one), ViT-B/16 (TorchScript export, weights
stripped; and the dynamo export, examples/vit_b_16.dynamo.onnx) and examples/lstm.onnx (a few nodes: start-up, the
interpreter and imports); with ``--with-100k`` also ``bench_robustness.py``'s 100k-node decoder (about 2 minutes a
run under valgrind). Needs ``valgrind`` on the PATH.

    python benchmarks/bench_instructions.py --baseline REV [--with-100k] [--out benchmarks/results/instructions.json]
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _measure import REPO, child_env, machine_info  # noqa: E402
from bench_robustness import _baseline_tree, _tree_cmd  # noqa: E402

VIT = REPO / "calibration" / "data" / "networks" / "onnx" / "vit_b_16.torchscript.onnx"
VIT_DYNAMO = REPO / "examples" / "vit_b_16.dynamo.onnx"
SMALL = REPO / "examples" / "lstm.onnx"


def _decoder_10k(workdir: Path) -> Path:
    path = workdir / "decoder_10k.onnx"
    if not path.exists():
        import onnx

        from synth_transformer import DecoderConfig, build_decoder

        onnx.save(build_decoder(DecoderConfig(370, 256, 4, 1024, 1000, 128)), str(path))
    return path


def instructions(cmd: list[str]) -> int:
    """User-space instructions of one run of ``cmd`` (cachegrind's ``I refs``)."""
    out = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
                          *cmd], capture_output=True, env=child_env(), timeout=1800)
    m = re.search(r"I\s+refs:\s+([\d,]+)", out.stderr.decode(errors="replace"))
    if out.returncode != 0 or m is None:
        raise RuntimeError(f"valgrind run failed (rc {out.returncode}): {out.stderr.decode(errors='replace')[-500:]}")
    return int(m.group(1).replace(",", ""))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", required=True, help="git revision whose predictor/ is compared with this tree")
    ap.add_argument("--workdir", default=str(Path(tempfile.gettempdir()) / "bench_instructions"))
    ap.add_argument("--out", default=str(HERE / "results" / "instructions.json"))
    ap.add_argument("--with-100k", action="store_true", help="also the 100k-node decoder (bench_robustness.py's)")
    a = ap.parse_args(argv)
    work = Path(a.workdir)
    work.mkdir(parents=True, exist_ok=True)
    info = machine_info()  # (load average at the start)
    base = _baseline_tree(a.baseline, work)
    graphs = [_decoder_10k(work), VIT, VIT_DYNAMO, SMALL]
    if a.with_100k:
        from bench_robustness import _decoder_100k

        big = Path(tempfile.gettempdir()) / "bench_robustness"  # (bench_robustness.py's own copy)
        big.mkdir(parents=True, exist_ok=True)
        graphs.insert(0, _decoder_100k(big))
    rows = []
    for g in graphs:
        args = [str(g), "--gpu", "h200", "-o", "/dev/null"]
        # one plain run of each first: its bytecode caches are written, as an installed package has them
        subprocess.run(_tree_cmd(base, args), capture_output=True, env=child_env())
        subprocess.run(_tree_cmd(REPO, args), capture_output=True, env=child_env())
        b, t = instructions(_tree_cmd(base, args)), instructions(_tree_cmd(REPO, args))
        rows.append({"graph": g.name, "baseline_instructions": b, "this_instructions": t,
                     "ratio_this_over_baseline": t / b})
        print(f"{g.name:34s} baseline {b / 1e9:7.3f}e9  this {t / 1e9:7.3f}e9  ratio {t / b:.3f}", flush=True)
    doc = {"what": "user-space instructions of predict FILE --gpu h200 -o /dev/null (valgrind cachegrind)",
           "baseline": a.baseline, "machine": info, "rows": rows}
    Path(a.out).write_text(json.dumps(doc, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
