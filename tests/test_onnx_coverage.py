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
