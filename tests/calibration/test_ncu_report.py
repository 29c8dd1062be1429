"""The ncu comparison report (calibration/ncu/report.py) re-computed on the committed H200 samples.

Asserts the targets of issue 4 that the model meets (per network: FLOPs within 5% with tile padding,
L2 bytes within 30%, HBM bytes within 20%), so a change that regresses one fails here, and the rule for
the layout kernels the runtime adds. One report is built per test session (~3 s).
"""
from __future__ import annotations

import json
import math

import pytest

from calibration.ncu import report as R
from predictor.measure.ncu.parse import parse_file

CASES = ("bert_base_fp16_b8", "bert_base_fp32_b8", "deeplabv3_resnet50_fp16_b2", "deeplabv3_resnet50_fp32_b2",
         "lstm_fp16_b16", "lstm_fp32_b16", "resnet50_fp16_b8", "resnet50_fp32_b8")
# FLOPs the op formulas cannot reach (see report.md, "what the model misses"): PyTorch's fp32
# memory-efficient attention runs 3 TF32 passes on tensor cores (3x the attention FLOPs)
FLOPS_KNOWN_MISS = {"bert_base_fp32_b8": 0.94}


@pytest.fixture(scope="module")
def report():
    return R.build_report()


@pytest.fixture(scope="module")
def by_case(report):
    return {c["case"]: c for c in report["cases"]}


def test_every_committed_sample_is_reported(by_case):
    assert tuple(sorted(by_case)) == CASES


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("level", ["L2", "HBM"])
def test_byte_targets(by_case, case, level):
    check = by_case[case]["checks"][level]
    assert check["ok"], f"{case} {level}: predicted/measured {check['ratio']:.3f} (target +-{check['target']})"


@pytest.mark.parametrize("case", CASES)
def test_flops_target(by_case, case):
    check = by_case[case]["checks"]["flops"]
    if case in FLOPS_KNOWN_MISS:
        assert FLOPS_KNOWN_MISS[case] <= check["ratio"] < 1.0, check
    else:
        assert check["ok"], f"{case} FLOPs: predicted/measured {check['ratio']:.3f}"


def test_tile_padding_is_what_closes_resnet_fp16_flops(by_case):
    # algorithmic FLOPs are 11% short of what the implicit-GEMM kernels execute; padding closes it
    c = by_case["resnet50_fp16_b8"]["checks"]
    assert not c["flops_unpadded"]["ok"] and c["flops"]["ok"]
    assert abs(c["flops"]["ratio"] - 1) < abs(c["flops_unpadded"]["ratio"] - 1)


def test_tma_gemms_have_no_l1_bytes_and_streaming_kernels_match_l1(by_case):
    bert = by_case["bert_base_fp16_b8"]["classes"]
    assert bert["gemm"]["predicted"]["L1"] < 0.01 * bert["gemm"]["predicted"]["L2"]
    # elementwise kernels: L1 = compulsory bytes, to 2%
    for case in ("resnet50_fp16_b8", "resnet50_fp32_b8", "deeplabv3_resnet50_fp32_b2"):
        r = by_case[case]["classes"]["elementwise"]["ratio"]["L1"]
        assert r == pytest.approx(1.0, abs=0.02), (case, r)


@pytest.mark.parametrize("case", ["resnet50_fp16_b8", "deeplabv3_resnet50_fp16_b2"])
def test_layout_kernel_rule(by_case, case):
    rule = by_case[case]["hidden_rule"]
    # the rule names every transform cuDNN ran around the convolutions it covers
    assert rule["rule"]["kernels"] == rule["measured_ruled"]["kernels"]
    # bytes: L1 1.1-1.3x of 2 x (X + W + Y), L2 with the fabric share, HBM the cold reads
    assert 1.0 <= rule["ratio"]["L1"] <= 1.35
    assert 1.4 <= rule["ratio"]["L2"] <= 1.9
    assert 0.35 <= rule["ratio"]["HBM"] <= 0.65


def test_fp32_has_no_layout_kernels(by_case):
    for case in ("resnet50_fp32_b8", "deeplabv3_resnet50_fp32_b2"):
        assert by_case[case]["hidden_rule"]["rule"]["kernels"] == 0
        assert "hidden:layout" not in by_case[case]["hidden"]


def test_output_is_deterministic_and_renders(report):
    a = json.dumps(R._round(report), indent=1)
    assert a == json.dumps(R._round(json.loads(a)), indent=1)  # rounding is idempotent
    md = R.to_markdown(report)
    assert md == R.to_markdown(report)
    for case in CASES:
        assert f"## {case}" in md
    assert "## What the model misses, and why" in md


def test_committed_report_lists_the_same_cases():
    committed = json.loads((R.DEFAULT_DATA / "report" / "report.json").read_text())
    assert tuple(c["case"] for c in committed["cases"]) == CASES
    assert (R.DEFAULT_DATA / "report" / "report.md").read_text().startswith("# Traffic and FLOP model")


def test_slim_reader_keeps_what_the_report_uses():
    path = R.DEFAULT_DATA / "bert_base_fp16_b8.csv"
    full, slim = parse_file(path), R.read_samples(path)
    assert [s.name for s in full] == [s.name for s in slim]
    assert [s.nvtx for s in full] == [s.nvtx for s in slim]
    mf, ms = R.measured_totals(full), R.measured_totals(slim)
    assert all(math.isclose(mf[k], ms[k]) for k in R.METRICS)


def test_cli_writes_json_and_markdown(tmp_path, capsys):
    assert R.main(["--case", "lstm_fp16_b16", "--out", str(tmp_path)]) == 0
    doc = json.loads((tmp_path / "report.json").read_text())
    assert [c["case"] for c in doc["cases"]] == ["lstm_fp16_b16"]
    assert "## lstm_fp16_b16" in (tmp_path / "report.md").read_text()
    assert "lstm_fp16_b16" in capsys.readouterr().out


def test_cli_error_without_samples(tmp_path, capsys):
    assert R.main(["--data", str(tmp_path), "--out", str(tmp_path / "out")]) == 2
    assert "error:" in capsys.readouterr().err
