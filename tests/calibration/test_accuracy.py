"""Recompute the accuracy benchmark on the committed H200 measurements; fail on regression.

The second 2026-12-04 refit (README "How accuracy is judged"): the first three blind sets (spent) are training data;
the training networks (55, 388 cases) sit at 13.3%, the held-out networks (consulted at every earlier change) at 11.4%,
and the fourth blind set (25 networks of new families, measured once before the refit and looked at once after it)
at 18.1%. The guards hold these figures.
"""
import pytest

from calibration.evaluate.accuracy import amp_tables, evaluate, evaluate_amp, tables


@pytest.fixture(scope="module")
def summary():
    rows = evaluate()
    assert rows and all(not r["unsupported"] for r in rows)
    return tables(rows)


def test_training_networks(summary):
    """55 networks since the 2026-12-04 refit that took the second and third blind sets (spent) into the fit."""
    assert summary["train"]["all"]["n"] >= 380
    assert summary["train"]["all"]["mape"] <= 0.14  # 13.3%


def test_held_out_networks(summary):
    assert summary["heldout"]["all"]["n"] >= 60
    assert summary["heldout"]["all"]["median"] <= 0.105  # 10.1%
    assert summary["heldout"]["all"]["mape"] <= 0.12  # 11.4% (9.3% on 2026-12-03, 11.1% after the first refit)
    assert summary["heldout"]["all"]["worst"] <= 0.33


def test_large_batch_fp32(summary):
    # 13.4% since the 2026-12-04 refit (9.2% before: regnet_y_1_6gf fp32 b32 +32%); the earlier guard was 10%
    assert summary["heldout"]["fp32 b32"]["mape"] <= 0.14


def test_autocast_held_out():
    """torch.autocast forwards of the six held-out networks (whatif/amp) against --precision amp/amp-bf16."""
    rows = [r for r in evaluate_amp() if r["split"] == "heldout"]
    assert len(rows) >= 24 and {r["precision"] for r in rows} == {"amp", "amp-bf16"}
    assert all(r["split"] == "heldout" and not r["unsupported"] for r in rows)
    s = amp_tables(rows)["all"]
    assert s["mape"] <= 0.13 and s["worst"] <= 0.33  # the what-if issue's targets were 10% and 25%; 12.5% and 31.6%
    # (fcn_resnet50 amp-bf16 b32) since the second 2026-12-04 refit


def test_autocast_training():
    """The spent blind sets' autocast forwards (whatif/amp_blind, amp_blind2), training data since they were spent."""
    rows = [r for r in evaluate_amp() if r["split"] == "train"]
    assert len(rows) >= 55 and all(not r["unsupported"] for r in rows)
    s = amp_tables(rows)["all"]
    assert s["median"] <= 0.13 and s["mape"] <= 0.165  # 12.5% and 16.0%


def test_fourth_blind_set(summary):
    """The fourth blind set (zoo split ``blind4``: 25 networks of families absent from every fit and earlier blind
    set, chosen and timed once at the start of the second 2026-12-04 session, before its tuning), looked at once with
    the frozen fit: 18.1% (median 12.9%, 39% within 10%); the accuracy issue's target is 10% and 70% within 10%."""
    s = summary["blind4"]["all"]
    assert s["n"] >= 180
    assert s["mape"] <= 0.185 and s["median"] <= 0.135 and s["within_10"] >= 0.37
