"""predict with comma lists: one row per (GPU, precision, batch), n/a rows, outputs, and the CLI around it."""
import argparse
import csv
import io
import json
import re

import pytest

import predictor.graph.loader as loader
import predictor.predict as predict_mod
import predictor.sweep as sweep_mod
from predictor.cli import build_parser, main
from predictor.fitted import bundled_calibration
from predictor.machine.profile import load_profile
from predictor.predict import predict_file
from predictor.sweep import (BOUNDS, CSV_COLUMNS, SweepRow, failed_row, mix_text, require_success, run_sweep,
                             with_speedups)
from predictor.types import PredictorError

ROW_KEYS = {"gpu", "precision", "batch", "total_time_s", "eager_time_s", "throughput_per_s", "speedup", "bound_mix",
            "kernels", "calibration", "unsupported", "error", "speedup_per_sample"}


def _json(capsys, argv):
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_rows_order_values_and_agreement_with_single_predictions(conv_model, capsys):
    doc = _json(capsys, [conv_model, "--gpu", "v100,h200", "--precision", "fp32,fp16", "--batch", "1,8,2",
                         "--format", "json"])
    assert set(doc) == {"schema_version", "model", "axes", "baseline", "sweep"}
    assert doc["model"] == "conv.onnx"
    assert doc["axes"] == {"gpu": ["v100", "h200"], "precision": ["fp32", "fp16"], "batch": [1, 8, 2]}
    rows = doc["sweep"]
    assert len(rows) == 12
    assert [(r["gpu"], r["precision"], r["batch"]) for r in rows] == [
        (g, p, b) for g in ("v100", "h200") for p in ("fp32", "fp16") for b in (1, 8, 2)]
    assert all(set(r) == ROW_KEYS for r in rows)
    assert doc["baseline"] == {"gpu": "v100", "precision": "fp32", "batch": 1}
    t0 = rows[0]["total_time_s"]
    assert rows[0]["speedup"] == 1.0
    for r in rows:
        assert r["error"] is None
        assert r["throughput_per_s"] == r["batch"] / r["total_time_s"]
        assert r["speedup"] == t0 / r["total_time_s"]
        assert list(r["bound_mix"]) == list(BOUNDS) and sum(r["bound_mix"].values()) == pytest.approx(1.0)
        # the same numbers as a single prediction of that setting
        prof = load_profile(r["gpu"])
        single = predict_file(conv_model, prof, precision=r["precision"], batch=r["batch"],
                              calibration=bundled_calibration(prof))
        assert r["total_time_s"] == single.total_time_s and r["eager_time_s"] == single.eager_time_s
        assert r["kernels"] == single.kernels and r["calibration"] == single.calibration
    assert rows[0]["calibration"].endswith("(transferred to another GPU)")     # v100 gets the H200 fit
    assert rows[-1]["calibration"] == "fitted:h200"


def test_fp8_on_v100_is_na_while_others_succeed(conv_model, capsys):
    assert main([conv_model, "--gpu", "v100,h200", "--precision", "fp16,fp8", "--batch", "4"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == ("sweep of conv.onnx: 2 GPUs x 2 precisions x 1 batch size = 4 settings, 3 predicted; "
                        "baseline v100 fp16 batch 4")
    body = [ln for ln in lines if ln.startswith(("v100 ", "h200 "))]
    assert [ln.split()[:3] for ln in body] == [["v100", "fp16", "4"], ["v100", "fp8", "4"], ["h200", "fp16", "4"],
                                               ["h200", "fp8", "4"]]
    assert body[1].endswith("n/a [1]") and "n/a" not in body[0] + body[2] + body[3]   # the reason once, below
    assert out.count("v100 has no fp8 tensor-core ceiling") == 1
    assert "[1] n/a: v100 has no fp8 tensor-core ceiling" in out
    assert "calibration transferred from h200" in body[0]
    assert "speedup: throughput of the setting / throughput of the baseline v100 fp16 batch 4" in out
    doc = _json(capsys, [conv_model, "--gpu", "v100,h200", "--precision", "fp8", "--format", "json"])
    v100, h200 = doc["sweep"]
    assert v100["error"].startswith("v100 has no fp8") and v100["total_time_s"] is None and v100["speedup"] is None
    assert h200["error"] is None and h200["speedup"] == 1.0          # the first row that succeeded
    assert doc["baseline"] == {"gpu": "h200", "precision": "fp8", "batch": 1}
    assert doc["axes"]["batch"] == [None] and v100["batch"] == 1    # the graph's own batch when none is given


def test_every_row_failing_is_one_line_exit_2(conv_model, capsys, tmp_path):
    out = tmp_path / "r.json"
    assert main([conv_model, "--gpu", "v100,a100", "--precision", "fp8", "--format", "json", "-o", str(out)]) == 2
    cap = capsys.readouterr()
    assert cap.out == "" and cap.err.startswith("error: ") and cap.err.count("\n") == 1
    assert "v100 has no fp8" in cap.err and "a100 has no fp8" in cap.err
    assert not out.exists()
    # one reason for every row: just that reason
    assert main([conv_model, "--gpu", "v100", "--precision", "fp8,bf16", "--batch", "1,2"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "v100 has no fp8" in err and "v100 has no bf16" in err
    assert main([conv_model, "--gpu", "v100", "--precision", "fp8", "--batch", "1,2"]) == 2
    assert capsys.readouterr().err.startswith("error: v100 has no fp8 tensor-core ceiling")


@pytest.mark.parametrize("batch,msg", [
    ("1,x,32", "'x' is not a whole number (item 2 of '1,x,32')"),
    ("1,0", "'0' must be between 1 and 2**31 (item 2 of '1,0')"),
    ("8,,2", "'' is not a whole number (item 2 of '8,,2')"),
    ("0", "'0' must be between"),
])
def test_bad_batch_item_exit_2_one_line(conv_model, capsys, batch, msg):
    assert main([conv_model, "--gpu", "h200", "--batch", batch]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: argument --batch: ") and msg in err and err.count("\n") == 1


@pytest.mark.parametrize("argv,msg", [
    (["--gpu", "v100,k80"], "unknown GPU 'k80'"),
    (["--gpu", "v100,"], "empty item in 'v100,'"),
    (["--gpu", "h200", "--precision", "fp16,fp4"], "unknown precision 'fp4'"),
])
def test_bad_list_items_are_whole_sweep_errors(conv_model, capsys, argv, msg):
    assert main([conv_model] + argv) == 2
    err = capsys.readouterr().err
    assert msg in err and err.count("\n") == 1


def test_single_values_keep_the_single_prediction_output(conv_model, capsys):
    assert main([conv_model, "--gpu", "v100", "--batch", "2"]) == 0
    single = capsys.readouterr().out
    assert "total time" in single and "/conv/Conv" in single and "sweep" not in single
    assert main([conv_model, "--gpu", "v100", "--batch", "2,2", "--precision", "fp32,fp32"]) == 0  # repeats dropped
    assert capsys.readouterr().out == single
    doc = _json(capsys, [conv_model, "--gpu", "h200", "--format", "json"])
    assert doc["batch"] == 1 and "ops" in doc and "sweep" not in doc


def test_csv_and_table_layout(conv_model, capsys):
    assert main([conv_model, "--gpu", "v100,h200", "--precision", "fp32", "--batch", "1,4", "--format", "csv"]) == 0
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert tuple(rows[0]) == CSV_COLUMNS and len(rows) == 5
    assert [r[:3] for r in rows[1:]] == [["v100", "fp32", "1"], ["v100", "fp32", "4"], ["h200", "fp32", "1"],
                                         ["h200", "fp32", "4"]]
    assert rows[1][CSV_COLUMNS.index("speedup")] == "1" and all(r[CSV_COLUMNS.index("error")] == "" for r in rows[1:])
    # per sample: batch 4 on the v100 against batch 1 there: (t1 / 1) / (t4 / 4)
    t1, t4 = (float(rows[i][CSV_COLUMNS.index("total_time_s")]) for i in (1, 2))
    assert float(rows[2][CSV_COLUMNS.index("speedup_per_sample")]) == pytest.approx(4 * t1 / t4, rel=1e-5)
    assert main([conv_model, "--gpu", "v100,h200", "--batch", "1,4", "--uncalibrated"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split()[:8] == ["gpu", "precision", "batch", "time", "eager", "throughput", "speedup",
                                    "C/L1/L2/HBM/lat"]
    assert len([ln for ln in lines if ln.startswith(("v100 ", "h200 "))]) == 4
    assert lines[-1] == "unsupported ops none"
    body = [ln for ln in lines if ln.startswith(("v100 ", "h200 "))]
    assert all(re.match(r"^\S+ +fp32 +\d+ +[\d.]+ [mu]?s +- ", ln) for ln in body), body   # no eager uncalibrated


def test_compare_stays_single_valued(conv_model, capsys):
    assert main(["compare", conv_model, "--gpu", "h200", "--batch", "1,8", "--vs-batch", "2"]) == 2
    assert "'1,8' is not a whole number" in capsys.readouterr().err
    assert main(["compare", conv_model, "--gpu", "v100,h200", "--vs-precision", "fp16"]) == 2
    assert "unknown GPU 'v100,h200'" in capsys.readouterr().err


def test_model_loaded_once_per_batch_and_kwargs_passed_through(conv_model, monkeypatch):
    loads, kwargs = [], []
    real_load, real_predict = loader.load, predict_mod.predict_graph

    def counting_load(path, batch=None, shapes=None):
        loads.append(batch)
        return real_load(path, batch=batch, shapes=shapes)

    def recording_predict(graph, profile, precision="fp32", calibration=None, strict=False, batch=None, **kw):
        kwargs.append(kw)
        return real_predict(graph, profile, precision, calibration, strict, batch=batch)

    monkeypatch.setattr(loader, "load", counting_load)
    monkeypatch.setattr(predict_mod, "predict_graph", recording_predict)
    profs = [load_profile("v100"), load_profile("h100"), load_profile("h200")]
    s = run_sweep(conv_model, profs, ["fp32", "FP16", "fp16"], [1, 8, 1], calibration_for=bundled_calibration,
                  optimize="fuse")
    assert loads == [1, 8]                                  # once per distinct batch, not once per row
    assert len(s.rows) == 3 * 2 * 2 and s.precisions == ("fp32", "fp16")
    assert kwargs == [{"optimize": "fuse"}] * 12


def test_node_formulas_run_once_per_precision_and_batch_not_per_gpu(conv_model, monkeypatch):
    import predictor.graph.cost as cost

    calls = []
    real = cost.node_work
    monkeypatch.setattr(cost, "node_work", lambda node, pol, opset=21: calls.append(pol.name) or real(node, pol, opset))
    profs = [load_profile("v100"), load_profile("a100"), load_profile("h200")]
    s = run_sweep(conv_model, profs, ["fp32", "fp16"], [1, 2], calibration_for=bundled_calibration)
    assert len(calls) == 2 * 2 * 2                    # 2 nodes x 2 precisions x 2 batches (not x 3 GPUs)
    assert cost._WORK_MEMO.get() is None              # the memo lives only inside run_sweep
    for r in s.rows:                                  # and changes nothing
        prof = load_profile(r.gpu)
        assert r.total_time_s == predict_file(conv_model, prof, precision=r.precision, batch=r.batch,
                                              calibration=bundled_calibration(prof)).total_time_s
    calls.clear()
    run_sweep(conv_model, profs[:2], ["amp"], [1])    # mixed precision: per-node policies, not reused
    assert len(calls) >= 2 * 2


def test_cli_forwards_optimize_and_mode_when_present(conv_model, monkeypatch, capsys):
    seen = {}
    real = sweep_mod.run_sweep

    def spy(*a, **kw):
        seen.update(kw)
        kw.pop("optimize", None), kw.pop("mode", None)
        return real(*a, **kw)

    monkeypatch.setattr(sweep_mod, "run_sweep", spy)
    from predictor.cli import _predict

    args = build_parser().parse_args([conv_model, "--gpu", "v100,h200", "-o", "/dev/null"])
    assert _predict(args) == 0 and "optimize" not in seen and "mode" not in seen   # parser without them
    args = build_parser().parse_args([conv_model, "--gpu", "v100,h200", "-o", "/dev/null"])
    args.optimize, args.mode = "fuse", "train"
    assert _predict(args) == 0 and seen["optimize"] == "fuse" and seen["mode"] == "train"
    assert seen["strict"] is False and seen["shapes"] == {}
    assert isinstance(args, argparse.Namespace)


def test_plot_writes_the_sweep_chart(conv_model, tmp_path, capsys):
    out = tmp_path / "s.png"
    assert main([conv_model, "--gpu", "v100,h200", "--precision", "fp16,fp8", "--batch", "1,4",
                 "--plot", str(out), "-o", str(tmp_path / "t.txt")]) == 0
    assert out.read_bytes().startswith(b"\x89PNG") and not (tmp_path / "s-time.png").exists()
    assert main([conv_model, "--gpu", "v100,h200", "--plot", str(tmp_path / "s.pdf")]) == 2
    assert "must end in .png or .svg" in capsys.readouterr().err


# ------------------------------------------------------------------------------------------ pure parts
def _ok(gpu, t, batch=1):
    return SweepRow(gpu, "fp16", batch, total_time_s=t, throughput_per_s=batch / t,
                    bound_mix={b: (1.0 if b == "HBM" else 0.0) for b in BOUNDS}, kernels=3)


def test_with_speedups_baseline_is_first_success():
    rows, base = with_speedups([failed_row("v100", "fp8", 1, "v100 has no fp8\n ceiling"), _ok("a", 2e-3),
                                _ok("b", 5e-4)])
    assert base == 1
    assert [r.speedup for r in rows] == [None, 1.0, 4.0]
    assert rows[0].error == "v100 has no fp8 ceiling" and rows[0].note == "n/a: v100 has no fp8 ceiling"
    assert with_speedups([failed_row("v100", "fp8", 1, "x")])[1] is None


def test_require_success_and_mix_text():
    s = sweep_mod.assemble("m.onnx", ["v100"], ["fp8"], [1, 2],
                           {(0, 0, 0): failed_row("v100", "fp8", 1, "e1"),
                            (0, 0, 1): failed_row("v100", "fp8", 2, "e1")})
    with pytest.raises(PredictorError, match="^e1$"):
        require_success(s)
    assert mix_text({"compute": 0.62, "L2": 0.05, "HBM": 0.3, "latency": 0.03}) == "62/0/5/30/3"
