"""What a plain ``predict MODEL --gpu G`` imports: none of the heavy packages (start-up time is most of a small
network's whole-process time, benchmarks/bench_speed.py)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("numpy", "scipy", "sklearn", "networkx", "matplotlib", "onnx", "yaml", "tqdm", "pandas",
         "google.protobuf.descriptor_pool", "importlib.resources", "csv", "tempfile")


def test_plain_predict_imports_nothing_heavy():
    code = ("import sys\nfrom predictor.cli import main\n"
            f"rc = main([{str(ROOT / 'examples' / 'vit_b_16.dynamo.onnx')!r}, '--gpu', 'h200', '-o', '/dev/null'])\n"
            f"print(rc, sorted(m for m in {HEAVY!r} if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split(None, 1) == ["0", "[]\n"], out.stdout
