"""calibration/llm/serving.py: option parsing (no torch) and the CPU dry run of the whole sweep (torch)."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from calibration.llm import serving

ROOT = Path(__file__).resolve().parents[2]


def test_defaults_cover_the_serving_grid():
    a = serving.parse_args(["--out", "x"])
    assert a.prompts == (128, 512, 2048, 8192) and a.contexts == (128, 512, 2048, 8192)
    assert a.batches == (1, 4, 16, 64) and a.max_seconds == 150.0
    assert a.archs == ("llama", "gpt2", "opt") and a.precisions == ("fp16", "bf16")
    assert a.deadline == pytest.approx(a.started + 150.0)


def test_dry_run_uses_tiny_sizes_and_rejects_unknown_arch():
    a = serving.parse_args(["--out", "x", "--dry-run-cpu"])
    assert a.prompts == (8, 16) and a.batches == (1, 2)
    with pytest.raises(SystemExit):
        serving.parse_args(["--out", "x", "--archs", "bloom"])


def test_summary_lists_cases_and_errors():
    doc = {"archs": {"gpt2": {"cases": [{"kind": "decode", "precision": "fp16", "batch": 4, "context": 128,
                                         "median_s": 0.002, "tokens_per_s": 2000.0}],
                              "errors": ["bf16: skipped (over budget)"]}}, "elapsed_s": 3}
    text = serving.summary(doc)
    assert "decode" in text and "2.000" in text and "2000" in text and "over budget" in text


def test_dry_run_cpu_measures_and_exports(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("onnx")
    out = tmp_path / "llm"
    proc = subprocess.run([sys.executable, "-m", "calibration.llm.serving", "--dry-run-cpu", "--out", str(out),
                           "--archs", "llama,gpt2", "--precisions", "fp16", "--max-seconds", "120"],
                          cwd=str(ROOT), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    doc = json.loads((out / "serving.json").read_text())
    assert set(doc["archs"]) == {"llama", "gpt2"}
    llama = doc["archs"]["llama"]
    assert llama["config"]["hf"] == "LlamaConfig" and llama["config"]["kv_heads"] == 2
    done = [c for c in llama["cases"] if "median_s" in c]
    assert done, llama
    for c in done:
        assert c["median_s"] > 0
    import onnx

    m = onnx.load(str(out / "onnx" / "llama.decode.onnx"), load_external_data=False)
    names = [i.name for i in m.graph.input]
    assert names[:3] == ["input_ids", "past_key_values.0.key", "past_key_values.0.value"]
    dims = [d.dim_param for d in m.graph.input[1].type.tensor_type.shape.dim]
    assert dims[0] == "batch" and dims[2] == "past_sequence"
