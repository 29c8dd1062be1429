"""Recompute the accuracy benchmark on the committed H200 measurements; fail on regression.

The 2026-12-04 refit (README "How accuracy is judged"): the first blind set (spent) joined the training split, the
fit reads microbenchmark run 7 too and probes low ceilings; the training networks (now 22, 176 cases) sit at 12.0%,
the held-out networks (consulted at every earlier change) at 11.1% (9.3% before: a regression, fcn_resnet50 at
16-bit +27..+32%), and the second blind set (17 networks of new families timed of 20, measured once on 2026-12-04 and
looked at once, after the fit was chosen by grouped cross-validation) at 15.8%. The guards hold these figures.
"""
import pytest

from calibration.evaluate.accuracy import amp_tables, evaluate, evaluate_amp, tables


@pytest.fixture(scope="module")
def summary():
    rows = evaluate()
    assert rows and all(not r["unsupported"] for r in rows)
    return tables(rows)


def test_training_networks(summary):
    assert summary["train"]["all"]["n"] >= 170
    assert summary["train"]["all"]["mape"] <= 0.125


def test_held_out_networks(summary):
    assert summary["heldout"]["all"]["n"] >= 60
    assert summary["heldout"]["all"]["median"] <= 0.105
    assert summary["heldout"]["all"]["mape"] <= 0.115
    assert summary["heldout"]["all"]["worst"] <= 0.33


def test_large_batch_fp32(summary):
    assert summary["heldout"]["fp32 b32"]["mape"] <= 0.10


def test_autocast_held_out():
    """torch.autocast forwards of the six held-out networks (whatif/amp) against --precision amp/amp-bf16."""
    rows = [r for r in evaluate_amp() if r["split"] == "heldout"]
    assert len(rows) >= 24 and {r["precision"] for r in rows} == {"amp", "amp-bf16"}
    assert all(r["split"] == "heldout" and not r["unsupported"] for r in rows)
    s = amp_tables(rows)["all"]
    assert s["mape"] <= 0.125 and s["worst"] <= 0.33  # the what-if issue's targets were 10% and 25%; 12.0% and 32.1%
    # (fcn_resnet50 amp-bf16 b32) since the 2026-12-04 refit


def test_blind_networks(summary):
    """The second blind set (zoo split ``blind``: 17 networks timed of 20, families absent from the calibration),
    measured once on 2026-12-04: guarded against regression; the accuracy issue's target is 10% and 70% within 10%."""
    s = summary["blind"]["all"]
    assert s["n"] >= 130
    assert s["mape"] <= 0.165 and s["median"] <= 0.11 and s["within_10"] >= 0.45


def test_autocast_blind():
    """17 networks' autocast forwards (whatif/amp_blind2): 67.7% when first evaluated, 13.2% since the fix of batch
    norm on [N, C] inputs under autocast that they exposed (LeViT-128 at batch 32 was 6-10x too slow)."""
    rows = [r for r in evaluate_amp() if r["split"] == "blind"]
    assert len(rows) >= 25 and all(not r["unsupported"] for r in rows)
    s = amp_tables(rows)["all"]
    assert s["median"] <= 0.105 and s["mape"] <= 0.14


def test_third_blind_set(summary):
    """The third blind set (zoo split ``blind3``: 7 networks timed of 9), measured once after the 2026-12-04 fit was
    frozen and looked at once: 13.9% (median 11.0%, 48% within 10%)."""
    s = summary["blind3"]["all"]
    assert s["n"] >= 56
    assert s["mape"] <= 0.145 and s["median"] <= 0.115 and s["within_10"] >= 0.45
