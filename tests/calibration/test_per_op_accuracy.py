"""Per-op accuracy against the committed Nsight Compute samples: recomputed, guarded against regression.

With the bundled fit the per-op median is 13.9% over 1,000 nodes (the issue's target is 20%); the guard holds
the current figure (calibration/data/h200/accuracy/per_op.md).
"""
import pytest

from calibration.evaluate.per_op_accuracy import evaluate, markdown


@pytest.fixture(scope="module")
def doc():
    return evaluate()


def test_every_sample_is_compared(doc):
    assert len(doc["samples"]) == 8
    assert doc["all"]["n"] == sum(s["n"] for s in doc["samples"].values()) == 1000


def test_per_op_median_does_not_regress(doc):
    # 13.7% and 64% since the second 2026-12-06 fit (11.9% and 71% before): batch norm is fitted on its in-network
    # kernel times, which are about half of what ncu's cache-flushed replays of the same kernel measure (README)
    assert doc["all"]["median"] <= 0.145 and doc["all"]["within_20pct"] >= 0.62
    assert doc["samples"]["bert_base_fp16_b8"]["median"] <= 0.11


def test_markdown_lists_all(doc):
    md = markdown(doc)
    assert md.count("\n") == 2 + 8 + 1 and "| all | 1000 |" in md
