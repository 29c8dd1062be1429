"""calibration/training/rnn_steps.py (grid, CSV round trip, a CPU dry run where torch is installed) and
calibration/evaluate/rnn_training_accuracy.py (the exported-like LSTM/GRU graphs, errors against a CSV)."""
import math

import pytest

from calibration.evaluate import rnn_training_accuracy as acc
from calibration.training import rnn_steps
from predictor.graph.loader import load_model_proto
from predictor.machine.profile import load_profile


def test_default_grid_covers_cells_layers_directions_precisions():
    grid = list(rnn_steps.cases(rnn_steps.DEFAULTS))
    assert len(grid) == 2 * 2 * 2 * 2 * 3 * 2 * 2 * 1
    assert {(c.cell, c.layers, c.directions, c.precision) for c in grid} == {
        (cell, layers, d, p) for cell in ("lstm", "gru") for layers in (1, 2) for d in (1, 2) for p in ("fp32", "fp16")}


def test_csv_round_trip(tmp_path):
    row = rnn_steps.Row("lstm", 2, 2, "fp16", 8, 3, 2, 4, params=1234, eager_step_s=0.5, n_replays=3)
    path = tmp_path / "r.csv"
    rnn_steps.write_csv([row], str(path))
    (back,) = rnn_steps.read_csv(str(path))
    assert back["cell"] == "lstm" and back["layers"] == 2 and back["params"] == 1234
    assert back["eager_step_s"] == 0.5 and math.isnan(back["graph_step_s"])


def test_unknown_cell_is_an_error(tmp_path, capsys):
    assert rnn_steps.main(["--out", str(tmp_path / "x.csv"), "--device", "cpu", "--cells", "rnn"]) == 2
    assert "unknown cell or precision: rnn" in capsys.readouterr().err


def test_cpu_dry_run(tmp_path):
    pytest.importorskip("torch")
    from calibration.networks import gpu_common

    out = tmp_path / "r.csv"
    try:
        assert rnn_steps.main(["--out", str(out), "--device", "cpu", "--quick", "--cells", "gru", "--layers", "1",
                               "--directions", "2", "--precisions", "fp32", "--replays", "3"]) == 0
    finally:
        gpu_common.use_device("cuda")
    (row,) = rnn_steps.read_csv(str(out))
    assert row["error"] == "" and row["graph_step_s"] > 0 and row["eager_step_s"] > 0
    assert row["params"] == 2 * 3 * 8 * (4 + 8 + 2)    # per direction: W (3H x I), R (3H x H), two biases (3H)


def test_built_graph_is_what_the_exporter_writes():
    """2-layer bidirectional LSTM, H 16 over x[5, 3, 8]: LSTM nodes with W [2, 64, I], Transpose + Reshape
    to [5, 3, 32] between them; the second layer reads 32 features."""
    g = load_model_proto(acc.build_rnn("lstm", 2, 2, 16, 5, 3, 8))
    lstms = [n for n in g.nodes if n.op_type == "LSTM"]
    assert [n.inputs[1].shape for n in lstms] == [(2, 64, 8), (2, 64, 32)]
    assert g.outputs[0].shape == (5, 3, 32)
    gru = load_model_proto(acc.build_rnn("gru", 1, 1, 16, 5, 3, 8))
    (node,) = [n for n in gru.nodes if n.op_type == "GRU"]
    assert node.attrs["linear_before_reset"] == 1 and gru.outputs[0].shape == (5, 3, 16)


def test_compare_scores_the_step_against_the_graph_time():
    """A row measured at twice the predicted forward + backward time scores -50%; an errored row is skipped."""
    prof = load_profile("h200")
    base = dict(cell="gru", layers=1, directions=1, precision="fp32", hidden=32, seq=4, batch=2, input=16)
    tp = acc.predict_row(base, prof, None)
    assert not tp.unsupported and tp.phase("backward").kernels > 0
    step = tp.phase("forward").time_s + tp.phase("backward").time_s
    nan = math.nan
    rows = [{**base, "error": "", "graph_step_s": 2 * step, "graph_forward_s": nan, "graph_backward_s": nan,
             "eager_step_s": 3 * step, "eager_forward_s": nan, "eager_backward_s": nan},
            {**base, "error": "OutOfMemoryError: x", "graph_step_s": nan}]
    res = acc.compare(rows, prof, None)
    assert res[0]["reference"] == "graph" and abs(res[0]["step_error"] + 0.5) < 1e-12
    assert math.isnan(res[0]["forward_error"]) and res[1] == {**base, "skipped": "OutOfMemoryError: x"}
    s = acc.summarise(res)
    assert (s["scored"], s["skipped"], s["step_mape_pct"]) == (1, 1, 50.0)
    assert "| gru | 1 | 1 | fp32 |" in acc.markdown({"provenance": {"csv": "c", "command": "x"}, "summary": s,
                                                      "rows": res})
