"""Reductions, axes from attributes (opset 13) and from the constant input (opset 18), ArgMax/ArgMin."""
import numpy as np
import pytest

from predictor.graph.context import ShapeUnknown
from predictor.types import WorkKind
from tests.helpers import one_node

VEC = WorkKind.VECTOR


def reduce(op, shape, axes=None, opset=18, as_input=True, precision="fp32", **attrs):
    ins = [("x", "float32", shape)]
    inits = {}
    if axes is not None and as_input:
        ins.append(("axes", "int64", (len(axes),)))
        inits["axes"] = np.array(axes, dtype=np.int64)
    elif axes is not None:
        attrs["axes"] = axes
    return one_node(op, ins, [("y", "float32", None)], attrs=attrs, initializers=inits, opset=opset,
                    precision=precision).work


@pytest.mark.parametrize("op, shape, axes, opset, as_input, attrs, flops, written", [
    # ReduceSum takes axes as an input from opset 13: (2,3,4) over axis 1 -> (2,4): 24 adds
    ("ReduceSum", (2, 3, 4), [1], 13, True, dict(keepdims=0), 24, 8 * 4),
    # ReduceMean, opset 18 input axes [-1]: (2,3,1) -> 24 adds + 6 divides = 30
    ("ReduceMean", (2, 3, 4), [-1], 18, True, {}, 30, 6 * 4),
    # ReduceMean, opset 13 attribute axes [2,3] (global pooling): 128 adds + 8 divides = 136
    ("ReduceMean", (1, 8, 4, 4), [2, 3], 13, False, {}, 136, 8 * 4),
    # no axes: every axis -> one output
    ("ReduceMax", (2, 3, 4), None, 18, True, {}, 24, 4),
    # ReduceL2, attribute axis: FMA per input (80) + sqrt per output (4) = 84
    ("ReduceL2", (4, 10), [1], 13, False, dict(keepdims=0), 84, 16),
    ("ReduceSumSquare", (4, 10), [1], 13, False, {}, 80, 16),
    ("ReduceL1", (4, 10), [1], 18, True, {}, 80, 16),
    ("ReduceProd", (4, 10), [0], 18, True, {}, 40, 40),
])
def test_reduce(op, shape, axes, opset, as_input, attrs, flops, written):
    work = reduce(op, shape, axes, opset, as_input, **attrs)
    assert work.flops == {VEC: flops}
    assert work.kernels == 1
    axes_b = 8 * len(axes) if axes is not None and as_input else 0
    assert work.bytes_read == 4 * int(np.prod(shape)) + axes_b
    assert work.bytes_written == written


def test_noop_with_empty_axes_is_identity():
    work = reduce("ReduceSum", (2, 3, 4), None, 18, noop_with_empty_axes=1)
    assert work.kernels == 0 and work.bytes_read == 0


def test_dynamic_axes_need_the_output_shape():
    with pytest.raises(ShapeUnknown):
        one_node("ReduceSum", [("x", "float32", (2, 3, 4)), ("axes", "int64", (1,))], [("y", "float32", None)],
                 opset=18)


def test_reduce_fp16():
    work = reduce("ReduceMean", (2, 3, 4), [-1], 18, precision="fp16")
    assert work.bytes_read == 24 * 2 + 8  # float halves, the int64 axes do not
    assert work.bytes_written == 12


def test_log_sum_exp_is_nine_kernels():
    work = reduce("ReduceLogSumExp", (4, 10), [1], 13, False)
    assert work.flops == {VEC: 7 * 40 + 5 * 4}  # 300
    assert work.kernels == 9
    x_b, o_b = 160, 16
    # amax, abs, ==inf, masked_fill, sub, exp_, sum, log_, add_
    assert work.bytes_read == x_b + o_b + o_b + 2 * o_b + (x_b + o_b) + x_b + x_b + o_b + 2 * o_b  # 768
    assert work.bytes_written == o_b * 4 + x_b + x_b + o_b * 3  # 432


def test_log_sum_is_two_kernels():
    work = reduce("ReduceLogSum", (4, 10), [1], 18)
    assert work.flops == {VEC: 40 + 4 * 4}  # 56
    assert work.kernels == 2
    assert work.bytes_read == 160 + 8 + 16


@pytest.mark.parametrize("op", ["ArgMax", "ArgMin"])
def test_arg_reduce(op):
    work = one_node(op, [("x", "float32", (4, 10))], [("y", "int64", None)], attrs=dict(axis=1), opset=13).work
    assert work.flops == {VEC: 40}
    assert work.bytes_read == 160
    assert work.bytes_written == 4 * 8  # int64 indices, (4, 1)
