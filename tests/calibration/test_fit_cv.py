"""Grouped cross-validation's folds (calibration/fit/cv.py)."""
from calibration.fit.cv import folds_of


def test_one_family_per_fold_by_default():
    fams = {"vit": ["vit_b"], "resnet": ["resnet18", "resnet50"], "bert": ["bert_base"]}
    assert folds_of(fams) == [["bert"], ["resnet"], ["vit"]]
    assert folds_of(fams, 3) == folds_of(fams, 0)


def test_families_dealt_round_robin_into_k_folds():
    fams = {f: [f] for f in ("a", "b", "c", "d", "e")}
    assert folds_of(fams, 2) == [["a", "c", "e"], ["b", "d"]]
