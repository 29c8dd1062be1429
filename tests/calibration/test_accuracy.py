"""Recompute the accuracy benchmark on the committed H200 measurements; fail on regression.

The second 2026-12-05 refit (README "How accuracy is judged"): the first seven blind sets (spent) are training data;
the training networks (151, 1120 cases) sit at 10.9%, the held-out networks (consulted at every earlier change) at
10.4%. The sixth and seventh blind sets scored 12.1% and 16.7% when each was looked at once
(calibration/data/h200/accuracy/blind6_once.json, blind7_once.json: the records are checked below); no blind split has
cases now. The guards hold these figures.
"""
import json

import pytest

from calibration.evaluate.accuracy import OUT, amp_tables, evaluate, evaluate_amp, tables


@pytest.fixture(scope="module")
def summary():
    rows = evaluate()
    assert rows and all(not r["unsupported"] for r in rows)
    return tables(rows)


def test_training_networks(summary):
    """151 networks since the second 2026-12-05 refit, which took the seventh blind set (spent) into the fit."""
    assert summary["train"]["all"]["n"] >= 1100
    assert summary["train"]["all"]["mape"] <= 0.11  # 10.6% of 1402 cases since the second 2026-12-06 refit (batch norm
    # on its kernels, the thirteenth blind set's 48 cases in; 10.4% of the 1386 it fits); 11.0% with
    # the third 2026-12-05 refit (10.9% with the second, 12.1% of 964 cases with the first)


def test_held_out_networks(summary):
    assert summary["heldout"]["all"]["n"] >= 60
    assert summary["heldout"]["all"]["median"] <= 0.095  # 8.7% (8.0% before the sixth blind set's data joined the fit)
    assert summary["heldout"]["all"]["mape"] <= 0.095  # 8.7% since the second 2026-12-06 refit (9.7% before it; 9.3% on
    # 2026-12-03; 11.1%, 11.4%, 10.7%, 10.1%, 10.9%, 10.4%, 10.5% after refits)
    assert summary["heldout"]["all"]["worst"] <= 0.31  # 30.4% (regnet_y_1_6gf fp32 b32)


def test_large_batch_fp32(summary):
    # 10.6% since the second 2026-12-05 refit (13.4% after the 2026-12-04 one, 9.2% before: regnet_y_1_6gf fp32 b32
    # +30%); the earlier guard was 10%
    assert summary["heldout"]["fp32 b32"]["mape"] <= 0.12


def test_autocast_held_out():
    """torch.autocast forwards of the six held-out networks (whatif/amp) against --precision amp/amp-bf16."""
    rows = [r for r in evaluate_amp() if r["split"] == "heldout"]
    assert len(rows) >= 24 and {r["precision"] for r in rows} == {"amp", "amp-bf16"}
    assert all(r["split"] == "heldout" and not r["unsupported"] for r in rows)
    s = amp_tables(rows)["all"]
    assert s["mape"] <= 0.09 and s["worst"] <= 0.20  # 8.0% and 17.7% (gpt2 amp-bf16 b32) since the first 2026-12-06
    # refit (casts as elementwise kernels, math-path SDPA in fp32); 9.7% and 19.4% before it
    # the what-if issue's targets were 10% and 25%; 10.5% and 22.1%
    # (efficientnet_b0 amp b1) since the second 2026-12-05 refit (11.2% and 26.3% with the first, 9.7% and 22.8% before
    # it: autocast borrows the uniform classes; 34.6% before the fourth 2026-12-04 refit)


def test_autocast_training():
    """The spent blind sets' autocast forwards (whatif/amp_blind, amp_blind2, amp_blind5, amp_blind8, amp_blind9),
    training data since they were spent."""
    rows = [r for r in evaluate_amp() if r["split"] == "train"]
    assert len(rows) >= 190 and all(not r["unsupported"] for r in rows)
    s = amp_tables(rows)["all"]
    assert s["median"] <= 0.095 and s["mape"] <= 0.115  # 8.8% and 11.1% over 203 with the second 2026-12-06 refit and
    # the thirteenth blind set's 12 forwards in (18.2% on their own); 8.8% and 10.7% since the first refit (autocast's
    # casts as elementwise kernels); 10.4% and 14.0% with the fifth 2026-12-05 refit, with the
    # ninth blind set's 18 forwards in (23.7% on their own: the decoders' batch-1 autocast, SAM, Longformer; 9.9% and
    # 13.4% on the 173 before, with the fourth refit, with the
    # eighth blind set's 25 forwards in (8.4% and 14.4% on the 149 before; EfficientFormerV2-S0's upsampling, priced
    # by the 16-bit resize class that DPT's data moved: -36% -> +68% at batch 32)


def test_autocast_spent_sets_on_the_h100():
    """The tenth to twelfth blind sets' autocast forwards, measured on an H100 and spent (h100/whatif/amp_blind10-12),
    with the fit transferred: 13.9% since the first 2026-12-06 refit (27.3% before: weight casts costed as strided
    copies); Pixtral's excluded graph aside. 15.6% over 54 once the sixteenth set's 8 joined (SpeechT5's positional
    convolution: +143% at batch 32); 11.4% since the sixth 2026-12-06 refit (that convolution's per-group waves, the
    scans' loop: SpeechT5 +4%, Mixtral +1% at batch 32); 11.6% over 62 with the seventeenth set's 8 and the seventh
    2026-12-06 refit (11.4% with the sixth)."""
    rows = [r for r in evaluate_amp(gpu="h100") if r["split"] == "train"]
    assert len(rows) >= 54 and all(not r["unsupported"] for r in rows)
    assert amp_tables(rows)["all"]["mape"] <= 0.125


@pytest.mark.parametrize("name, split, n, mape", [("blind6_once.json", "blind6", 184, 0.1213),
                                                  ("blind7_once.json", "blind7", 156, 0.1668),
                                                  ("blind8_once.json", "blind8", 172, 0.1664),
                                                  ("blind9_once.json", "blind9", 70, 0.1867),
                                                  ("blind13_once.json", "blind13", 48, 0.1769)])
def test_blind_set_records_are_kept_as_measured(name, split, n, mape):
    """Each blind set's one look is a record, not a guard: its cases and summary stay as the frozen fit scored them."""
    doc = json.loads((OUT / name).read_text())
    cases = doc["cases"]
    assert len(cases) == n == doc["summary"][split]["all"]["n"] and all(c["split"] == split for c in cases)
    assert sum(abs(c["error"]) for c in cases) / n == pytest.approx(doc["summary"][split]["all"]["mape"])
    assert doc["summary"][split]["all"]["mape"] == pytest.approx(mape, abs=5e-5)


@pytest.mark.parametrize("split, n, n_amp, mape, control_mape", [
    ("blind10", 50, 13, 0.1773, 0.0859),  # the H200 fit transferred onto the H100's datasheet-derived ceilings
    ("blind11", 50, 14, 0.2810, 0.0840),
    ("blind12", 40, 9, 0.0993, 0.0779),   # ... onto the H100's own ERT ceilings (calibration/data/h100/ert)
    ("blind14", 28, 6, 0.1432, 0.0787),   # (FNet has no 16-bit cases: PyTorch's cuFFT refuses them)
    ("blind15", 28, 6, 0.1478, 0.0814),   # (nor has Autoformer)
    ("blind16", 32, 8, 0.3486, 0.0823),
    ("blind17", 32, 8, 0.1895, 0.0825),
    ("blind18", 30, 8, 0.0912, 0.0776),   # (HunyuanVideo's VAE decoder timed no fp32 case)
    ("blind19", 28, 0, 0.2747, 0.0754),   # (Doge's 16-bit forward fails in the harness; no autocast case timed)
    ("blind20", 32, 8, 0.1086, 0.0750),
    ("blind21", 30, 8, 0.1662, 0.0772),   # (X-Codec2's bf16 cases skipped by the per-network budget)
])
def test_h100_blind_records_keep_their_transfer_control(split, n, n_amp, mape, control_mape):
    """The tenth to twelfth and the fourteenth to twenty-first sets were measured on an H100 (the device calls were served by one) and judged with the
    H200 fit transferred; four training networks timed on the same machine in the same session say how much of a
    set's error is the transfer's."""
    doc = json.loads((OUT.parents[1] / "h100" / "accuracy" / f"{split}_once.json").read_text())
    cases, amp, control = doc["cases"], doc["autocast_cases"], doc["control_cases"]
    assert len(cases) == doc["summary"][split]["all"]["n"] == n and len(amp) == n_amp and len(control) == 32
    assert all(c.get("split", split) == split for c in cases + amp)
    assert sum(abs(c["error"]) for c in cases) / n == pytest.approx(mape, abs=5e-5)
    assert {c["network"] for c in control} == {"resnet50", "vit_b_16", "gpt2", "bert_base"}
    assert sum(abs(c["error"]) for c in control) / 32 == pytest.approx(control_mape, abs=5e-5)
