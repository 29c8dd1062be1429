"""A short bounded run of the plain mutation fuzzer (fuzz/fuzz_loader.py) over the loader and the ncu CSV
parser: 15 s in all, inputs drawn from a fixed seed. Longer runs: ``python fuzz/fuzz_loader.py --plain
loader --seconds 600`` or the coverage-guided atheris mode (see the script)."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("fuzz_loader", ROOT / "fuzz" / "fuzz_loader.py")
fuzz_loader = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fuzz_loader)

BUDGET_S = {"loader": 8.0, "csv": 4.0, "predict": 4.0}


@pytest.mark.fuzz
@pytest.mark.parametrize("target", sorted(BUDGET_S))
def test_fuzz_briefly(target):
    n, crashes = fuzz_loader.plain_fuzz(target, BUDGET_S[target], seed=20261202)
    assert n > 50, f"only {n} inputs ran"
    assert not crashes, f"{len(crashes)} crashes in {n} inputs; first:\n{crashes[0][1]}\ninput: {crashes[0][0][:200]!r}"


def test_fuzz_seeds_run_clean():
    """Every seed of both targets runs without a crash (seeds include the ONNX and CSV corpus)."""
    for target in ("loader", "csv"):
        for data in fuzz_loader.seeds(target):
            fuzz_loader.one_input(target, data)
