"""Recompute the accuracy benchmark on the committed H200 measurements; fail on regression.

Since the physical refit (every efficiency in (0, 1], microbenchmark kernels in the fit; README "How accuracy is
judged") the training and held-out networks sit at 8.5% / 9.3% (they were 6.7% / 8.3% with efficiencies up to 3),
and the blind networks, measured once and never used to choose anything, at 21.6% (27.0% before): the guards below
hold these figures.

Targets of the accuracy issue (held-out MAPE <= 10%, worst <= 25%) are nearly met (10.06%, worst 26%); these
guards hold the current figures (calibration/data/h200/accuracy/accuracy.md) so that a change cannot make them worse unnoticed.
The second H200 run (calibration/data/h200/timing/run2) added resnet18, densenet121, lraspp, 16-bit
deeplabv3 (training) and deepcam_lite, efficientnet_b0 (held-out): 72 training and 64 held-out cases.
"""
import pytest

from calibration.evaluate.accuracy import amp_tables, evaluate, evaluate_amp, tables


@pytest.fixture(scope="module")
def summary():
    rows = evaluate()
    assert rows and all(not r["unsupported"] for r in rows)
    return tables(rows)


def test_training_networks(summary):
    assert summary["train"]["all"]["n"] >= 70
    assert summary["train"]["all"]["mape"] <= 0.09


def test_held_out_networks(summary):
    assert summary["heldout"]["all"]["n"] >= 60
    assert summary["heldout"]["all"]["median"] <= 0.085
    assert summary["heldout"]["all"]["mape"] <= 0.095
    assert summary["heldout"]["all"]["worst"] <= 0.25


def test_large_batch_fp32(summary):
    assert summary["heldout"]["fp32 b32"]["mape"] <= 0.10


def test_autocast_held_out():
    """torch.autocast forwards of the six held-out networks (whatif/amp) against --precision amp/amp-bf16."""
    rows = [r for r in evaluate_amp() if r["split"] == "heldout"]
    assert len(rows) >= 24 and {r["precision"] for r in rows} == {"amp", "amp-bf16"}
    assert all(r["split"] == "heldout" and not r["unsupported"] for r in rows)
    s = amp_tables(rows)["all"]
    assert s["mape"] <= 0.095 and s["worst"] <= 0.27  # the what-if issue's targets were 10% and 25% (26.1% since the
    # physical refit: efficientnet_b0 amp b1)


def test_blind_networks(summary):
    """The blind set (zoo split ``blind``: 13 networks timed of 16, families absent from the calibration), measured
    once on 2026-12-03: guarded against regression; the accuracy issue's target is 10% and 70% within 10%."""
    s = summary["blind"]["all"]
    assert s["n"] >= 100
    assert s["mape"] <= 0.225 and s["median"] <= 0.125 and s["within_10"] >= 0.45


def test_autocast_blind():
    rows = [r for r in evaluate_amp() if r["split"] == "blind"]
    assert len(rows) >= 30 and all(not r["unsupported"] for r in rows)
    assert amp_tables(rows)["all"]["mape"] <= 0.245
