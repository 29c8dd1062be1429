"""What ``predict`` writes, as the user runs it (predictor.cli.main, or a subprocess where the file
descriptors matter): atomic files, inputs never overwritten, stdout failures as one line, clean names, safe
CSV, standard JSON."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from predictor.cli import main
from predictor.output import clean, dumps_json, safe_cell

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "robustness" / "corpus" / "onnx"
LSTM = ROOT / "examples" / "lstm.onnx"


def _run(argv, capsys):
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def _predict_proc(args, **kw):
    return subprocess.run([sys.executable, "-m", "predictor.cli", *map(str, args)], cwd=ROOT, text=True,
                          capture_output=kw.pop("capture_output", True), **kw)


# ------------------------------------------------------------------------------------------ inputs
@pytest.mark.parametrize("how", ["same", "symlink", "hardlink", "relative"])
def test_output_that_is_the_model_is_refused(how, tmp_path, capsys, monkeypatch):
    model = tmp_path / "m.onnx"
    model.write_bytes(LSTM.read_bytes())
    target = {"same": model, "symlink": tmp_path / "link.onnx", "hardlink": tmp_path / "hard.onnx",
              "relative": Path("sub/../m.onnx")}[how]
    if how == "symlink":
        target.symlink_to(model)
    elif how == "hardlink":
        os.link(model, target)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    rc, out, err = _run([model, "--gpu", "h200", "-o", target], capsys)
    assert rc == 2 and "refusing to overwrite an input" in err and err.count("\n") == 1
    assert model.read_bytes() == LSTM.read_bytes()


def test_plot_that_is_the_report_or_a_profile_is_refused(tmp_path, capsys):
    prof = tmp_path / "gpu.json"
    prof.write_text((ROOT / "predictor" / "machine" / "profiles" / "h200.json").read_text())
    rc, _, err = _run([LSTM, "--gpu", prof, "-o", prof], capsys)
    assert rc == 2 and "is the profile" in err
    rc, _, err = _run([LSTM, "--gpu", "h200", "-o", tmp_path / "r-time.png", "--plot", tmp_path / "r.png"], capsys)
    assert rc == 2 and "give them different names" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gpu.json"]


# ------------------------------------------------------------------------------------------ atomic
def test_overflowing_sums_with_plot_is_one_line(tmp_path, capsys):
    """A model whose sums overflow what a chart can show: one line, and neither the report nor a chart."""
    import onnx
    from onnx import TensorProto, helper

    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2**40] * 9)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    path = tmp_path / "in" / "huge.onnx"
    path.parent.mkdir()
    onnx.save(m, str(path))
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    rc, out, err = _run([path, "--gpu", "h200", "-o", out_dir / "r.txt", "--plot", out_dir / "c.png"], capsys)
    assert rc == 2 and err.startswith("error: cannot chart predicted: FLOPs of network is 2.35e+108") and out == ""
    assert list(out_dir.iterdir()) == []
    rc, out, err = _run([path, "--gpu", "h200", "--format", "json"], capsys)
    assert rc == 0
    json.loads(out, parse_constant=lambda c: pytest.fail(f"{c} in JSON"))


def test_time_chart_path_a_directory_leaves_nothing(tmp_path, capsys):
    (tmp_path / "c-time.png").mkdir()
    rc, _, err = _run([LSTM, "--gpu", "h200", "-o", tmp_path / "r.txt", "--plot", tmp_path / "c.png"], capsys)
    assert rc == 2 and "c-time.png" in err and "directory" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c-time.png"]


def test_report_replaces_an_old_one_atomically(tmp_path, capsys):
    out = tmp_path / "r.csv"
    out.write_text("old")
    rc, _, _ = _run([LSTM, "--gpu", "h200", "--format", "csv", "-o", out], capsys)
    assert rc == 0 and out.read_text().startswith("name,")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.csv"]  # no temporary left


# ------------------------------------------------------------------------------------------ stdout
def test_stdout_full_device_is_one_line():
    with open("/dev/full", "w") as full:
        p = _predict_proc([LSTM, "--gpu", "h200"], stdout=full, stderr=subprocess.PIPE, capture_output=False)
    assert p.returncode == 2 and p.stderr == "error: cannot write the report to stdout: No space left on device\n"


def test_closed_stdout_is_one_line():
    p = subprocess.run([sys.executable, "-c", "import os, sys; os.close(1); from predictor.cli import main; "
                        f"sys.exit(main([{str(LSTM)!r}, '--gpu', 'h200']))"], cwd=ROOT, text=True,
                       stderr=subprocess.PIPE)
    assert p.returncode == 2 and p.stderr.startswith("error: cannot write the report") and p.stderr.count("\n") == 1


def test_closed_pipe_is_one_line():
    """`predict ... | true`: the reader is gone before the report is written."""
    r, w = os.pipe()
    os.close(r)
    try:
        p = _predict_proc([LSTM, "--gpu", "h200", "--format", "json"], stdout=w, stderr=subprocess.PIPE,
                          capture_output=False)
    finally:
        os.close(w)
    assert p.returncode == 2 and "broken pipe" in p.stderr and "Traceback" not in p.stderr
    assert p.stderr.count("\n") == 1


# ------------------------------------------------------------------------------------------ names
def test_control_characters_never_reach_the_terminal(capsys):
    rc, out, err = _run([CORPUS / "ansi_names.onnx", "--gpu", "h200"], capsys)
    assert rc == 0 and "\x1b" not in out and "\r" not in out and "=cmd|red" in out
    rc, out, _ = _run([CORPUS / "ansi_names.onnx", "--gpu", "h200", "--format", "csv"], capsys)
    row = out.splitlines()[1]
    assert row.startswith("'=cmd|red ,Relu,") and "\x1b" not in out and "\r" not in out
    assert len(out.splitlines()) == 2  # header + the one op: the carriage return split no row
    rc, _, err = _run([CORPUS / "ansi_names.onnx", "--gpu", "h200", "--shape", "\x1b[2Jx=1"], capsys)
    assert rc == 2 and "\x1b" not in err


def test_clean_and_safe_cell():
    assert clean("a\x1b[31mb\x1b[0m\tc\r\n\u202ed") == "ab\tc\nd"
    assert [safe_cell(v) for v in ("=1+1", "+x", "-x", "@x", "-1.5", "+3", "name", 1.5)] == \
        ["'=1+1", "'+x", "'-x", "'@x", "-1.5", "+3", "name", 1.5]


def test_json_never_holds_infinity_or_nan():
    text = dumps_json({"a": float("inf"), "ops": [{"t": float("nan")}, {"t": 1.0}], "b": {"c": [1, -float("inf")]}})
    assert json.loads(text) == {"a": None, "ops": [{"t": None}, {"t": 1.0}], "b": {"c": [1, None]}}
    assert "Infinity" not in text and "NaN" not in text


def test_json_report_is_the_same_document_as_the_standard_encoder(capsys):
    """The fast layout carries the same document as json.dumps(indent=2) did."""
    from predictor.machine.profile import load_profile
    from predictor.predict import predict_file
    from predictor.report import to_json, to_json_dict

    p = load_profile("h200")
    pred = predict_file(str(LSTM), p)
    assert json.loads(to_json(pred, p)) == json.loads(json.dumps(to_json_dict(pred, p), indent=2))


# ------------------------------------------------------------------------------------------ audit cases
def _json_report(argv, capsys):
    rc, out, err = _run([*argv, "--format", "json"], capsys)
    assert rc == 0, err
    return json.loads(out)


def test_input_also_output_still_costs_the_graph(capsys):
    base = _json_report([LSTM, "--gpu", "h200"], capsys)
    both = _json_report([CORPUS / "input_also_output.onnx", "--gpu", "h200"], capsys)
    assert both["total_flops"] == base["total_flops"] > 0
    assert both["total_time_s"] == base["total_time_s"]


def test_sparse_initializer_is_a_dense_weight(capsys):
    doc = _json_report([CORPUS / "sparse_initializer.onnx", "--gpu", "h200"], capsys)
    assert doc["total_flops"] == 2 * 2 * 4 * 4  # MatMul [2,4] x [4,4]: 2 FLOPs per FMA


def test_mostly_unknown_shapes_needs_allow_partial(capsys):
    rc, _, err = _run([CORPUS / "mostly_unknown_shapes.onnx", "--gpu", "h200"], capsys)
    assert rc == 2 and "6 ops have unknown shapes and only 0 could be costed (Relu x6)" in err and "--allow-partial" in err
    doc = _json_report([CORPUS / "mostly_unknown_shapes.onnx", "--gpu", "h200", "--allow-partial"], capsys)
    assert doc["unsupported"] == {"Relu (unknown shape)": 6}


def test_devices_and_symlinks_are_written_in_place_not_replaced(tmp_path, capsys):
    """-o /dev/null stays the device (a rename would put a regular file in its place); through a symlink the
    file it points at gets the report and the link stays."""
    import stat

    rc, _, err = _run([LSTM, "--gpu", "h200", "-o", os.devnull], capsys)
    assert rc == 0, err
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)
    target, link = tmp_path / "r.txt", tmp_path / "link.txt"
    target.write_text("old")
    link.symlink_to(target)
    rc, _, _ = _run([LSTM, "--gpu", "h200", "-o", link], capsys)
    assert rc == 0 and link.is_symlink() and target.read_text().startswith("model lstm.onnx")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    import threading

    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()))
    reader.start()
    rc, _, _ = _run([LSTM, "--gpu", "h200", "-o", fifo], capsys)
    reader.join(10)
    assert rc == 0 and got and got[0].startswith("model lstm.onnx") and stat.S_ISFIFO(os.stat(fifo).st_mode)
