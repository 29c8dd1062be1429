"""graph/upgrade.py: a model older than opset 7 is converted on load (and says so), never refused."""
import numpy as np
import pytest
from onnx import helper

from predictor.graph import upgrade
from predictor.graph.cost import cost_graph
from predictor.graph.loader import load_model_proto
from predictor.graph.traffic import HierarchicalTraffic
from predictor.precision import policy
from tests.helpers import make_model


def _opset6_gemm_relu():
    # Gemm 4x8 @ 8x16 (+ bias) then Relu, as an old exporter wrote it (opset 6)
    nodes = [helper.make_node("Gemm", ["x", "w", "b"], ["y"], transB=1),
             helper.make_node("Relu", ["y"], ["z"])]
    return make_model(nodes, [("x", "float32", [4, 8]), ("w", "float32", [16, 8]), ("b", "float32", [16])],
                      [("z", "float32", [4, 16])],
                      initializers={"w": np.zeros((16, 8), np.float32), "b": np.zeros(16, np.float32)}, opset=6)


def test_needs_upgrade_only_below_the_supported_opset():
    assert upgrade.needs_upgrade(6) and upgrade.needs_upgrade(1)
    assert not upgrade.needs_upgrade(7) and not upgrade.needs_upgrade(17) and not upgrade.needs_upgrade(0)


def test_opset6_model_is_upgraded_and_costed():
    g = load_model_proto(_opset6_gemm_relu())
    assert g.opset == upgrade.TARGET_OPSET
    assert g.notes == ("upgraded from default-domain opset 6 to 13 on load (onnx.version_converter)",)
    gc = cost_graph(g.nodes, policy("fp32"), g.opset, HierarchicalTraffic(50e6, "hopper"), frozenset(["x"]))
    assert not gc.not_costed
    by_type = {c.op_type: c for c in gc.costs}
    assert by_type["Gemm"].total_flops == 2 * 4 * 8 * 16 + 4 * 16   # 1024 FMA FLOPs + 64 bias adds = 1088
    assert by_type["Relu"].total_flops == 4 * 16                    # one max per element = 64


def test_supported_opset_is_not_touched():
    m = _opset6_gemm_relu()
    m.opset_import[0].version = 13
    g = load_model_proto(m)
    assert g.notes == () and g.opset == 13


def test_failed_conversion_is_one_line_error(monkeypatch):
    from onnx import version_converter

    from predictor.types import PredictorError

    def boom(model, target):
        raise RuntimeError("adapter missing\nfor op X")

    monkeypatch.setattr(version_converter, "convert_version", boom)
    with pytest.raises(PredictorError, match="could not upgrade it to 13: adapter missing for op X"):
        load_model_proto(_opset6_gemm_relu())


def test_cli_prints_the_upgrade_note(tmp_path, capsys):
    import onnx

    from predictor.cli import main

    path = tmp_path / "old.onnx"
    onnx.save(_opset6_gemm_relu(), str(path))
    assert main([str(path), "--gpu", "h200"]) == 0
    out = capsys.readouterr().out
    assert "note: upgraded from default-domain opset 6 to 13" in out and "unsupported ops none" in out
