"""Grouped cross-validation's folds (calibration/fit/cv.py)."""
import pytest

from calibration.fit.cv import folds_of


def test_one_family_per_fold_by_default():
    fams = {"vit": ["vit_b"], "resnet": ["resnet18", "resnet50"], "bert": ["bert_base"]}
    assert folds_of(fams) == [["bert"], ["resnet"], ["vit"]]
    assert folds_of(fams, 3) == folds_of(fams, 0)


def test_families_dealt_round_robin_into_k_folds():
    fams = {f: [f] for f in ("a", "b", "c", "d", "e")}
    assert folds_of(fams, 2) == [["a", "c", "e"], ["b", "d"]]


def test_other_gpus_cases_are_reported_apart(monkeypatch):
    """A network left out is left out on every GPU; the fitted GPU's cases score the setting, the others' are
    reported under other_gpus."""
    from types import SimpleNamespace

    import numpy as np

    from calibration.fit import cv
    from calibration.fit.fit import FitSettings

    names = ["resnet50", "resnet50", "vit_b_16", "resnet50"]
    data = SimpleNamespace(case_names=names, case_gpu=np.array([0, 0, 0, 1]), case_ref=np.ones(4), rows=None,
                           row_gap_s=0.0, eff_l2=None, block_s=None)
    left_out = []
    monkeypatch.setattr(cv, "solve", lambda d, s, exclude: left_out.append(set(exclude)) or SimpleNamespace(x=None))
    monkeypatch.setattr(cv, "predict_cases", lambda x, rows, n, gap, l2, block: np.array([1.1, 0.8, 1.05, 1.5]))
    res = cv.cross_validate(data, FitSettings(), log=lambda *_: None)
    assert sorted(map(sorted, left_out)) == [["resnet50"], ["vit_b_16"]]
    assert res["mape"] == pytest.approx(0.35 / 3) and res["per_family"]["resnet"] == pytest.approx(0.15)
    assert res["other_gpus"]["n"] == 1 and res["other_gpus"]["mape"] == pytest.approx(0.5)
