"""``predict MODEL --mode train``: table with phases, JSON ``phases``/``memory``, option errors, phase charts."""
import json

import numpy as np
import onnx
import pytest
from onnx import helper

from predictor.cli import main
from tests.helpers import make_model


@pytest.fixture()
def model(tmp_path):
    w = np.random.default_rng(0).standard_normal((8, 3, 3, 3)).astype(np.float32)
    fc = np.random.default_rng(1).standard_normal((10, 8)).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1], name="/conv/Conv"),
             helper.make_node("Relu", ["c"], ["r"], name="/relu/Relu"),
             helper.make_node("GlobalAveragePool", ["r"], ["g"], name="/pool/GlobalAveragePool"),
             helper.make_node("Flatten", ["g"], ["f"], name="/flatten/Flatten"),
             helper.make_node("Gemm", ["f", "fc"], ["y"], transB=1, name="/fc/Gemm")]
    m = make_model(nodes, [("x", "float32", ["N", 3, 16, 16])], [("y", "float32", None)], {"w": w, "fc": fc})
    path = tmp_path / "net.onnx"
    onnx.save(m, str(path))
    return str(path)


def test_table_has_a_phase_block_and_phase_tagged_ops(model, capsys):
    assert main([model, "--gpu", "h200", "--mode", "train", "--batch", "4"]) == 0
    out = capsys.readouterr().out
    assert "training step" in out and "optimizer adamw (fused)" in out and "loss cross_entropy" in out
    for phase in ("forward", "backward", "optimizer"):
        assert f"\n{phase} " in out
    assert "/fc/Gemm::dB" in out and "peak memory" in out and "largest batch" in out
    assert "unsupported ops none" in out


def test_json_phases_memory_and_op_phases(model, capsys):
    assert main([model, "--gpu", "h200", "--mode", "train", "--batch", "4", "--format", "json",
                 "--optimizer", "sgd", "--no-fused-optimizer", "--loss", "mse"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["mode"] == "train" and doc["optimizer"] == {"name": "sgd", "impl": "foreach"} and doc["loss"] == "mse"
    assert set(doc["phases"]) == {"forward", "backward", "optimizer"}
    for ph in doc["phases"].values():
        assert set(ph) >= {"time_s", "flops", "bytes", "kernels"} and set(ph["bytes"]) == {"L1", "L2", "HBM"}
    assert doc["total_time_s"] == pytest.approx(sum(p["time_s"] for p in doc["phases"].values()))
    assert doc["kernels"] == sum(p["kernels"] for p in doc["phases"].values())
    mem = doc["memory"]
    assert set(mem) >= {"peak_bytes", "components", "fits", "max_batch", "capacity_bytes"} and mem["fits"] is True
    assert set(mem["components"]) >= {"parameters", "gradients", "optimizer_state", "activations", "workspace"}
    assert {op["phase"] for op in doc["ops"]} == {"forward", "backward", "optimizer"}
    assert doc["gpu"]["memory_bytes"] == 143771 * 2 ** 20


def test_csv_has_a_phase_column(model, tmp_path):
    out = tmp_path / "t.csv"
    assert main([model, "--gpu", "v100", "--mode", "train", "--format", "csv", "-o", str(out)]) == 0
    lines = out.read_text().splitlines()
    assert lines[0].endswith(",phase") and lines[-1].endswith(",optimizer")


@pytest.mark.parametrize("args, msg", [
    (["--mode", "train", "--optimizer", "rmsprop"], "invalid choice: 'rmsprop'"),
    (["--optimizer", "sgd"], "--optimizer applies to --mode train only"),
    (["--mode", "train", "--precision", "fp8"], "--mode train supports precisions"),
    (["--mode", "fly"], "invalid choice: 'fly'"),
])
def test_errors_are_one_line_exit_2(model, capsys, args, msg):
    assert main([model, "--gpu", "h200"] + args) == 2
    err = capsys.readouterr().err
    assert msg in err and err.count("\n") == 1 and err.startswith("error: ")


def test_a_training_sweep(model, capsys):
    assert main([model, "--gpu", "h200,v100", "--mode", "train", "--batch", "2,4", "--optimizer", "sgd",
                 "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["sweep"]
    assert len(rows) == 4 and all(r["total_time_s"] > 0 for r in rows)


def test_infer_mode_is_unchanged(model, capsys):
    assert main([model, "--gpu", "h200", "--mode", "infer", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert "phases" not in doc and "mode" not in doc


def test_plot_one_series_per_phase(model, tmp_path):
    from predictor.machine.profile import load_profile
    from predictor.train import predict_training_file
    from predictor.train.plots import phase_series

    pred = predict_training_file(model, load_profile("h200"), batch=2)
    series = phase_series(pred, load_profile("h200"))
    assert [s.label for s in series] == ["forward", "backward", "optimizer"]
    out = tmp_path / "r.svg"
    assert main([model, "--gpu", "h200", "--mode", "train", "--plot", str(out), "-o", str(tmp_path / "t.txt")]) == 0
    assert out.exists() and (tmp_path / "r-time.svg").exists()
