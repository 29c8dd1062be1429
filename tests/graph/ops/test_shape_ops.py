"""Views and host-side ops cost nothing; ConstantOfShape is a fill kernel."""
import numpy as np
import pytest

from tests.helpers import one_node

X = ("x", "float32", (2, 3, 4))


@pytest.mark.parametrize("op, ins, inits, attrs, opset", [
    ("Reshape", [X, ("s", "int64", (2,))], {"s": np.array([6, 4], np.int64)}, {}, 17),
    ("Flatten", [X], {}, dict(axis=1), 17),
    ("Squeeze", [("x", "float32", (2, 1, 4)), ("a", "int64", (1,))], {"a": np.array([1], np.int64)}, {}, 17),
    ("Unsqueeze", [X, ("a", "int64", (1,))], {"a": np.array([0], np.int64)}, {}, 17),
    ("Shape", [X], {}, {}, 17),
    ("Size", [X], {}, {}, 17),
    ("Identity", [X], {}, {}, 17),
    ("Dropout", [X], {}, {}, 17),
])
def test_free_ops(op, ins, inits, attrs, opset):
    out_type = "int64" if op in ("Shape", "Size") else "float32"
    cost = one_node(op, ins, [("y", out_type, None)], attrs=attrs, initializers=inits, opset=opset)
    assert cost.kernels == 0
    assert cost.work.bytes_read == 0 and cost.work.bytes_written == 0
    assert cost.total_flops == 0


def test_constant_is_free():
    from onnx import helper, TensorProto
    t = helper.make_tensor("v", TensorProto.FLOAT, (2,), [1.0, 2.0])
    cost = one_node("Constant", [], [("y", "float32", None)], attrs=dict(value=t))
    assert cost.kernels == 0


def _constant_of_shape(x_shape, out_type):
    """ConstantOfShape(Shape(x)): the fill's shape is shape arithmetic on an activation (a graph input)."""
    from onnx import TensorProto, helper

    elem = TensorProto.INT64 if out_type == "int64" else TensorProto.FLOAT
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("ConstantOfShape", ["s"], ["y"], value=helper.make_tensor("v", elem, (1,), [0]))]
    return _last_node_work(nodes, x_shape, out_type)


def _last_node_work(nodes, x_shape, out_type):
    """The work of the last of ``nodes`` on a graph input x of ``x_shape`` (fp32)."""
    from predictor.graph.cost import node_work
    from predictor.graph.loader import load_model_proto
    from predictor.precision import policy
    from tests.helpers import make_model

    model = make_model(nodes, [("x", "float32", x_shape)], [("y", out_type, None)])
    return node_work(load_model_proto(model).nodes[-1], policy("fp32"))


def test_constant_of_shape_is_a_fill_kernel():
    work = _constant_of_shape((16, 8), "float32")
    assert work.kernels == 1
    assert work.bytes_read == 0 and work.bytes_written == 16 * 8 * 4
    assert dict(work.input_bytes) == {}


def test_constant_of_shape_of_a_shape_vector_is_host_arithmetic():
    # torchscript's expand pattern: ConstantOfShape([2]) -> int64 [1, 1], a shape vector
    work = _constant_of_shape((2,), "int64")
    assert work.kernels == 0


def test_constant_of_shape_of_a_constant_is_folded():
    # torch.zeros(16, 8) with literal sizes: computed once before inference
    work = one_node("ConstantOfShape", [("s", "int64", (2,))], [("y", "float32", None)],
                    initializers={"s": np.array([16, 8], np.int64)}).work
    assert work.kernels == 0


def test_constant_of_shape_int_2d_is_a_kernel():
    # BERT's token_type_ids = torch.zeros(input_shape, dtype=long)
    work = _constant_of_shape((1, 128), "int64")
    assert work.kernels == 1 and work.bytes_written == 128 * 8


def test_random_normal_like_is_a_generator_kernel():
    # Reformer's LSH rotations: torch.randn(shape) -> RandomNormalLike of an activation's shape
    from onnx import helper

    work = _last_node_work([helper.make_node("RandomNormalLike", ["x"], ["y"])], (12, 64, 1, 64), "float32")
    assert work.kernels == 1 and dict(work.flops) == {}
    assert work.bytes_read == 0 and work.bytes_written == 12 * 64 * 64 * 4
    assert dict(work.input_bytes) == {}


def test_random_uniform_is_a_generator_kernel():
    from onnx import TensorProto

    work = one_node("RandomUniform", [], [("y", "float32", None)],
                    attrs=dict(shape=[4, 8], dtype=TensorProto.FLOAT)).work
    assert work.kernels == 1 and work.bytes_written == 4 * 8 * 4 and work.bytes_read == 0
