import json

import onnx
import pytest
from onnx import helper

from predictor.cli import main
from tests.helpers import make_model


def test_table(conv_model, capsys):
    assert main([conv_model, "--gpu", "v100", "--batch", "2"]) == 0
    out = capsys.readouterr().out
    assert "total time" in out and "/conv/Conv" in out and "unsupported ops none" in out


def test_json_schema(conv_model, capsys):
    assert main([conv_model, "--gpu", "V100", "--batch", "2", "--format", "json", "--uncalibrated"]) == 0
    doc = json.loads(capsys.readouterr().out)
    for key in ("model", "gpu", "precision", "batch", "total_time_s", "total_flops", "total_bytes", "ops",
                "unsupported"):
        assert key in doc
    assert set(doc["gpu"]) >= {"name", "peak_flops_per_s", "bandwidth_Bps", "launch_overhead_s", "provenance"}
    assert doc["batch"] == 2 and doc["unsupported"] == {}
    conv = doc["ops"][0]
    # 2 * N*Cout*H*W * Cin*kh*kw = 2 * 2*8*16*16 * 3*3*3 = 221184 (plus no bias)
    assert conv["flops"] == 221184
    assert set(conv) >= {"name", "op_type", "flops", "bytes", "time_s", "bound"}
    assert set(conv["bytes"]) == {"L1", "L2", "HBM"}


def test_csv_output_file(conv_model, tmp_path):
    out = tmp_path / "r.csv"
    assert main([conv_model, "--gpu", "h200", "--format", "csv", "-o", str(out)]) == 0
    lines = out.read_text().splitlines()
    assert lines[0].startswith("name,op_type,flops") and len(lines) == 3


def test_unsupported_reported_and_strict(tmp_path, capsys):
    m = make_model([helper.make_node("Relu", ["x"], ["a"]), helper.make_node("FancyOp", ["a"], ["y"], domain="acme")],
                   [("x", "float32", [4, 4])], [("y", "float32", [4, 4])])
    m.opset_import.append(helper.make_opsetid("acme", 1))
    path = tmp_path / "u.onnx"
    onnx.save(m, str(path))
    assert main([str(path), "--gpu", "v100", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["unsupported"] == {"acme.FancyOp": 1}
    assert main([str(path), "--gpu", "v100", "--strict"]) == 2
    assert "acme.FancyOp x1" in capsys.readouterr().err


@pytest.mark.parametrize("args,msg", [
    (["missing.onnx", "--gpu", "v100"], "no such file"),
    (["{model}", "--gpu", "k80"], "unknown GPU 'k80'"),
    (["{model}", "--gpu", "v100", "--shape", "x=1,a"], "bad --shape"),
    (["{model}", "--gpu", "v100", "--shape", "nope=1,2"], "unknown input 'nope'"),
    (["{model}", "--gpu", "v100", "--precision", "fp4"], "unknown precision"),
    (["{model}", "--gpu", "v100", "--precision", "bf16"], "has no bf16"),
    (["{model}", "--gpu", "a100", "--precision", "fp8"], "has no fp8"),
    (["{model}", "--gpu", "v100", "--batch", "0"], "must be between"),
])
def test_errors_one_line_exit_2(conv_model, capsys, args, msg):
    args = [a.replace("{model}", conv_model) for a in args]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert msg in err and err.count("\n") == 1 and err.startswith("error: ")


def test_not_onnx(tmp_path, capsys):
    p = tmp_path / "x.onnx"
    p.write_text("hello, I am not a model")
    assert main([str(p), "--gpu", "v100"]) == 2
    assert capsys.readouterr().err.startswith("error: ")
