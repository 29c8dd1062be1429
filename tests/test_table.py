"""predict's table: the per-op-class block, the detailed per-op rows, --top all, memory against the datasheet."""
import pytest

import predictor
from predictor.cli import main
from predictor.machine.profile import load_profile
from predictor.opinfo import op_info, shape_text
from predictor.table import class_rows, intensity, op_line
from predictor.types import MemLevel, Node, TensorInfo


def test_class_rows(conv_model):
    r = predictor.predict(conv_model, gpu="h200", batch=2).raw
    rows = {c.op_class: c for c in class_rows(r)}
    assert set(rows) == {"conv", "elementwise"}
    # Conv: 2 * (2*8*16*16) * (3*3*3) = 221184 FLOPs; Relu: one per output element, 2*8*16*16 = 4096
    assert rows["conv"].flops == 221184 and rows["elementwise"].flops == 4096
    assert rows["conv"].ops == rows["elementwise"].ops == 1 and rows["conv"].kernels == 1
    conv_op = next(o for o in r.ops if o.cost.op_type == "Conv")
    assert rows["conv"].time_s == conv_op.time_s and rows["conv"].hbm_bytes == conv_op.cost.bytes[MemLevel.HBM]
    assert sum(c.share for c in rows.values()) == pytest.approx(1.0)
    assert [c.op_class for c in class_rows(r)] == sorted(rows, key=lambda k: -rows[k].time_s)


def test_op_info_and_line(conv_model):
    r = predictor.predict(conv_model, gpu="h200", batch=2).raw
    conv = next(o for o in r.ops if o.cost.op_type == "Conv")
    info = r.op_info["/conv/Conv"]
    assert info.output_shape == (2, 8, 16, 16) and info.params == 216          # weight 8 x 3 x 3 x 3
    assert r.op_info["/relu/Relu"].params == 0
    line = op_line(conv, r, r.total_time_s)
    assert "2x8x16x16" in line and " 216 " in line and line.rstrip().endswith(conv.bound.value)
    assert f"{conv.efficiency:.0%}" in line
    assert intensity(conv, MemLevel.HBM) == 221184 / conv.cost.bytes[MemLevel.HBM]


def test_op_info_counts_float_initializers_only():
    w = TensorInfo("w", "float16", (4, 3), is_initializer=True)
    axes = TensorInfo("axes", "int64", (2,), is_initializer=True)
    x = TensorInfo("x", "float16", (8, 3))
    n = Node("n", "MatMul", "", (x, w, axes), (TensorInfo("y", "float16", (8, 4)),))
    assert op_info(n).params == 12 and op_info(n).output_shape == (8, 4)     # 4 x 3; the int64 axes are no weight
    assert shape_text(None) == "-" and shape_text(()) == "[]" and shape_text((2, 3)) == "2x3"


def test_table_blocks_and_top_all(conv_model, capsys):
    assert main([conv_model, "--gpu", "h200", "--batch", "2", "--top", "1"]) == 0
    out = capsys.readouterr().out
    assert "op class" in out and "AI HBM" in out and "%ceil" in out
    assert "(1 more ops: --top all lists them)" in out
    assert main([conv_model, "--gpu", "h200", "--batch", "2", "--top", "all"]) == 0
    out = capsys.readouterr().out
    assert "/conv/Conv" in out and "/relu/Relu" in out and "more ops" not in out
    assert main([conv_model, "--gpu", "h200", "--top", "none"]) == 2
    assert "'none' is not a whole number" in capsys.readouterr().err


def test_training_memory_names_the_datasheet_capacity(conv_model, capsys):
    assert main([conv_model, "--gpu", "h200", "--batch", "2", "--mode", "train"]) == 0
    out = capsys.readouterr().out
    # the H200's datasheet 141 GB (hbm_bytes 141e9); usable: nvidia-smi's 143771 MiB = 140.4 GiB less 1 GiB
    assert "in the 141 GB of the h200 (usable 139.4 GiB: 140.4 GiB addressable" in out
    assert "op class" in out
    assert load_profile("h200").hbm_bytes == 141e9


def test_json_gains_the_table_keys(conv_model, capsys):
    import json

    assert main([conv_model, "--gpu", "h200", "--batch", "2", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    conv = next(o for o in doc["ops"] if o["op_type"] == "Conv")
    assert conv["op_class"] == "conv" and conv["output_shape"] == [2, 8, 16, 16] and conv["params"] == 216
    assert conv["intensity"]["HBM"] == 221184 / conv["bytes"]["HBM"]          # FLOPs / HBM bytes
    assert set(conv) >= {"name", "op_type", "flops", "bytes", "time_s", "bound", "efficiency"}   # the keys it had
    assert doc["classes"]["conv"]["flops"] == 221184 and doc["classes"]["elementwise"]["ops"] == 1
