"""predict validate: predicted vs measured on a committed ncu sample (ResNet-50 fp16 batch 8)."""
import json

import pytest

from predictor.cli import main
from predictor.machine.profile import load_profile

CSV = "calibration/data/h200/ncu/resnet50_fp16_b8.csv"
MODEL = "examples/resnet50.onnx"
ARGS = [MODEL, "--gpu", "h200", "--ncu", CSV, "--precision", "fp16", "--batch", "8"]


@pytest.fixture(scope="module")
def validation():
    from predictor.fitted import bundled_calibration
    from predictor.validate import validate

    p = load_profile("h200")
    return validate(MODEL, p, CSV, "fp16", 8, calibration=bundled_calibration(p))


def test_measured_totals_are_the_samples(validation):
    from calibration.ncu.report import read_samples

    samples = read_samples(CSV)
    net = validation.measured.network
    assert net.kernels == len(samples) == validation.kernels
    assert net.time_s == pytest.approx(sum(s.time_s for s in samples))
    assert net.bytes["HBM"] == pytest.approx(sum(s.bytes["HBM"] or 0 for s in samples))
    # attributed kernels and unattributed ones add up
    attributed = sum(o.kernels for o in validation.measured.ops)
    assert attributed == validation.attributed
    assert attributed + sum(n for n, _ in validation.unattributed.values()) == len(samples)
    assert validation.predicted.network.time_s == pytest.approx(validation.prediction.total_time_s)


def test_rows_pair_predicted_and_measured(validation):
    rows = {r.name: r for r in validation.rows}
    conv1 = rows["/conv1/Conv"]
    assert conv1.predicted is not None and conv1.measured is not None
    assert conv1.measured.kernels >= 1 and conv1.measured.bound in ("compute", "L1", "L2", "HBM")
    # predicted per-op time leaves out the calibration's hidden kernels (compared as a group)
    pred = next(o for o in validation.prediction.ops if o.cost.name == "/conv1/Conv")
    assert conv1.predicted.time_s == pytest.approx(pred.time_s - pred.extra_time_s)


def test_json_and_table(capsys):
    assert main(["validate", *ARGS, "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert set(doc) >= {"network", "ops", "classes", "unattributed", "summary", "hidden", "mapping"}
    assert set(doc["network"]) == {"predicted", "measured", "error"}
    net = doc["network"]
    assert net["error"]["time_s"] == pytest.approx(net["predicted"]["time_s"] / net["measured"]["time_s"] - 1)
    assert set(net["measured"]["bytes"]) == {"L1", "L2", "HBM"}
    op = doc["ops"][0]
    assert set(op) == {"name", "op_type", "op_class", "predicted", "measured", "error"}
    assert main(["validate", *ARGS, "--top", "5"]) == 0
    out = capsys.readouterr().out
    assert "network" in out and "/conv1/Conv" in out and "hidden" in out


def test_plot_written(tmp_path, capsys):
    out = tmp_path / "v.png"
    assert main(["validate", *ARGS, "--plot", str(out), "-o", str(tmp_path / "r.txt")]) == 0
    assert out.stat().st_size > 10000 and (tmp_path / "v-time.png").stat().st_size > 10000


@pytest.mark.parametrize("text", [
    "not a csv at all\n",
    '"ID","Kernel Name","gpu__time_duration.sum"\n"0","k","abc"\n',
    '"ID","Kernel Name"\n"0","k"\n',
])
def test_malformed_csv_one_line_error(tmp_path, capsys, text):
    bad = tmp_path / "bad.csv"
    bad.write_text(text)
    assert main(["validate", MODEL, "--gpu", "h200", "--ncu", str(bad), "--precision", "fp16", "--batch", "8"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "bad.csv" in err


def test_missing_csv_and_bad_plot(tmp_path, capsys):
    assert main(["validate", MODEL, "--gpu", "h200", "--ncu", str(tmp_path / "none.csv")]) == 2
    assert "no such ncu CSV" in capsys.readouterr().err
    assert main(["validate", *ARGS, "--plot", str(tmp_path / "x.pdf")]) == 2
    assert capsys.readouterr().err.count("\n") == 1
