"""Property-based tests (hypothesis): random valid graphs load and cost without crashing, with non-negative
FLOPs and times; random --shape/--batch strings give a result or a one-line error; random mutations of a
valid ncu CSV parse or raise NcuParseError, never another exception."""
from __future__ import annotations

import contextlib
import io
import math
import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper

from predictor.measure.ncu.parse import NcuParseError, parse_csv
from predictor.calibrate import Uncalibrated
from predictor.cli import main
from predictor.fitted import bundled_calibration
from predictor.graph.loader import load_model_proto
from predictor.machine.profile import load_profile
from predictor.predict import predict_graph
from predictor.types import PredictorError
from tests.robustness.harness import ONE_LINE_ERROR
from tests.robustness.make_corpus import valid_ncu_csv, valid_ncu_details_csv

ROOT = Path(__file__).resolve().parents[2]
MODEL = str(ROOT / "examples" / "lstm.onnx")
_SCALE = int(os.environ.get("ROBUSTNESS_SCALE", "1"))  # ROBUSTNESS_SCALE=50: a longer local run
FAST = settings(max_examples=60 * _SCALE, deadline=2000, suppress_health_check=[HealthCheck.too_slow,
                                                                        HealthCheck.function_scoped_fixture])
_PROFILE = load_profile("h200")
_CALIBRATIONS = (Uncalibrated(), bundled_calibration(_PROFILE))


# ------------------------------------------------------------------------------------------ graphs
@st.composite
def graphs(draw):
    """A valid chain of elementwise / conv / matmul / pooling / softmax ops on an NCHW input, shapes tracked."""
    n, c, h, w = draw(st.integers(1, 4)), draw(st.integers(1, 8)), draw(st.integers(1, 12)), draw(st.integers(1, 12))
    symbolic = draw(st.booleans())
    shape = [n, c, h, w]
    nodes, inits = [], []
    cur = "x"
    for k in range(draw(st.integers(1, 6))):
        op = draw(st.sampled_from(["Relu", "Sigmoid", "Tanh", "Add", "Mul", "Conv", "MatMul", "MaxPool", "Softmax",
                                   "Gemm-ish", "ReduceMean"]))
        out = f"t{k}"
        if op in ("Relu", "Sigmoid", "Tanh"):
            nodes.append(helper.make_node(op, [cur], [out]))
        elif op in ("Add", "Mul"):
            bshape = draw(st.sampled_from([[1, shape[1], 1, 1], [shape[3]], shape, []]))
            if draw(st.booleans()):
                inits.append(numpy_helper.from_array(np.ones(bshape, np.float32), f"b{k}"))
                nodes.append(helper.make_node(op, [cur, f"b{k}"], [out]))
            else:
                nodes.append(helper.make_node(op, [cur, cur], [out]))
        elif op == "Conv":
            group = draw(st.sampled_from([g for g in (1, 2, shape[1]) if shape[1] % g == 0]))
            cout = group * draw(st.integers(1, 4))
            kh, kw = draw(st.integers(1, min(3, shape[2]))), draw(st.integers(1, min(3, shape[3])))
            stride, pad = draw(st.integers(1, 2)), draw(st.integers(0, 1))
            inits.append(numpy_helper.from_array(np.zeros((cout, shape[1] // group, kh, kw), np.float32), f"w{k}"))
            ins = [cur, f"w{k}"]
            if draw(st.booleans()):
                inits.append(numpy_helper.from_array(np.zeros((cout,), np.float32), f"bias{k}"))
                ins.append(f"bias{k}")
            nodes.append(helper.make_node("Conv", ins, [out], group=group, strides=[stride, stride],
                                          pads=[pad, pad, pad, pad], kernel_shape=[kh, kw]))
            shape = [shape[0], cout, (shape[2] + 2 * pad - kh) // stride + 1, (shape[3] + 2 * pad - kw) // stride + 1]
        elif op == "MatMul":
            kdim = draw(st.integers(1, 16))
            inits.append(numpy_helper.from_array(np.zeros((shape[3], kdim), np.float32), f"m{k}"))
            nodes.append(helper.make_node("MatMul", [cur, f"m{k}"], [out]))
            shape = shape[:3] + [kdim]
        elif op == "Gemm-ish":  # MatMul between two activations (attention-like)
            nodes.append(helper.make_node("Transpose", [cur], [f"{out}_t"], perm=[0, 1, 3, 2]))
            nodes.append(helper.make_node("MatMul", [cur, f"{out}_t"], [out]))
            shape = shape[:3] + [shape[2]]
        elif op == "MaxPool":
            kern = draw(st.integers(1, min(2, shape[2], shape[3])))
            nodes.append(helper.make_node("MaxPool", [cur], [out], kernel_shape=[kern, kern], strides=[kern, kern]))
            shape = shape[:2] + [shape[2] // kern, shape[3] // kern]
        elif op == "Softmax":
            nodes.append(helper.make_node("Softmax", [cur], [out], axis=-1))
        else:
            inits.append(helper.make_tensor(f"ax{k}", TensorProto.INT64, [1], [3]))
            nodes.append(helper.make_node("ReduceMean", [cur, f"ax{k}"], [out], keepdims=1))
            shape = shape[:3] + [1]
        cur = out
        assume(all(d >= 1 for d in shape))
    in_shape = ["N", c, h, w] if symbolic else [n, c, h, w]
    g = helper.make_graph(nodes, "prop", [helper.make_tensor_value_info("x", TensorProto.FLOAT, in_shape)],
                          [helper.make_tensor_value_info(cur, TensorProto.FLOAT, None)], initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
    return m, (n if symbolic else None), shape


@FAST
@given(graphs(), st.sampled_from(["fp32", "tf32", "fp16", "bf16"]))
def test_random_valid_graphs_load_and_cost(case, precision):
    model, batch, out_shape = case
    graph = load_model_proto(model, batch=batch)
    assert graph.outputs[0].shape == tuple(out_shape)
    for cal in _CALIBRATIONS:
        pred = predict_graph(graph, _PROFILE, precision, cal)
        assert not pred.unsupported
        for op in pred.ops:
            flops = sum(f.flops for f in op.cost.flops)
            assert flops >= 0 and math.isfinite(flops), op
            assert op.time_s >= 0 and math.isfinite(op.time_s), op
            assert all(v >= 0 for v in op.cost.bytes.values()), op


# ------------------------------------------------------------------------------------ --shape, --batch
_LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
_text = st.text(st.characters(blacklist_characters=_LINE_BREAKS, blacklist_categories=("Cs",)), max_size=30)
_dims = st.lists(st.one_of(st.integers(-3, 2**41).map(str), st.sampled_from(["", " 4", "1e3", "0x10", "٣", "-0",
                                                                               "1_0", "N", "99999999999999999999"])),
                 min_size=0, max_size=5).map(",".join)
_shape = st.one_of(_text, st.builds(lambda n, d: f"{n}={d}", st.sampled_from(["input", "Input", "", "x", "input "]),
                                    _dims), st.builds(lambda d: f"input={d}", _dims))
_batch = st.one_of(st.none(), st.integers(-2, 2**32).map(str), _text)


def _cli(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(argv)
    return rc, out.getvalue(), err.getvalue()


@FAST
@given(st.lists(_shape, max_size=3), _batch)
def test_shape_and_batch_strings(tmp_path, shapes, batch):
    out = tmp_path / "r.json"
    out.unlink(missing_ok=True)
    argv = [MODEL, "--gpu", "h200", "--format", "json", "-o", str(out)] + [f"--shape={s}" for s in shapes]
    if batch is not None:
        argv.append(f"--batch={batch}")
    rc, stdout, stderr = _cli(argv)
    assert rc in (0, 2), (rc, stderr)
    if rc == 2:
        assert ONE_LINE_ERROR.match(stderr), stderr
        assert not out.exists()
    else:
        assert stderr == "" and out.is_file()


@pytest.mark.parametrize("argv", [["--gpu", "h2\n00"], ["--gpu", "h200", "--shape=in\nput=1,64,256"]])
def test_error_with_line_break_is_one_line(argv):
    rc, _, stderr = _cli([MODEL] + argv)
    assert rc == 2 and ONE_LINE_ERROR.match(stderr), stderr


# ------------------------------------------------------------------------------------------ ncu CSV
_SEEDS = [valid_ncu_csv(), valid_ncu_details_csv()]


@st.composite
def mutated_csv(draw):
    text = draw(st.sampled_from(_SEEDS))
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(["delete", "insert", "replace", "dup_line", "drop_line", "swap_cells", "cut"]))
        pos = draw(st.integers(0, max(0, len(text) - 1)))
        if kind == "delete":
            text = text[:pos] + text[pos + draw(st.integers(1, 20)):]
        elif kind == "insert":
            text = text[:pos] + draw(st.text(st.sampled_from('",\n\r\\x0az9.-e %/()\x00\ufeff'), max_size=8)) + text[pos:]
        elif kind == "replace":
            text = text[:pos] + draw(st.sampled_from(["n/a", "inf", "-1", "1e999", "nan", "1,2", '"', "", "ID", "9.0",
                                                      "usecond", "Kbyte", "%", "x" * 200])) + text[pos + 1:]
        elif kind in ("dup_line", "drop_line", "swap_cells"):
            lines = text.split("\n")
            k = draw(st.integers(0, max(0, len(lines) - 1)))
            if kind == "dup_line":
                lines.insert(k, lines[k])
            elif kind == "drop_line":
                del lines[k]
            else:
                cells = lines[k].split(",")
                draw(st.randoms(use_true_random=False)).shuffle(cells)
                lines[k] = ",".join(cells)
            text = "\n".join(lines)
        else:
            text = text[:pos]
    return text


@settings(max_examples=100 * _SCALE, deadline=1000)
@given(mutated_csv(), st.sampled_from([None, "hopper", "ampere", "volta"]))
def test_ncu_parser_mutations(text, arch):
    try:
        samples = parse_csv(text, arch=arch)
    except NcuParseError as e:
        assert "\n" not in str(e)
        return
    for s in samples:  # what the reader hands out is a measurement: finite and not negative
        assert isinstance(s.time_s, float) and math.isfinite(s.time_s) and s.time_s >= 0, s.time_s
        for v in (*s.bytes.values(), *s.flops.values()):
            assert v is None or (math.isfinite(v) and v >= 0), v
