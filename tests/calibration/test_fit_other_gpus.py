"""The joint fit's other GPUs (calibration/fit/fit.py other_gpus, FitSettings.h100_weight): an H100 case's scope
samples and whole-network time join the H200's, priced on the H100's own ceilings with the same parameters."""
import numpy as np

from calibration.fit.dataset import DATA, load_cases, load_kernels
from calibration.fit.fit import FitSettings, other_gpu_data, predict_cases, prepare_fit, replay_gap_s, solve
from predictor.machine.profile import load_profile

KEY = ("resnet50", "fp16", 1)


def _data():
    h200 = [c for c in load_cases() if c.key == KEY]
    cases, kernels, profile = other_gpu_data("h100")
    h100 = [c for c in cases if c.key == KEY]
    assert len(h200) == len(h100) == 1 and profile.name == "h100"
    data = prepare_fit(h200, load_kernels(), load_profile("h200"), micro_families=(), log=lambda *_: None,
                       other_gpus=((h100, kernels, profile),))
    return data, h100, kernels


def test_other_gpu_cases_follow_the_fitted_gpus_with_their_own_gap():
    data, h100, kernels = _data()
    assert data.case_names == ["resnet50", "resnet50"] and data.case_gpu.tolist() == [0, 1]
    own = data.sample_case == 0
    assert own.any() and (data.sample_case[~own] == 1).all()
    # every sample's nodes belong to that sample's case; each node pays its own GPU's replay gap
    nodes = data.rows.sample >= 0
    assert (data.rows.case[nodes] == data.sample_case[data.rows.sample[nodes]]).all()
    assert np.allclose(data.row_gap_s[data.rows.case == 0], data.gap_s)
    assert np.allclose(data.row_gap_s[data.rows.case == 1], replay_gap_s(h100, kernels))
    # the H100's ceilings: its HBM time per byte is longer than the H200's for the same node
    first = [np.flatnonzero(data.rows.case == c)[0] for c in (0, 1)]
    assert data.rows.hbm_s[first[1]] > data.rows.hbm_s[first[0]]


def test_h100_weight_zero_leaves_the_other_gpu_out():
    data, _, _ = _data()
    alone = prepare_fit([c for c in load_cases() if c.key == KEY], load_kernels(), load_profile("h200"),
                        micro_families=(), log=lambda *_: None)
    settings = FitSettings(h100_weight=0.0, probe_ceilings=0.0)
    a, b = solve(data, settings), solve(alone, settings)
    # the H100's residuals weigh nothing: the same optimum, to the solver's tolerance (it stops at one, not at a point)
    assert np.isclose(a.cost, b.cost, rtol=1e-3)
    whole_a = predict_cases(a.x, data.rows, 2, data.row_gap_s, data.eff_l2)[0]
    whole_b = predict_cases(b.x, alone.rows, 1, alone.row_gap_s, alone.eff_l2)[0]
    assert np.isclose(whole_a, whole_b, rtol=5e-3)


def test_h100_training_cases_are_train_split_only():
    cases, _, _ = other_gpu_data("h100")
    nets = {c.network for c in cases}
    assert {"resnet50", "vit_b_16", "bert_base"} <= nets and "gpt2" not in nets  # GPT-2 is held out
    assert "pixtral_vision" not in nets  # excluded: its graph is not the program that ran
    assert {"apertus_3l", "falcon_h1_3l", "csatv2", "parakeet_encoder", "vjepa2_16f"} <= nets  # the spent twelfth set
    assert (DATA / "h100" / "timing").is_dir()


def test_fit_cli_refuses_a_negative_h100_weight(capsys, tmp_path):
    from calibration.fit.fit import main

    assert main(["--h100-weight", "-1", "--out", str(tmp_path / "x.json")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --h100-weight") and err.count("\n") == 1 and not (tmp_path / "x.json").exists()
