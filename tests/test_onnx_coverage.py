"""benchmarks/onnx_coverage.py: each model is counted as costed, named (what it could not cost) or refused."""
import importlib.util
import sys
from pathlib import Path

import onnx
from onnx import TensorProto, helper

from predictor.calibrate import Uncalibrated
from predictor.machine.profile import load_profile

ROOT = Path(__file__).resolve().parents[1]


def _module():
    spec = importlib.util.spec_from_file_location("onnx_coverage", ROOT / "benchmarks" / "onnx_coverage.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("onnx_coverage", mod)
    spec.loader.exec_module(mod)
    return mod


def _model(op, in_shape):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, in_shape)
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    return helper.make_model(helper.make_graph([helper.make_node(op, ["x"], ["y"])], "g", [x], [y]),
                             opset_imports=[helper.make_opsetid("", 17)])


def test_classify_costed_named_refused(tmp_path):
    cov = _module()
    prof, cal = load_profile("h200"), Uncalibrated()
    assert cov.classify(_model("Relu", [2, 3]), prof, cal) == ("costed", "", {})
    status, _, uncosted = cov.classify(_model("StringNormalizer", [2, 3]), prof, cal)
    assert status == "named" and uncosted == {"StringNormalizer": 1}
    path = tmp_path / "m.onnx"
    onnx.save(_model("Relu", [2, "n"]), str(path))       # a symbolic non-batch dim: refused with the reason
    status, reason, _ = cov.classify(str(path), prof, cal)
    assert status == "refused" and "unbound symbolic dimension 'n'" in reason
    assert cov._reason_key("input 'x' has no shape; bind it with --shape x=D1") == "input '…' has no shape"


def test_named_with_mostly_unknown_shapes_is_marked_for_the_cli():
    """Slice with its sizes as graph inputs and no declared output shape: named, and the command line prints
    it only with --allow-partial."""
    cov = _module()
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])
    ends = helper.make_tensor_value_info("e", TensorProto.INT64, [1])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    m = helper.make_model(helper.make_graph([helper.make_node("Slice", ["x", "e", "e"], ["y"])], "g", [x, ends], [y]),
                          opset_imports=[helper.make_opsetid("", 17)])
    assert cov.classify(m, load_profile("h200"), Uncalibrated()) == ("named", "cli: --allow-partial",
                                                                       {"Slice (unknown shape)": 1})


def test_markdown_summary_lists_outcomes_and_uncosted_ops():
    cov = _module()
    doc = {"provenance": {"onnx": "1.0", "command": "c", "date_utc": "d", "gpu": "h200", "precision": "fp32",
                          "calibration": "x"},
           "counts": {"total": 3, "costed": 1, "named": 2, "refused": 0, "crashed": 0, "cli_needs_allow_partial": 1},
           "by_source": {"node": {"costed": 1, "named": 2}}, "uncosted_op_types": {"Unique": 2},
           "uncosted_op_counts": {"Unique": 3}, "refusal_reasons": {}, "crashes": {}}
    md = cov.markdown(doc)
    assert "| node | 1 | 2 | 0 | 0 |" in md and "| Unique | 2 | 3 |" in md and "**0 refused**" in md
