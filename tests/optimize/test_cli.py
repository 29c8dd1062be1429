"""``predict ... --optimize`` and ``predict compare ... --vs-optimize`` through the command line."""
import json

import numpy as np
import onnx
import pytest
from onnx import helper

from predictor.cli import main
from predictor.optimize import all_passes
from tests.helpers import make_model


@pytest.fixture()
def cbr_model(tmp_path):
    rng = np.random.default_rng(0)
    inits = {"w": rng.standard_normal((8, 3, 3, 3)).astype(np.float32),
             **{k: np.ones(8, np.float32) for k in ("s", "b", "m", "v")}}
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1], name="/conv/Conv"),
             helper.make_node("BatchNormalization", ["c", "s", "b", "m", "v"], ["n"], name="/bn/BatchNormalization"),
             helper.make_node("Relu", ["n"], ["r"], name="/relu/Relu"),
             helper.make_node("Add", ["r", "x2"], ["y"], name="/add/Add")]
    inputs = [("x", "float32", ["N", 3, 16, 16]), ("x2", "float32", ["N", 8, 16, 16]), ("w", "float32", [8, 3, 3, 3])]
    inputs += [(k, "float32", [8]) for k in ("s", "b", "m", "v")]
    path = tmp_path / "cbr.onnx"
    onnx.save(make_model(nodes, inputs, [("y", "float32", None)], inits), str(path))
    return str(path)


def _json(capsys, *args):
    assert main(list(args) + ["--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_optimize_all_json_and_table(cbr_model, capsys):
    base = _json(capsys, cbr_model, "--gpu", "h200", "--precision", "fp16", "--batch", "4")
    opt = _json(capsys, cbr_model, "--gpu", "h200", "--precision", "fp16", "--batch", "4", "--optimize", "all")
    assert base["optimize"] == [] and opt["optimize"] == list(all_passes())
    # conv, batch norm, relu, add -> conv with the folded bias, one relu + add kernel
    assert base["kernels"] == 4 and opt["kernels"] == 2
    assert {o["op_type"] for o in opt["ops"]} == {"FusedConv", "FusedElementwise"}
    assert opt["total_time_s"] < base["total_time_s"]
    assert main([cbr_model, "--gpu", "h200", "--precision", "fp16", "--batch", "4", "--optimize", "all"]) == 0
    out = capsys.readouterr().out
    assert "optimize: bn_fold,attention,elementwise,channels_last" in out.splitlines()[0]


def test_unknown_pass_is_a_one_line_error(cbr_model, capsys):
    assert main([cbr_model, "--gpu", "h200", "--optimize", "bn_fold,nope"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: unknown optimization pass 'nope' (known: bn_fold")


def test_compare_vs_optimize(cbr_model, capsys):
    doc = _json(capsys, "compare", cbr_model, "--gpu", "h200", "--precision", "fp16", "--batch", "4",
                "--vs-optimize", "all")
    assert doc["a"]["optimize"] == [] and doc["b"]["optimize"] == list(all_passes())
    assert doc["a"]["label"] == "optimize none" and doc["b"]["label"].startswith("optimize bn_fold")
    assert doc["b"]["totals"]["kernels"] < doc["a"]["totals"]["kernels"]
    # --optimize applies to both sides unless --vs-optimize says otherwise ('none': no passes)
    doc = _json(capsys, "compare", cbr_model, "--gpu", "h200", "--precision", "fp16", "--batch", "4",
                "--optimize", "all", "--vs-optimize", "none")
    assert doc["a"]["optimize"] == list(all_passes()) and doc["b"]["optimize"] == []
    assert main(["compare", cbr_model, "--gpu", "h200", "--vs-optimize", "bogus"]) == 2
    assert "unknown optimization pass 'bogus'" in capsys.readouterr().err


def test_validate_refuses_optimize(cbr_model, tmp_path, capsys):
    csv = tmp_path / "s.csv"
    csv.write_text("ID,Kernel Name\n")
    assert main(["validate", cbr_model, "--gpu", "h200", "--ncu", str(csv), "--optimize", "all"]) == 2
    assert "--optimize is not supported" in capsys.readouterr().err
