"""Folding and shape functions (predictor/graph/shapes.py) against ONNX's reference evaluator, and the
loader's shape completion on the patterns that left swin_t's mask construction unknown."""
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from predictor.graph import shapes
from predictor.graph.loader import load_model_proto
from predictor.graph.shapes import RawNode, Val
from predictor.types import TensorInfo
from tests.helpers import make_model


def val(a) -> Val:
    a = np.asarray(a)
    return Val(a.shape, a.reshape(-1).tolist(), str(a.dtype))


def reference(node, arrays):
    from onnx.reference import ReferenceEvaluator

    names = [f"i{k}" for k in range(len(arrays))]
    node = helper.make_node(node.op_type, [n if a is not None else "" for n, a in zip(names, arrays)],
                            [f"o{k}" for k in range(len(node.output))], **_attrs(node))
    inputs = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
              for n, a in zip(names, arrays) if a is not None]
    outputs = [helper.make_tensor_value_info(o, TensorProto.UNDEFINED, None) for o in node.output]
    model = helper.make_model(helper.make_graph([node], "g", inputs, outputs),
                              opset_imports=[helper.make_opsetid("", 18)])
    feeds = {n: a for n, a in zip(names, arrays) if a is not None}
    return ReferenceEvaluator(model).run(None, feeds)


def _attrs(node):
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def fold(op, arrays, n_out=1, **attrs):
    node = helper.make_node(op, [f"i{k}" if a is not None else "" for k, a in enumerate(arrays)],
                            [f"o{k}" for k in range(n_out)], **attrs)
    ins = [TensorInfo(f"i{k}", str(np.asarray(a).dtype), np.asarray(a).shape) if a is not None else None
           for k, a in enumerate(arrays)]
    got = shapes.fold(RawNode(node), [val(a) if a is not None else None for a in arrays], ins)
    return node, got


I64 = np.int64
F32 = np.float32


@pytest.mark.parametrize("op, arrays, attrs", [
    ("Add", [np.array([[1, 2, 3]], I64), np.array([[10], [20]], I64)], {}),
    ("Sub", [np.array([7], I64), np.array([2, 9], I64)], {}),
    ("Mul", [np.arange(6, dtype=F32).reshape(2, 3), np.array(2.5, F32)], {}),
    ("Div", [np.array([7, -7, 6], I64), np.array([2, 2, -4], I64)], {}),  # truncation toward zero
    ("Div", [np.array([1.0, -3.0], F32), np.array([4.0, 2.0], F32)], {}),
    ("Mod", [np.array([56, -5, 5], I64), np.array([7, 3, -3], I64)], {}),
    ("Mod", [np.array([5.5, -5.5], F32), np.array([2.0, 2.0], F32)], dict(fmod=1)),
    ("Equal", [np.array([1, 2, 3], I64), np.array([2], I64)], {}),
    ("Less", [np.array([1, 2, 3], I64), np.array([2], I64)], {}),
    ("GreaterOrEqual", [np.array([1, 2, 3], I64), np.array([2], I64)], {}),
    ("And", [np.array([True, False, True]), np.array([True, True, False])], {}),
    ("Xor", [np.array([True, False, True]), np.array([True, True, False])], {}),
    ("Not", [np.array([True, False])], {}),
    ("Neg", [np.array([3, -4], I64)], {}),
    ("Abs", [np.array([3, -4], I64)], {}),
    ("Floor", [np.array([1.5, -1.5], F32)], {}),
    ("Ceil", [np.array([1.5, -1.5], F32)], {}),
    ("Sqrt", [np.array([4.0, 2.0], F32)], {}),
    ("Max", [np.array([1, 5], I64), np.array([3, 2], I64), np.array([0, 9], I64)], {}),
    ("Min", [np.array([1, 5], I64), np.array([3, 2], I64)], {}),
    ("Sum", [np.array([1, 5], I64), np.array([3, 2], I64), np.array([0, 9], I64)], {}),
    ("Pow", [np.array([2.0, 3.0], F32), np.array([2.0], F32)], {}),
    ("Where", [np.array([[True], [False]]), np.array([1.0, 2.0], F32), np.array(-100.0, F32)], {}),
    ("Cast", [np.array([1.7, -1.7, 0.0], F32)], dict(to=TensorProto.INT64)),
    ("Cast", [np.array([0, 3], I64)], dict(to=TensorProto.BOOL)),
    ("Cast", [np.array([2, 3], I64)], dict(to=TensorProto.FLOAT)),
    ("Gather", [np.array([5, 6, 7, 8], I64), np.array([[0, -1], [2, 1]], I64)], dict(axis=0)),
    ("Gather", [np.arange(12, dtype=I64).reshape(3, 4), np.array([3, 0], I64)], dict(axis=1)),
    ("Gather", [np.array([1, 56, 56, 96], I64), np.array(2, I64)], dict(axis=0)),
    ("GatherElements", [np.arange(6, dtype=I64).reshape(2, 3), np.array([[2, 0], [1, 1]], I64)], dict(axis=1)),
    ("GatherND", [np.arange(8, dtype=I64).reshape(2, 2, 2), np.array([[0, 1], [1, 0]], I64)], {}),
    ("ScatterND", [np.zeros((4, 3), F32), np.array([[1], [3]], I64), np.ones((2, 3), F32)], {}),
    ("ScatterND", [np.zeros((2, 3), I64), np.array([[0, 2], [1, 0]], I64), np.array([5, 6], I64)], {}),
    ("ScatterElements", [np.zeros((2, 3), F32), np.array([[1, 0]], I64), np.array([[7.0, 8.0]], F32)], dict(axis=1)),
    ("Concat", [np.array([1, 2], I64), np.array([3], I64), np.array([4, 5], I64)], dict(axis=0)),
    ("Concat", [np.zeros((2, 1), F32), np.ones((2, 2), F32)], dict(axis=1)),
    ("Transpose", [np.arange(8, dtype=I64).reshape(4, 2)], dict(perm=[1, 0])),
    ("Transpose", [np.arange(24, dtype=F32).reshape(2, 3, 4)], dict(perm=[2, 0, 1])),
    ("Slice", [np.arange(8, dtype=I64).reshape(4, 2), np.array([-1], I64), np.array([-(2**63) + 1], I64),
               np.array([0], I64), np.array([-1], I64)], {}),  # x[::-1] as torch exports flip
    ("Slice", [np.arange(20, dtype=I64).reshape(4, 5), np.array([1, 0], I64), np.array([3, 9], I64),
               np.array([0, 1], I64), np.array([1, 2], I64)], {}),
    ("Reshape", [np.arange(8, dtype=I64), np.array([-1, 2], I64)], {}),
    ("Expand", [np.array([[1], [2]], I64), np.array([2, 3], I64)], {}),
    ("Tile", [np.array([[1, 2]], I64), np.array([2, 2], I64)], {}),
    ("Pad", [np.arange(6, dtype=F32).reshape(2, 3), np.array([0, 1, 1, 0], I64), np.array(-1.0, F32)], {}),
    ("Pad", [np.arange(6, dtype=F32).reshape(2, 3), np.array([1, 2, 1, 2], I64)], dict(mode="reflect")),
    ("Pad", [np.arange(6, dtype=F32).reshape(2, 3), np.array([1, 1, 0, 2], I64)], dict(mode="edge")),
    ("ConstantOfShape", [np.array([2, 3], I64)], dict(value=numpy_helper.from_array(np.array([7], I64)))),
    ("Range", [np.array(0, I64), np.array(56, I64), np.array(7, I64)], {}),
    ("Range", [np.array(1.0, F32), np.array(2.0, F32), np.array(0.25, F32)], {}),
    ("Range", [np.array(10, I64), np.array(0, I64), np.array(-3, I64)], {}),
    ("Unsqueeze", [np.array([3, 4], I64), np.array([0, -1], I64)], {}),
    ("Squeeze", [np.zeros((1, 3, 1), I64), np.array([0], I64)], {}),
    ("Trilu", [np.arange(12, dtype=F32).reshape(3, 4), np.array(1, I64)], dict(upper=1)),
    ("Trilu", [np.arange(12, dtype=F32).reshape(3, 4)], dict(upper=0)),
    ("CumSum", [np.arange(6, dtype=I64).reshape(2, 3), np.array(1, I64)], dict(reverse=1)),
    ("CumSum", [np.arange(6, dtype=F32).reshape(2, 3), np.array(0, I64)], dict(exclusive=1)),
    ("NonZero", [np.array([[1, 0], [0, 3]], I64)], {}),
    ("ReduceProd", [np.array([2, 3, 4], I64)], dict(keepdims=0)),
    ("ReduceSum", [np.arange(6, dtype=I64).reshape(2, 3), np.array([1], I64)], dict(keepdims=1)),
    ("ReduceMax", [np.arange(6, dtype=F32).reshape(2, 3)], dict(axes=[0], keepdims=0)),
    ("ReduceMean", [np.arange(6, dtype=F32).reshape(2, 3)], dict(axes=[1])),
    ("ArgMax", [np.array([[1, 5, 5], [7, 0, 2]], I64)], dict(axis=1, keepdims=0)),
    ("Clip", [np.array([-2.0, 0.5, 9.0], F32), np.array(0.0, F32), np.array(6.0, F32)], {}),
    ("Flatten", [np.arange(24, dtype=F32).reshape(2, 3, 4)], dict(axis=2)),
    ("Identity", [np.array([1, 2], I64)], {}),
    ("MatMul", [np.arange(6, dtype=F32).reshape(2, 3), np.arange(12, dtype=F32).reshape(3, 4)], {}),
])
def test_folders_match_the_reference_evaluator(op, arrays, attrs):
    node, got = fold(op, arrays, **attrs)
    want = reference(node, arrays)
    assert got is not None, f"{op} did not fold"
    for g, w in zip(got, want):
        assert g.shape == tuple(w.shape), (g, w)
        assert g.dtype == str(w.dtype), (g.dtype, w.dtype)
        np.testing.assert_allclose(np.array(g.data, dtype=w.dtype).reshape(w.shape), w, rtol=1e-6)


def test_split_folds_every_output():
    node, got = fold("Split", [np.arange(10, dtype=I64), np.array([3, 7], I64)], n_out=2, axis=0)
    want = reference(node, [np.arange(10, dtype=I64), np.array([3, 7], I64)])
    assert [g.data for g in got] == [w.tolist() for w in want]


def test_folders_give_up_without_values():
    assert fold("Reshape", [np.arange(4, dtype=I64), None])[1] is None
    node = helper.make_node("Add", ["a", "b"], ["c"])
    assert shapes.fold(RawNode(node), [val([1]), None], [None, None]) is None


def test_folding_stops_at_the_size_limit():
    n = shapes.MAX_FOLD_ELEMS + 1
    assert fold("ConstantOfShape", [np.array([n], I64)])[1] is None
    assert fold("Range", [np.array(0, I64), np.array(n, I64), np.array(1, I64)])[1] is None


# ---------------------------------------------------------------------------------------- shapes
def infer(op, in_shapes, values=None, k=0, **attrs):
    values = values or {}
    names = [f"i{j}" if s is not None else "" for j, s in enumerate(in_shapes)]
    node = RawNode(helper.make_node(op, names, [f"o{j}" for j in range(k + 1)], **attrs))
    ins = [TensorInfo(n, "float32", tuple(s)) if s is not None else None for n, s in zip(names, in_shapes)]
    vals = [val(values[j]) if j in values else None for j in range(len(in_shapes))]
    return shapes.infer(node, ins, vals, k)


@pytest.mark.parametrize("op, in_shapes, values, attrs, out", [
    ("ScatterND", [(64, 49, 49), (10, 1), (10, 49, 49)], {}, {}, (64, 49, 49)),  # data's shape, values unknown
    ("ConstantOfShape", [(3,)], {0: np.array([1, 56, 56], I64)}, {}, (1, 56, 56)),
    ("Range", [(), (), ()], {0: np.array(0, I64), 1: np.array(100000, I64), 2: np.array(3, I64)}, {}, (33334,)),
    ("Pad", [(1, 56, 56, 96), (8,)], {1: np.array([0, 0, 0, 0, 0, 0, 0, 0], I64)}, {}, (1, 56, 56, 96)),
    ("Pad", [(1, 3, 5), (6,)], {1: np.array([0, 1, 2, 0, 1, 0], I64)}, {}, (1, 5, 7)),
    ("Expand", [(64, 1, 49), (3,)], {1: np.array([1, 49, 1], I64)}, {}, (64, 49, 49)),
    ("Where", [(64, 49, 49), (), (64, 49, 49)], {}, {}, (64, 49, 49)),
    ("Equal", [(64, 49, 49), ()], {}, {}, (64, 49, 49)),
    ("Not", [(4, 5)], {}, {}, (4, 5)),
    ("Mod", [(3, 1), (1, 4)], {}, {}, (3, 4)),
    ("Slice", [(1, 56, 56, 96), (1,), (1,), (1,)],
     {1: np.array([3], I64), 2: np.array([2**62], I64), 3: np.array([1], I64)}, {}, (1, 53, 56, 96)),
    ("MeanVarianceNormalization", [(2, 3, 8, 8)], {}, {}, (2, 3, 8, 8)),
    ("LRN", [(2, 3, 8, 8)], {}, dict(size=3), (2, 3, 8, 8)),
    ("Gemm", [(32, 256), (128, 256), (128,)], {}, dict(transB=1), (32, 128)),
    ("Conv", [(1, 3, 224, 224), (64, 3, 7, 7)], {}, dict(strides=[2, 2], pads=[3, 3, 3, 3]), (1, 64, 112, 112)),
    ("Conv", [(1, 8, 10, 10), (16, 4, 3, 3)], {}, dict(group=2, auto_pad="SAME_UPPER", strides=[2, 2]), (1, 16, 5, 5)),
    ("ConvTranspose", [(1, 8, 7, 7), (8, 4, 4, 4)], {}, dict(strides=[2, 2], pads=[1, 1, 1, 1]), (1, 4, 14, 14)),
    ("MaxPool", [(1, 64, 112, 112)], {}, dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]), (1, 64, 56, 56)),
    ("AveragePool", [(1, 1, 5, 5)], {}, dict(kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1), (1, 1, 3, 3)),
    ("GlobalAveragePool", [(8, 768, 7, 7)], {}, {}, (8, 768, 1, 1)),
    ("ReduceMean", [(2, 197, 768), (1,)], {1: np.array([-1], I64)}, dict(keepdims=1), (2, 197, 1)),
    ("ReduceSum", [(2, 3, 4)], {}, dict(keepdims=0), ()),
    ("Einsum", [(2, 3, 4), (2, 4, 5)], {}, dict(equation="bij,bjk->bik"), (2, 3, 5)),
    ("TopK", [(3, 100), (1,)], {1: np.array([5], I64)}, {}, (3, 5)),
    ("Flatten", [(2, 3, 4, 5)], {}, dict(axis=-1), (24, 5)),
    ("GatherND", [(2, 3, 4), (5, 2)], {}, {}, (5, 4)),
    ("OneHot", [(4,), (), (2,)], {1: np.array(10, I64)}, {}, (4, 10)),
    ("DepthToSpace", [(1, 16, 4, 4)], {}, dict(blocksize=2), (1, 4, 8, 8)),
    ("Col2Im", [(2, 18, 16), (2,), (2,)], {1: np.array([4, 4], I64), 2: np.array([3, 3], I64)},
     dict(pads=[1, 1, 1, 1]), (2, 2, 4, 4)),
    ("Resize", [(1, 3, 8, 8), None, (4,)], {2: np.array([1, 1, 2, 2], F32)}, {}, (1, 3, 16, 16)),
])
def test_shape_functions(op, in_shapes, values, attrs, out):
    assert infer(op, in_shapes, values, **attrs) == out


def test_recurrent_outputs():
    assert infer("LSTM", [(5, 2, 10), (2, 32, 10)], k=0, hidden_size=8) == (5, 2, 2, 8)
    assert infer("LSTM", [(5, 2, 10), (2, 32, 10)], k=1, hidden_size=8) == (2, 2, 8)


def test_output_dtypes():
    def dt(op, ins, k=0, **attrs):
        node = RawNode(helper.make_node(op, [f"i{j}" for j in range(len(ins))], ["o", "p"][:k + 1], **attrs))
        return shapes.output_dtype(node, [TensorInfo(f"i{j}", d, (1,)) for j, d in enumerate(ins)], k)

    assert dt("Where", ["bool", "float16", "float16"]) == "float16"
    assert dt("Equal", ["int64", "int64"]) == "bool"
    assert dt("ConstantOfShape", ["int64"], value=numpy_helper.from_array(np.array([0], I64))) == "int64"
    assert dt("ConstantOfShape", ["int64"]) == "float32"
    assert dt("Cast", ["float32"], to=TensorProto.INT32) == "int32"
    assert dt("TopK", ["float32", "int64"], k=1) == "int64"
    assert dt("Shape", ["float32"]) == "int64"


# ------------------------------------------------------------------- the loader on swin's patterns
def _swin_pad_model():
    """torchvision's shifted-window padding as the TorchScript exporter writes it: pad_r = (7 - W % 7) % 7
    from Shape/Gather/Mod/Sub, assembled with ConstantOfShape/Concat, reversed by Slice(step -1) and a
    Transpose, cast, then a Pad with those computed pads; and the mask: ScatterND into a zero image."""
    c = lambda name, v: (name, np.asarray(v))  # noqa: E731
    inits = dict([c("i1", np.array(1, I64)), c("i2", np.array(2, I64)), c("seven", np.array(7, I64)),
                  c("z1", np.array([0], I64)), c("ax0", np.array([0], I64)), c("eight", np.array(8, I64)),
                  c("m1", np.array([-1], I64)), c("big", np.array([-(2**63) + 1], I64)), c("shape2", np.array([-1, 2], I64)),
                  c("idx", np.array([[0, 0], [0, 1]], I64)), c("upd", np.array([[1.0] * 4] * 2, F32))])
    n = helper.make_node
    nodes = [
        n("Shape", ["x"], ["s"]), n("Gather", ["s", "i2"], ["w"], axis=0),
        n("Mod", ["w", "seven"], ["wm"]), n("Sub", ["seven", "wm"], ["r0"]), n("Mod", ["r0", "seven"], ["pad_r"]),
        n("Unsqueeze", ["pad_r", "ax0"], ["pr"]),
        n("Concat", ["z1", "z1", "z1", "pr", "z1", "z1"], ["p6"], axis=0),
        n("Shape", ["p6"], ["p6s"]), n("Gather", ["p6s", "ax0"], ["p6n"], axis=0), n("Sub", ["eight", "p6n"], ["fill_n"]),
        n("ConstantOfShape", ["fill_n"], ["zeros"], value=numpy_helper.from_array(np.array([0], I64))),
        n("Concat", ["p6", "zeros"], ["p8"], axis=0), n("Reshape", ["p8", "shape2"], ["p42"]),
        n("Slice", ["p42", "m1", "big", "z1", "m1"], ["rev"]), n("Transpose", ["rev"], ["t"], perm=[1, 0]),
        n("Reshape", ["t", "m1"], ["flat"]), n("Cast", ["flat"], ["pads"], to=TensorProto.INT64),
        n("Pad", ["x", "pads"], ["xp"], mode="constant"),
        n("Shape", ["xp"], ["xps"]), n("Slice", ["xps", "i1_", "i3_"], ["hw"]),
        n("ConstantOfShape", ["hw"], ["img"], value=numpy_helper.from_array(np.array([0.0], F32))),
        n("ScatterND", ["img", "idx", "upd"], ["mask"]),
        n("Relu", ["xp"], ["y"]),
    ]
    inits["i1_"] = np.array([1], I64)
    inits["i3_"] = np.array([3], I64)
    return make_model(nodes, [("x", "float32", ["N", 54, 54, 96])], [("y", "float32", None), ("mask", "float32", None)],
                      inits)


def test_loader_completes_swin_window_padding_and_mask():
    g = load_model_proto(_swin_pad_model(), batch=32)
    by_out = {t.name: t for nd in g.nodes for t in nd.outputs}
    assert by_out["pads"].shape == (8,)
    assert by_out["xp"].shape == (32, 54, 56, 96)  # 54 % 7 = 5 -> pad_r = 2 on the W axis
    assert by_out["mask"].shape == (54, 56)
    assert dict(g.nodes[[nd.op_type for nd in g.nodes].index("Pad")].const_inputs)["pads"] == (0, 0, 0, 0, 0, 0, 2, 0)  # end of axis 2


def test_loader_uses_onnx_inference_for_ops_without_a_shape_function():
    # GridSample has no shape function here: ONNX inference supplies (N, C, H_out, W_out)
    nodes = [helper.make_node("GridSample", ["x", "grid"], ["y"]), helper.make_node("Relu", ["y"], ["z"])]
    m = make_model(nodes, [("x", "float32", ["N", 3, 8, 8]), ("grid", "float32", ["N", 5, 6, 2])],
                   [("z", "float32", None)], opset=16)
    g = load_model_proto(m, batch=2)
    assert g.nodes[-1].outputs[0].shape == (2, 3, 5, 6)


def test_is_initializer_marks_weights_constants_and_what_is_folded_from_them():
    n = helper.make_node
    w = np.ones((8, 4), F32)
    nodes = [n("Constant", [], ["k"], value=numpy_helper.from_array(np.array([0], I64))),
             n("Slice", ["w", "k", "two"], ["w2"]), n("Transpose", ["w2"], ["wt"], perm=[1, 0]),
             n("MatMul", ["x", "wt"], ["y"])]
    m = make_model(nodes, [("x", "float32", ["N", 4])], [("y", "float32", None)], {"w": w, "two": np.array([2], I64)})
    g = load_model_proto(m, batch=3)
    info = {t.name: t for nd in g.nodes for t in list(nd.inputs) + list(nd.outputs) if t is not None}
    assert all(info[k].is_initializer for k in ("w", "two", "k", "w2", "wt"))
    assert not info["x"].is_initializer and not info["y"].is_initializer
    assert g.inputs[0].name == "x" and not g.inputs[0].is_initializer


def test_loading_imports_neither_numpy_nor_onnx(tmp_path):
    """The common path of load + cost stays free of numpy and the onnx package (~0.3 s of imports)."""
    import subprocess
    import sys
    from pathlib import Path

    graph = Path(__file__).resolve().parents[2] / "calibration" / "data" / "networks" / "onnx" / "resnet18.torchscript.onnx"
    if not graph.exists():
        pytest.skip("no committed graph")
    code = ("import sys\n"
            "from predictor.graph.loader import load\n"
            "from predictor.graph.cost import cost_graph\n"
            "from predictor.precision import policy\n"
            f"g = load({str(graph)!r}, batch=2)\n"
            "gc = cost_graph(g.nodes, policy('fp16'), g.opset)\n"
            "assert not gc.not_costed, gc.not_costed\n"
            "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('numpy', 'onnx'))\n"
            "assert not bad, bad\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]
