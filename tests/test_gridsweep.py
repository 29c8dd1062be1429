"""predict sweep GRID.yaml: grid files, one row per setting, workers, Dask, resuming, Parquet."""
import csv
import json

import pytest

from predictor.cli import main
from predictor.gridsweep import COLUMNS, Grid, read_grid, run_grid, tasks_of
from predictor.predict import predict_file
from predictor.fitted import bundled_calibration
from predictor.machine.profile import load_profile
from predictor.types import PredictorError


def _grid(tmp_path, conv_model, **extra) -> str:
    doc = {"models": [conv_model], "gpus": ["v100", "H200"], "precisions": ["fp16", "fp8"], "batches": [1, 4]}
    doc.update(extra)
    path = tmp_path / "grid.yaml"
    path.write_text("\n".join(f"{k}: {json.dumps(v)}" for k, v in doc.items()) + "\n")   # JSON lists are YAML
    return str(path)


def _rows(path) -> list[dict]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_read_grid_and_errors(tmp_path, conv_model):
    g = read_grid(_grid(tmp_path, conv_model))
    assert g.gpus == ("v100", "h200") and g.precisions == ("fp16", "fp8") and g.batches == (1, 4)
    assert g.size == 1 * 2 * 2 * 2 * 1 == len(g.settings())
    for bad, msg in (({"gpus": ["nope"]}, "nope"), ({"batches": [0]}, "whole numbers"),
                     ({"precisions": ["fp7"]}, "fp7"), ({"models": ["missing.onnx"]}, "not found"),
                     ({"colour": "red"}, "unknown key"), ({"gpu_counts": [2]}, "multi-GPU"),
                     ({"mode": "fly"}, "mode must be")):
        with pytest.raises(PredictorError, match=msg):
            read_grid(_grid(tmp_path, conv_model, **bad))
    j = tmp_path / "grid.json"
    j.write_text(json.dumps({"models": [conv_model], "gpus": ["h200"]}))
    assert read_grid(str(j)).batches == (1,)
    j.write_text("{not json")
    with pytest.raises(PredictorError, match="not valid JSON"):
        read_grid(str(j))


def test_rows_match_single_predictions_and_resume(tmp_path, conv_model, capsys):
    grid = _grid(tmp_path, conv_model)
    out = tmp_path / "r.csv"
    assert main(["sweep", grid, "--out", str(out)]) == 0
    assert "8 settings, 0 already in" in capsys.readouterr().out
    rows = _rows(out)
    assert tuple(rows[0]) == COLUMNS and len(rows) == 8
    by = {(r["gpu"], r["precision"], r["batch"]): r for r in rows}
    assert by[("v100", "fp8", "1")]["error"].startswith("v100 has no fp8")     # n/a, as in a comma-list sweep
    h200 = load_profile("h200")
    want = predict_file(conv_model, h200, precision="fp16", batch=4, calibration=bundled_calibration(h200))
    assert float(by[("h200", "fp16", "4")]["total_time_s"]) == pytest.approx(want.total_time_s, rel=1e-5)
    # resuming: nothing left to do; after dropping rows, exactly those are predicted again
    assert main(["sweep", grid, "--out", str(out)]) == 0
    assert "8 already in" in capsys.readouterr().out and len(_rows(out)) == 8
    keep = rows[:3]
    with open(out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS, lineterminator="\n")
        w.writeheader()
        w.writerows(keep)
    assert main(["sweep", grid, "--out", str(out), "--quiet"]) == 0
    assert "3 already in" in capsys.readouterr().out
    again = _rows(out)
    assert len(again) == 8 and {(r["gpu"], r["precision"], r["batch"]) for r in again} == set(by)


def test_tasks_group_gpus_by_what_is_left(tmp_path, conv_model):
    g = read_grid(_grid(tmp_path, conv_model))
    assert [(t.batch, t.gpus, t.precisions) for t in tasks_of(g, set())] == [
        (1, ("v100", "h200"), ("fp16", "fp8")), (4, ("v100", "h200"), ("fp16", "fp8"))]
    done = {(conv_model, "v100", "fp16", "1", "1")}
    assert [(t.batch, t.gpus, t.precisions) for t in tasks_of(g, done)][:2] == [
        (1, ("v100",), ("fp8",)), (1, ("h200",), ("fp16", "fp8"))]


def test_workers_give_the_same_rows(tmp_path, conv_model):
    g = read_grid(_grid(tmp_path, conv_model))
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    ra = run_grid(g, str(a), workers=1)
    rb = run_grid(g, str(b), workers=2)
    assert ra.predicted == rb.predicted == 8 and ra.failed == rb.failed == 2     # fp8 on the V100 at batch 1 and 4
    key = lambda r: (r["gpu"], r["precision"], r["batch"])  # noqa: E731
    assert sorted(_rows(a), key=key) == sorted(_rows(b), key=key)


def test_output_that_is_not_a_grid_result_is_refused(tmp_path, conv_model, capsys):
    other = tmp_path / "other.csv"
    other.write_text("a,b\n1,2\n")
    assert main(["sweep", _grid(tmp_path, conv_model), "--out", str(other)]) == 2
    assert "not a grid-sweep result" in capsys.readouterr().err
    assert other.read_text() == "a,b\n1,2\n"                           # never overwritten
    assert main(["sweep", _grid(tmp_path, conv_model), "--out", str(tmp_path / "grid.yaml")]) == 2
    assert main(["sweep", _grid(tmp_path, conv_model), "--out", conv_model]) == 2      # never an input file
    assert "must end in .csv or .parquet" in capsys.readouterr().err


def test_parquet(tmp_path, conv_model):
    pq = pytest.importorskip("pyarrow.parquet")
    g = read_grid(_grid(tmp_path, conv_model))
    out = tmp_path / "r.parquet"
    assert run_grid(g, str(out)).predicted == 8
    assert pq.read_table(out).num_rows == 8
    assert run_grid(g, str(out)).predicted == 0 and pq.read_table(out).num_rows == 8


def test_dask_local_cluster(tmp_path, conv_model):
    distributed = pytest.importorskip("dask.distributed")
    g = read_grid(_grid(tmp_path, conv_model))
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None) as cl:
        r = run_grid(g, str(tmp_path / "d.csv"), dask=cl.scheduler_address)
    assert r.predicted == 8 and r.executor.startswith("dask") and len(_rows(tmp_path / "d.csv")) == 8


def test_grid_type_is_plain_data():
    g = Grid(("m",), ("/m",), ("h200",), ("fp32",), (1,))
    assert g.size == 1 and g.settings() == [("m", "h200", "fp32", 1, 1)]


def test_a_model_that_cannot_be_loaded_stops_the_sweep(tmp_path, conv_model, capsys):
    bad = tmp_path / "corrupt.onnx"
    bad.write_bytes(b"not a model")
    grid = _grid(tmp_path, conv_model, models=[conv_model, str(bad)])
    out = tmp_path / "r.csv"
    assert main(["sweep", grid, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "corrupt.onnx is not a valid ONNX model" in err and err.count("\n") == 1
    rows = _rows(out)
    assert len(rows) == 8 and {r["model"] for r in rows} == {conv_model}    # the good model's rows stay: resumable
