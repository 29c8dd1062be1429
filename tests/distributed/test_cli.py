"""predict MODEL --mode train --gpus N / --system S --nodes N: outputs, chart, and one-line errors."""
import json

import pytest

from predictor.cli import main


def _run(capsys, *argv):
    rc = main(list(argv))
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_gpus_sweep_json(conv_model, capsys):
    rc, out, err = _run(capsys, conv_model, "--mode", "train", "--gpu", "h100", "--gpus", "1,8,16", "--batch", "4",
                        "--format", "json")
    assert rc == 0, err
    doc = json.loads(out)
    assert doc["mode"] == "train" and doc["system"]["name"] == "dgx-h100" and doc["batch_per_gpu"] == 4
    rows = doc["scaling"]
    assert [r["gpus"] for r in rows] == [1, 8, 16] and [r["nodes"] for r in rows] == [1, 1, 2]
    assert rows[0]["efficiency"] == 1.0
    for r in rows:
        assert r["speedup"] == pytest.approx(r["gpus"] * r["efficiency"])
        assert r["throughput_per_s"] == pytest.approx(4 * r["gpus"] / r["step_time_s"])


def test_system_nodes_table_and_csv(conv_model, capsys, tmp_path):
    rc, out, err = _run(capsys, conv_model, "--mode", "train", "--system", "summit", "--nodes", "1,2", "--batch", "2")
    assert rc == 0, err
    assert "OLCF Summit" in out and "exposed comm" in out
    rc, out, err = _run(capsys, conv_model, "--mode", "train", "--system", "perlmutter", "--nodes", "1,4",
                        "--format", "csv", "--hybrid-group", "4", "--grad-comm", "fp16", "--bucket-mb", "5")
    assert rc == 0, err
    lines = out.strip().splitlines()
    assert lines[0].startswith("gpus,nodes,step_time_s") and [l.split(",")[0] for l in lines[1:]] == ["4", "16"]
    hdr = lines[0].split(",")
    assert lines[2].split(",")[hdr.index("hybrid_step_time_s")] != ""  # the 16-GPU row has a hybrid column
    assert lines[1].split(",")[hdr.index("input_time_s")] == "0"


def test_input_rate_what_if(conv_model, capsys):
    rc, out, err = _run(capsys, conv_model, "--mode", "train", "--gpu", "a100", "--gpus", "1,8", "--batch", "2",
                        "--input-rate", "1")
    assert rc == 0, err
    assert "input pipeline 1.0/s per node" in out and "input-bound at 1, 8 GPUs" in out
    rc, out, err = _run(capsys, conv_model, "--mode", "train", "--gpu", "a100", "--gpus", "8", "--batch", "2",
                        "--input-rate", "1", "--format", "json")
    doc = json.loads(out)
    assert doc["data_parallel"]["input_rate_per_node_per_s"] == 1.0
    row = doc["scaling"][0]
    assert row["input_bound"] and row["input_time_s"] == pytest.approx(16.0) and row["step_time_s"] == 16.0


def test_plot(conv_model, capsys, tmp_path):
    path = tmp_path / "s.png"
    rc, out, err = _run(capsys, conv_model, "--mode", "train", "--gpu", "a100", "--gpus", "1,8,64", "--plot", str(path))
    assert rc == 0, err
    assert path.stat().st_size > 10000


@pytest.mark.parametrize("argv,msg", [
    (["--mode", "train", "--gpu", "h100", "--gpus", "0"], "argument --gpus: '0' must be between 1"),
    (["--mode", "train", "--gpu", "h100", "--gpus", "eight"], "argument --gpus: 'eight' is not a whole number"),
    (["--mode", "train", "--gpu", "h100", "--gpus", "1,x"], "'x' is not a whole number (item 2 of '1,x')"),
    (["--mode", "train", "--system", "frontier"], "unknown system 'frontier'"),
    (["--gpu", "h100", "--gpus", "8"], "add --mode train"),
    (["--mode", "train", "--gpu", "a100", "--gpus", "12"], "12 GPUs do not fill whole dgx-a100 nodes of 8"),
    (["--mode", "train", "--system", "summit", "--nodes", "5000"], "the system has 4608"),
    (["--mode", "train", "--gpu", "a100", "--gpus", "8", "--input-rate", "0"], "must be a number of samples/s"),
    (["--mode", "train", "--system", "summit", "--gpu", "h100", "--gpus", "6"], "does not match summit's GPU"),
    (["--mode", "train", "--gpu", "h100", "--gpus", "8", "--nodes", "2"], "give --gpus or --nodes, not both"),
    (["--mode", "train", "--gpu", "h100", "--gpus", "8", "--bucket-mb", "-3"], "argument --bucket-mb"),
    (["--mode", "train", "--gpu", "h100", "--gpus", "16", "--hybrid-group", "3"], "--hybrid-group 3 must divide"),
    (["--mode", "train", "--gpu", "h100", "--gpus", "8", "--plot", "x.pdf"], "must end in .png or .svg"),
    (["--mode", "train", "--gpu", "h100,a100", "--gpus", "8"], "takes one GPU"),
])
def test_bad_input_is_one_line_exit_2(conv_model, capsys, argv, msg):
    rc, out, err = _run(capsys, conv_model, *argv)
    assert rc == 2
    assert err.startswith("error: ") and err.count("\n") == 1 and msg in err


def test_gpu_still_required_without_a_system(conv_model, capsys):
    rc, out, err = _run(capsys, conv_model, "--batch", "2")
    assert rc == 2 and "the following arguments are required: --gpu" in err


def test_no_nvls_and_strategy_in_json(conv_model, capsys):
    rc, out, err = _run(capsys, conv_model, "--mode", "train", "--gpu", "h200", "--gpus", "8", "--no-nvls",
                        "--parallel", "zero1", "--accumulate", "2", "--format", "json")
    assert rc == 0, err
    dp = json.loads(out)["data_parallel"]
    assert (dp["nvls"], dp["strategy"], dp["accumulate"], dp["bucket_mb"]) == (False, "zero1", 2, 25.0)
