"""predict compare: two models, or one model under two settings."""
import json

import pytest

from predictor.cli import main

LSTM = "examples/lstm.onnx"


def _json(capsys):
    return json.loads(capsys.readouterr().out)


def test_vs_precision(capsys):
    assert main(["compare", LSTM, "--gpu", "h200", "--batch", "4", "--precision", "fp32", "--vs-precision", "fp16",
                 "--format", "json"]) == 0
    d = _json(capsys)
    assert d["a"]["label"] == "fp32" and d["b"]["label"] == "fp16"
    ta, tb = d["a"]["totals"]["time_s"], d["b"]["totals"]["time_s"]
    assert d["saved_s"] == pytest.approx(ta - tb) and d["speedup"] == pytest.approx(ta / tb)
    assert d["only_a"] == d["only_b"] == 0 and d["matched_ops"] == len(d["ops"])
    # time saved per class adds up to the total saved
    assert sum(c["saved_s"] for c in d["classes"].values()) == pytest.approx(ta - tb)
    assert sum(o["saved_s"] for o in d["ops"]) == pytest.approx(ta - tb)
    changed = sum(1 for o in d["ops"] if o["a"]["bound"] != o["b"]["bound"])
    assert sum(d["bound_changes"].values()) == changed


def test_vs_batch_and_gpu_table(capsys):
    assert main(["compare", LSTM, "--gpu", "h200", "--batch", "1", "--vs-batch", "8"]) == 0
    out = capsys.readouterr().out
    assert "batch 1" in out and "batch 8" in out and "bound changes" in out
    assert main(["compare", LSTM, "--gpu", "h200", "--vs-gpu", "v100", "--format", "json"]) == 0
    d = _json(capsys)
    assert (d["a"]["gpu"], d["b"]["gpu"]) == ("h200", "v100") and (d["a"]["label"], d["b"]["label"]) == ("h200", "v100")


def test_two_models(conv_model, capsys):  # noqa: F811
    assert main(["compare", conv_model, LSTM, "--gpu", "h200", "--batch", "2", "--format", "json"]) == 0
    d = _json(capsys)
    assert d["matched_ops"] == 0 and d["only_a"] >= 1 and d["only_b"] >= 1


def test_plot_overlay(tmp_path, capsys):
    out = tmp_path / "c.svg"
    assert main(["compare", LSTM, "--gpu", "h200", "--precision", "fp32", "--vs-precision", "fp16",
                 "--plot", str(out)]) == 0
    assert out.exists() and (tmp_path / "c-time.svg").exists()


def test_errors(capsys):
    assert main(["compare", LSTM, "--gpu", "h200"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: compare needs") and err.count("\n") == 1
    assert main(["compare", LSTM, "--gpu", "h200", "--vs-precision", "fp7"]) == 2
    assert "unknown precision" in capsys.readouterr().err


def test_predict_plot(conv_model, tmp_path, capsys):  # noqa: F811
    out = tmp_path / "p.png"
    assert main([conv_model, "--gpu", "h200", "--batch", "2", "--plot", str(out)]) == 0
    assert "total time" in capsys.readouterr().out
    assert out.stat().st_size > 5000 and (tmp_path / "p-time.png").stat().st_size > 5000
    assert main([conv_model, "--gpu", "h200", "--plot", str(tmp_path / "p.jpg")]) == 2
