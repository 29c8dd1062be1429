"""calibration/llm/decode_kernels.py on a CPU (dry run of the tiny decoders; needs torch, skipped without it)."""
import json

import pytest


def test_dry_run_writes_one_case_per_arch_batch_and_context(tmp_path):
    pytest.importorskip("torch")
    from calibration.llm.decode_kernels import main

    assert main(["--out", str(tmp_path), "--archs", "llama,gpt2", "--batches", "2", "--contexts", "16",
                 "--dry-run-cpu"]) == 0
    doc = json.loads((tmp_path / "decode_kernels.json").read_text())
    assert [(c["arch"], c["batch"], c["context"]) for c in doc["cases"]] == [("llama", 2, 16), ("gpt2", 2, 16)]
    assert all("error" not in c and c["n_kernels"] == 0 for c in doc["cases"])  # no GPU: no kernels
    assert doc["environment"]["command"].startswith("python3 -m calibration.llm.decode_kernels")
