"""Tests of the ONNX export driver: argument parsing, manifest, stripping (onnx only), planning."""
import io
import json

import pytest

from calibration.networks import export, zoo


def test_parse_args_defaults(tmp_path):
    opts, _ = export.parse_args(["--out", str(tmp_path)])
    assert opts.exporters == ("torchscript",)
    assert opts.names == tuple(zoo.names())
    assert opts.opset_torchscript == 17 and opts.opset_dynamo >= 18
    assert opts.ort_check


def test_parse_args_lists(tmp_path):
    opts, _ = export.parse_args(["--out", str(tmp_path), "--names", "resnet50,gpt2",
                                 "--exporters", "torchscript,dynamo", "--dynamo-names", "all", "--no-ort-check"])
    assert opts.names == ("resnet50", "gpt2") and opts.dynamo_names == ()
    assert not opts.ort_check
    assert export.plan(opts) == [("resnet50", "torchscript"), ("gpt2", "torchscript"),
                                 ("resnet50", "dynamo"), ("gpt2", "dynamo")]


def test_parse_args_rejects_unknown(tmp_path):
    with pytest.raises(SystemExit):
        export.parse_args(["--out", str(tmp_path), "--exporters", "tflite"])
    with pytest.raises(SystemExit):
        export.parse_args(["--out", str(tmp_path), "--names", "nope"])


def test_plan_dynamo_subset(tmp_path):
    opts, _ = export.parse_args(["--out", str(tmp_path), "--exporters", "torchscript,dynamo"])
    dyn = [n for n, e in export.plan(opts) if e == "dynamo"]
    assert dyn == [n for n in zoo.names() if n in export.DEFAULT_DYNAMO_NAMES]
    assert set(export.DEFAULT_DYNAMO_NAMES) <= set(zoo.names())


def test_manifest_roundtrip(tmp_path):
    rec = export.ExportRecord(network="resnet18", exporter="torchscript", opset=17, n_nodes=65,
                              checks={"ort_b1": {"rel_diff": 1e-7, "ok": True}, "stripped": {"ok": True}})
    from dataclasses import asdict

    path = export.write_manifest(tmp_path, [asdict(rec)], {"command": "x"})
    doc = export.read_manifest(tmp_path)
    assert path.name == export.MANIFEST and doc["meta"]["command"] == "x"
    assert doc["files"][0]["network"] == "resnet18" and doc["files"][0]["checks"]["ort_b1"]["ok"]
    table = export.summary_table(doc["files"])
    assert "resnet18" in table and "ok:1e-07" in table and "1/1 exported" in table


def test_versions_never_raise():
    v = export.versions()
    assert "python" in v and "torch" in v


def _tiny_model():
    onnx = pytest.importorskip("onnx")
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    w = numpy_helper.from_array(np.random.rand(16, 32).astype(np.float32), "W")        # 2 KB: external
    b = numpy_helper.from_array(np.random.rand(16).astype(np.float32), "B")            # 64 B: stays inside
    x = helper.make_tensor_value_info("input", TensorProto.FLOAT, ["batch", 32])
    y = helper.make_tensor_value_info("output", TensorProto.FLOAT, ["batch", 16])
    node = helper.make_node("Gemm", ["input", "W", "B"], ["output"], transB=1)
    graph = helper.make_graph([node], "g", [x], [y], initializer=[w, b])
    return onnx, helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_strip_and_check(tmp_path):
    onnx, model = _tiny_model()
    path = tmp_path / "tiny.torchscript.onnx"
    info = export.strip_and_save(model, path)
    assert not (tmp_path / "tiny.torchscript.onnx.data").exists()
    assert info["stripped_data_bytes"] >= 2048 and info["file_bytes"] == path.stat().st_size
    m = onnx.load(str(path), load_external_data=False)
    inits = {t.name: t for t in m.graph.initializer}
    assert inits["W"].data_location == onnx.TensorProto.EXTERNAL and list(inits["W"].dims) == [16, 32]
    assert inits["B"].data_location != onnx.TensorProto.EXTERNAL and len(inits["B"].raw_data) == 64
    res = export.check_stripped(path)
    assert res["ok"] and res["load"] and res["infer_shapes"]


def test_describe_symbolic_shapes():
    _, model = _tiny_model()
    rec = export.ExportRecord(network="tiny", exporter="torchscript")
    export._describe(model, rec)
    assert rec.input_shapes == [["batch", 32]] and rec.output_shapes == [["batch", 16]]
    assert rec.opset == 17 and rec.n_nodes == 1 and rec.op_types == {"Gemm": 1}


def test_max_diff():
    np = pytest.importorskip("numpy")
    r = export._max_diff(np.ones((2, 3)), np.ones((2, 3)) * 1.001)
    assert r["rel_diff"] == pytest.approx(1e-3, rel=1e-6) and r["finite"]
    assert "error" in export._max_diff(np.ones((2, 3)), np.ones((1, 3)))


def test_export_end_to_end_with_torch(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("onnxruntime")
    pytest.importorskip("onnxscript")
    opts, _ = export.parse_args(["--out", str(tmp_path), "--names", "gru"])
    recs = export.run(opts)
    assert recs[0]["error"] == "", recs[0]["error"]
    assert recs[0]["checks"]["ort_b1"]["ok"] and recs[0]["checks"]["ort_b2"]["ok"]
    assert recs[0]["input_shapes"][0][0] == "batch"
    assert (tmp_path / "gru.torchscript.onnx").exists()
    assert not list(tmp_path.glob("*.data"))
    assert json.loads((tmp_path / export.MANIFEST).read_text())["files"][0]["network"] == "gru"


def test_train_mode_option(tmp_path):
    """--train-mode exports train() modules (Dropout kept) to NAME.EXPORTER_train.onnx."""
    opts, _ = export.parse_args(["--out", str(tmp_path), "--names", "gpt2", "--train-mode"])
    assert opts.train_mode and not export.parse_args(["--out", str(tmp_path)])[0].train_mode


def _export_and_run(module, x):
    """Export ``module`` as _export_proto does (TorchScript, opset 17, symbolic fixes on, dynamic batch) and run the
    graph with ONNX's reference evaluator."""
    import torch
    from onnx import load_from_string
    from onnx.reference import ReferenceEvaluator

    buf = io.BytesIO()
    with export._torchscript_symbolic_fixes(17):
        torch.onnx.export(module, (x,), buf, dynamo=False, opset_version=17, input_names=["x"], output_names=["y"],
                          dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})
    return ReferenceEvaluator(load_from_string(buf.getvalue())).run(None, {"x": x.numpy()})[0]


def test_symbolic_fixes_export_negative_dims_as_torch_runs_them():
    """x.unfold(-2, ...) (PatchTST's patching) and a repeat_interleave(dim=-2) followed by a transpose(-1, -2)
    that shares its -2 (CANINE's molecule upsampling, then its final encoder's keys): the exporter's own symbolics
    wrote windows along the wrong axis ((2, 3, 4, 4) here) and a transpose(-1, 1) ((2, 3, 8, 1))."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("onnx")
    np = pytest.importorskip("numpy")

    class Unfold(torch.nn.Module):
        def forward(self, x):
            return x.unfold(-2, 4, 2)

    class RepeatThenTranspose(torch.nn.Module):
        def forward(self, x):
            return x.repeat_interleave(2, dim=-2).unsqueeze(1).transpose(-1, -2)

    for module, x, shape in [(Unfold(), torch.randn(2, 10, 3), (2, 4, 3, 4)),
                             (RepeatThenTranspose(), torch.randn(2, 4, 3), (2, 1, 3, 8))]:
        got = _export_and_run(module, x)
        want = module(x).numpy()
        assert want.shape == shape and got.shape == shape, type(module).__name__
        assert np.array_equal(got, want)


def test_expm1_exports_as_exp_minus_one():
    """aten::expm1 (Apertus' xIELU) has no TorchScript symbolic: Exp(x) - 1, in the input's dtype."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("onnx")
    np = pytest.importorskip("numpy")

    class Expm1(torch.nn.Module):
        def forward(self, x):
            return torch.expm1(torch.clamp(x, max=0.0))

    x = torch.linspace(-4.0, 1.0, 12).reshape(2, 6)
    got = _export_and_run(Expm1(), x)
    assert got.dtype == np.float32 and np.allclose(got, Expm1()(x).numpy(), atol=1e-6)


def test_rms_norm_exports_as_its_formula():
    """aten::rms_norm (timm's RmsNorm, Gemma 4's vision encoder) has no TorchScript symbolic at opset 17:
    x / sqrt(mean(x^2) + eps) * weight over the normalised trailing axes."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("onnx")
    np = pytest.importorskip("numpy")

    class Rms(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = torch.nn.Parameter(torch.linspace(0.5, 2.0, 6))

        def forward(self, x):
            return torch.nn.functional.rms_norm(x, (6,), self.weight, 1e-6) + torch.nn.functional.rms_norm(x, (3, 6))

    x = torch.linspace(-4.0, 1.0, 36).reshape(2, 3, 6)
    got = _export_and_run(Rms(), x)
    assert got.dtype == np.float32 and np.allclose(got, Rms()(x).detach().numpy(), atol=1e-5)


def test_symbolic_fixes_restore_the_exporters_own():
    pytest.importorskip("torch")
    from torch.onnx._internal.torchscript_exporter import registration

    groups = {name: registration.registry.get_function_group(name)
              for name in ("aten::unfold", "aten::repeat_interleave", "aten::expm1", "aten::rms_norm")}
    before = {name: g.get(17) for name, g in groups.items()}
    with export._torchscript_symbolic_fixes(17):
        assert groups["aten::unfold"].get(17).__name__ == "_unfold_fixed"
        assert groups["aten::repeat_interleave"].get(17) is export._repeat_interleave_fixed
        assert groups["aten::expm1"].get(17) is export._expm1
        assert groups["aten::rms_norm"].get(17) is export._rms_norm
    assert {name: g.get(17) for name, g in groups.items()} == before
