"""The Python API (predictor/api.py): the CLI's numbers and text as frozen result objects."""
import dataclasses
import json
import re
import runpy
import sys
from pathlib import Path

import pytest

import predictor
from predictor.cli import main
from predictor.types import PredictorError

REPO = Path(__file__).resolve().parents[1]


def test_predict_matches_the_cli(conv_model, capsys):
    r = predictor.predict(conv_model, gpu="h200", batch=2)
    assert isinstance(r, predictor.Prediction)
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.raw = None
    assert main([conv_model, "--gpu", "h200", "--batch", "2"]) == 0
    assert capsys.readouterr().out == r.to_table()          # the same object the CLI prints
    assert main([conv_model, "--gpu", "h200", "--batch", "2", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == r.to_dict() == json.loads(r.to_json())
    assert main([conv_model, "--gpu", "h200", "--batch", "2", "--format", "csv"]) == 0
    assert capsys.readouterr().out == r.to_csv()
    # Conv(3->8, 3x3, pad 1) at batch 2 on 16x16: 2 * (2*8*16*16) * (3*3*3) = 221184 FLOPs; Relu adds 2*8*16*16 = 4096
    assert r.total_flops == 221184 + 4096 and r.batch == 2 and r.gpu == "h200" and r.mode == "infer"
    assert r.total_time_s == sum(o.time_s for o in r.ops)


def test_calibration_choices(conv_model, tmp_path):
    bundled = predictor.predict(conv_model, gpu="h200")
    plain = predictor.predict(conv_model, gpu="h200", calibration="uncalibrated")
    assert bundled.raw.calibration == "fitted:h200" and plain.raw.calibration == "uncalibrated"
    with pytest.raises(PredictorError, match="calibration must be"):
        predictor.predict(conv_model, gpu="h200", calibration=3)
    with pytest.raises(PredictorError):
        predictor.predict(str(tmp_path / "missing.onnx"), gpu="h200")


def test_modules_stay_importable_and_callable(conv_model):
    import predictor.predict as predict_module
    import predictor.sweep as sweep_module

    assert callable(predictor.predict) and predictor.predict is predict_module
    assert hasattr(predict_module, "predict_file") and hasattr(sweep_module, "run_sweep")
    assert predict_module(conv_model, gpu="v100").gpu == "v100"     # the module's call is the API function


def test_to_pandas_rows_and_missing_pandas(conv_model, monkeypatch):
    r = predictor.predict(conv_model, gpu="h200", batch=2)
    rows = r._frame_rows()
    assert [x["name"] for x in rows] == ["/conv/Conv", "/relu/Relu"]
    conv = rows[0]
    assert conv["output_shape"] == (2, 8, 16, 16) and conv["params"] == 8 * 3 * 3 * 3   # the weight, 216
    assert conv["intensity_HBM"] == conv["flops"] / conv["bytes_HBM"]
    monkeypatch.setitem(sys.modules, "pandas", None)                 # as if pandas were not installed
    with pytest.raises(ImportError, match="pip install pandas"):
        r.to_pandas()


def test_to_pandas_frame(conv_model):
    pd = pytest.importorskip("pandas")
    df = predictor.predict(conv_model, gpu="h200", batch=2).to_pandas()
    assert isinstance(df, pd.DataFrame) and len(df) == 2 and {"time_s", "bound", "op_class"} <= set(df.columns)
    s = predictor.sweep(conv_model, gpus=["v100", "h200"], batches=[1, 4]).to_pandas()
    assert len(s) == 4 and "bound_compute" in s.columns


def test_compare_sweep_train_step(conv_model, capsys):
    a = predictor.predict(conv_model, gpu="h200", batch=2)
    b = predictor.predict(conv_model, gpu="h200", batch=2, precision="fp16")
    c = predictor.compare(a, b)
    assert c.speedup == pytest.approx(a.total_time_s / b.total_time_s)
    assert main(["compare", conv_model, "--gpu", "h200", "--batch", "2", "--vs-precision", "fp16"]) == 0
    assert capsys.readouterr().out == c.to_table()
    with pytest.raises(PredictorError, match="two Prediction"):
        predictor.compare(a, "b.onnx")
    s = predictor.sweep(conv_model, gpus=["v100", "h200"], precisions=["fp16", "fp8"], batches=[4])
    assert main([conv_model, "--gpu", "v100,h200", "--precision", "fp16,fp8", "--batch", "4"]) == 0
    assert capsys.readouterr().out == s.to_table()
    assert [r.ok for r in s.rows] == [True, False, True, True]       # no fp8 on the V100
    t = predictor.train_step(conv_model, gpu="h200", batch=2, optimizer="sgd", loss="mse")
    assert t.mode == "train" and {p.name for p in t.raw.phases} == {"forward", "backward", "optimizer"}
    assert "phase" in t._frame_rows()[0]


def test_validate_matches_the_cli(capsys):
    model = str(REPO / "examples" / "resnet50.onnx")
    ncu = str(REPO / "calibration" / "data" / "h200" / "ncu" / "resnet50_fp16_b8.csv")
    v = predictor.validate(model, gpu="h200", ncu=ncu, precision="fp16", batch=8)
    assert main(["validate", model, "--gpu", "h200", "--ncu", ncu, "--precision", "fp16", "--batch", "8"]) == 0
    assert capsys.readouterr().out == v.to_table()
    assert v.to_dict()["schema_version"] == 1 and len(v._frame_rows()) == len(v.raw.rows)


def test_version(capsys):
    text = (REPO / "pyproject.toml").read_text()
    assert predictor.__version__ == re.search(r'^version = "([^"]+)"', text, re.M).group(1)
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"predict {predictor.__version__}"


def test_calibrate_help_exits_zero(capfd):
    assert main(["calibrate", "--help"]) == 0
    assert "usage: predict calibrate" in capfd.readouterr().out
    assert main(["calibrate"]) == 2                                   # no subcommand: a usage error


def test_docs_example_runs(capsys):
    runpy.run_path(str(REPO / "docs" / "api_example.py"), run_name="__main__")
    out = capsys.readouterr().out
    assert "resnet50.onnx fp16 batch 8 on h200" in out and "fp16 over fp32" in out and "training step" in out
