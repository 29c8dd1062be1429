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


@pytest.mark.parametrize("shape, axes, elt, vt0, vec, loop", [
    # 32 outputs of 6,272 (reduced run innermost, vectorised by 16 B / 4 B = 4): a warp per output, 196 values per lane
    # < min(16 x 16, 256): no split over warps; 2 blocks of 16 warps; 196 / 4 -> 49 iterations
    ((32, 6272), (1,), 4, 4, None, (49, 2 * 512, 2048)),
    # the same at fp16: 8 values per 16-byte load -> 25 iterations
    ((32, 6272), (1,), 2, 4, None, (25, 2 * 512, 2048)),
    # 12,544 elements: 392 values per lane >= 256: split over the block's 16 warps, 25 values per thread, one block per
    # output -> ceil(25 / 4) = 7 iterations
    ((32, 12544), (1,), 4, 4, None, (7, 32 * 512, 2048)),
    # Welford (two values per iteration): 196 / 2 = 98
    ((1, 32, 6272), (2,), 4, 2, 2, (98, 2 * 512, 2048)),
    # a short run (49 < 128): not vectorised, vt0 = 4 values per iteration; 49 / 32 lanes -> 2 values, 1 iteration
    ((32, 2048, 49), (2,), 4, 4, None, (1, 65536 // 16 * 512, 2048)),
    # the reduced axis not innermost (mean over channels of [32, 768, 196]): outputs across the lanes in vectors of 4,
    # 128-thread blocks of 32 x 4: 768 values per thread >= min(4 x 16, 256): split over the 4 warps -> 192 values,
    # 4 per iteration -> 48; 6,272 outputs / (32 x 4) = 49 blocks
    ((32, 768, 196), (1,), 4, 4, None, (48, 49 * 128, 2048)),
    # one output of 10^6 (a loss mean): a 512-lane block, split over 123 blocks (1,953 values per lane / 16), 16 values
    # per lane -> 4 iterations, and the last block's pass over the 123 partials (over its 512 threads): 1 -> 5
    ((10 ** 6,), (0,), 4, 4, None, (5, 123 * 512, 2048)),
    # 128 outputs of 200,704 across the lanes: 2,112 blocks (the SMs' target grid, REDUCE_SMS x 16) -> 24 values, 6
    # iterations, then the last block's 4 warps combine the 2,112 partials: 528 more (microbenchmark run 12: 213 us)
    ((200704, 128), (0,), 4, 4, None, (6 + 528, 2112 * 128, 2048)),
    # size-1 axes are dropped; nothing reduced -> None
    ((4, 1, 8), (1,), 4, 4, None, None),
])
def test_torch_reduce_loop(shape, axes, elt, vt0, vec, loop):
    from predictor.graph.ops.reduction import torch_reduce_loop

    assert torch_reduce_loop(shape, axes, elt, vt0, vec) == loop


def test_a_reduce_node_carries_its_thread_loop():
    # (iterations, threads, threads per SM, the bytes looped over: 32 x 6,272 elements)
    assert reduce("ReduceMean", (32, 6272), [-1]).thread_loop == (49, 2 * 512, 2048, 32 * 6272 * 4)
    assert reduce("ReduceMean", (32, 6272), [-1], precision="fp16").thread_loop == (25, 2 * 512, 2048, 32 * 6272 * 2)
