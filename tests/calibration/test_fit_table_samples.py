"""calibration/fit/table_samples.py: the training networks' broadcasting kernels as kernel-level fit samples."""
import pytest

from calibration.fit import table_samples as ts
from predictor.graph.opclass import kernel_class
from predictor.machine.profile import load_profile


def test_broadcast_node_is_the_aten_op_on_the_recorded_shapes():
    node = ts.broadcast_node("aten::mul", (32, 128, 1024), (32, 128, 1))
    assert node.op_type == "Mul" and node.outputs[0].shape == (32, 128, 1024)
    assert [t.shape for t in node.inputs] == [(32, 128, 1024), (32, 128, 1)]
    assert kernel_class(node) == "elementwise_broadcast"
    with pytest.raises(ValueError, match="do not broadcast"):
        ts.broadcast_node("aten::add", (3, 4), (5, 4))


def _row(network, op, a, b, duration_s, precision="fp16", batch=32):
    return {"network": network, "precision": precision, "batch": batch, "op": op, "shapes": (a, b),
            "duration_s": duration_s}


def test_one_sample_per_case_op_and_shapes(monkeypatch):
    rows = [_row("net", "aten::mul", (32, 128, 1024), (32, 128, 1), d) for d in (10e-6, 30e-6, 20e-6)]
    rows += [_row("net", "aten::add", (32, 64, 56, 56), (1, 64, 1, 1), 40e-6),
             _row("other", "aten::add", (32, 64, 56, 56), (1, 64, 1, 1), 50e-6),  # not a training case
             _row("net", "aten::where", (32, 64), (1, 64), 5e-6)]  # not an arithmetic op
    monkeypatch.setattr(ts, "kernel_rows", lambda gpu, min_elements: rows)
    out = ts.table_samples({("net", "fp16", 32)}, load_profile("h200"))
    got = sorted((node.op_type, median, total) for key, node, cost, median, total in out)
    assert got == [("Add", 40e-6, 40e-6), ("Mul", 20e-6, pytest.approx(60e-6))]
    assert all(key == ("net", "fp16", 32) and cost.kernels == 1 for key, node, cost, _, _ in out)


def test_prepare_fit_ties_each_table_sample_to_its_case():
    import numpy as np

    from calibration.fit.dataset import load_cases, load_kernels
    from calibration.fit.fit import prepare_fit

    case = [c for c in load_cases() if c.key == ("detr_r50", "tf32", 32)]
    kernels = load_kernels()
    data = prepare_fit(case, kernels, load_profile("h200"), micro_families=(), log=lambda *_: None, table=True)
    # DETR's frozen batch norms: x * scale + bias on [N, C, H, W] by [1, C, 1, 1], one sample per op and shape
    assert data.table.sum() == 24 and (data.sample_case[data.table] == 0).all()
    broadcast = {g for (cls, _), g in data.groups.items() if cls == "elementwise_broadcast"}
    rows = np.isin(data.rows.sample, np.flatnonzero(data.table))
    assert set(data.rows.group[rows]) <= broadcast and (data.rows.case[rows] == -1).all()
    gap = data.gap_s
    assert (data.measured[data.table] > gap).all()
    without = prepare_fit(case, kernels, load_profile("h200"), micro_families=(), log=lambda *_: None)
    assert not without.table.any() and len(without.measured) == len(data.measured) - 24
