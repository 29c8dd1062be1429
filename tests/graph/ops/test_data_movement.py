"""Concat, Split, Slice, Gather*, Scatter*, Transpose, Pad, Tile, Expand, DepthToSpace, CumSum, Range, Trilu,
OneHot, NonZero, TopK."""
import numpy as np
import pytest

from predictor.graph.ops.data_movement import transpose_is_view
from predictor.types import WorkKind
from tests.helpers import make_model, one_node
from predictor.graph.cost import node_work
from predictor.graph.loader import load_model_proto
from predictor.precision import policy

VEC = WorkKind.VECTOR


def i64(*v):
    return np.array(v, dtype=np.int64)


def test_concat():
    work = one_node("Concat", [("a", "float32", (2, 3)), ("b", "float32", (2, 5))], [("y", "float32", None)],
                    attrs=dict(axis=1)).work
    assert work.kernels == 1 and not work.flops
    assert work.bytes_read == 24 + 40 and work.bytes_written == 16 * 4  # (2, 8)


def test_concat_of_folded_shapes_is_free():
    work = one_node("Concat", [("a", "int64", (1,)), ("b", "int64", (1,))], [("y", "int64", None)],
                    attrs=dict(axis=0), initializers={"a": i64(1), "b": i64(-1)}).work
    assert work.kernels == 0


def test_split_is_one_copy_kernel():
    work = one_node("Split", [("x", "float32", (2, 12)), ("s", "int64", (2,))],
                    [("y0", "float32", None), ("y1", "float32", None)], attrs=dict(axis=1),
                    initializers={"s": i64(4, 8)}, opset=13).work
    assert work.kernels == 1
    assert work.bytes_read == 96 + 16 and work.bytes_written == 32 + 64


def slice_(ends, precision="fp32"):
    return one_node("Slice", [("x", "float32", (4, 10)), ("st", "int64", (1,)), ("en", "int64", (1,)),
                              ("ax", "int64", (1,))], [("y", "float32", None)],
                    initializers={"st": i64(0), "en": i64(ends), "ax": i64(1)}, opset=13, precision=precision).work


def test_slice_reads_only_the_slice():
    work = slice_(5)  # (4, 10) -> (4, 5)
    assert work.kernels == 1
    assert work.bytes_read == 20 * 4 + 3 * 8  # 80 sliced bytes + starts/ends/axes = 104
    assert work.bytes_written == 80
    assert work.input_bytes["x"] == 80


def test_noop_slice_is_free():
    assert slice_(10).kernels == 0


def test_gather_embedding_reads_rows_not_table_and_fp16_keeps_int64_indices():
    ins = [("table", "float32", (30522, 768)), ("ids", "int64", (1, 128))]
    w32 = one_node("Gather", ins, [("y", "float32", None)]).work
    w16 = one_node("Gather", ins, [("y", "float32", None)], precision="fp16").work
    assert w32.bytes_read == 128 * 768 * 4 + 128 * 8  # 393216 + 1024 = 394240
    assert w32.bytes_written == 393216
    assert w16.bytes_read == 128 * 768 * 2 + 128 * 8  # 196608 + 1024 = 197632: indices stay int64
    assert w16.bytes_written == 196608
    assert w32.kernels == 1


def test_gather_of_one_load_time_index_is_a_view():
    # x[:, 3] (aten::select): no kernel, no bytes
    work = one_node("Gather", [("x", "float32", (2, 5, 7)), ("i", "int64", ())], [("y", "float32", None)],
                    attrs=dict(axis=1), initializers={"i": np.array(3, dtype=np.int64)}).work
    assert work.kernels == 0 and work.bytes_read == 0 and work.bytes_written == 0
    # a one-element index list is index_select (rank 1 output dim kept): one kernel, reads 2*7 gathered + 8 index bytes
    work = one_node("Gather", [("x", "float32", (2, 5, 7)), ("i", "int64", (1,))], [("y", "float32", None)],
                    attrs=dict(axis=1), initializers={"i": i64(3)}).work
    assert work.kernels == 1 and work.bytes_read == 2 * 7 * 4 + 8
    # a rank-0 index computed at run time (a graph input) is a kernel
    work = one_node("Gather", [("x", "float32", (2, 5, 7)), ("i", "int64", ())], [("y", "float32", None)],
                    attrs=dict(axis=1)).work
    assert work.kernels == 1


def test_gather_elements():
    work = one_node("GatherElements", [("x", "float32", (4, 5)), ("i", "int64", (4, 2))], [("y", "float32", None)],
                    attrs=dict(axis=1)).work
    assert work.bytes_read == 8 * 4 + 8 * 8  # 32 gathered + 64 indices


def test_scatter_nd_is_clone_plus_scatter():
    work = one_node("ScatterND", [("x", "float32", (4, 5)), ("i", "int64", (2, 1)), ("u", "float32", (2, 5))],
                    [("y", "float32", None)]).work
    assert work.kernels == 2
    assert work.bytes_read == 80 + 16 + 40  # clone reads X; scatter reads indices + updates
    assert work.bytes_written == 80 + 40


def test_scatter_elements_with_reduction_counts_flops():
    work = one_node("ScatterElements", [("x", "float32", (4, 5)), ("i", "int64", (4, 2)), ("u", "float32", (4, 2))],
                    [("y", "float32", None)], attrs=dict(axis=1, reduction="add"), opset=16).work
    assert work.flops == {VEC: 8}


@pytest.mark.parametrize("shape, perm, kernels", [
    ((2, 3, 4, 5), [0, 2, 1, 3], 1),  # heads <-> sequence: a real copy
    ((1, 3, 4), [1, 0, 2], 0),  # only a size-1 dim moves: a view
    ((3, 4), None, 1),  # default: reverse
])
def test_transpose(shape, perm, kernels):
    attrs = {} if perm is None else dict(perm=perm)
    work = one_node("Transpose", [("x", "float32", shape)], [("y", "float32", None)], attrs=attrs).work
    assert work.kernels == kernels
    n = int(np.prod(shape)) * 4
    assert work.bytes_read == (n if kernels else 0)


def test_transpose_is_view_rule():
    assert transpose_is_view((1, 5, 1, 7), (2, 1, 0, 3))
    assert not transpose_is_view((2, 5), (1, 0))


def pad(mode):
    return one_node("Pad", [("x", "float32", (1, 3, 4, 4)), ("p", "int64", (8,))], [("y", "float32", None)],
                    attrs=dict(mode=mode), initializers={"p": i64(0, 0, 1, 1, 0, 0, 1, 1)}, opset=13).work


def test_constant_pad_is_fill_plus_copy():
    work = pad("constant")  # -> 1x3x6x6 = 108 elements, 432 bytes
    assert work.kernels == 2
    assert work.bytes_read == 64 + 192  # fill reads the pads; copy reads X
    assert work.bytes_written == 432 + 192


def test_reflect_pad_is_one_kernel():
    work = pad("reflect")
    assert work.kernels == 1
    assert work.bytes_read == 192 + 64 and work.bytes_written == 432


def test_tile_and_expand_read_the_input_once():
    tile = one_node("Tile", [("x", "float32", (2, 3)), ("r", "int64", (2,))], [("y", "float32", None)],
                    initializers={"r": i64(2, 2)}).work
    assert tile.kernels == 1 and tile.bytes_read == 24 + 16 and tile.bytes_written == 96
    exp = one_node("Expand", [("x", "float32", (3, 1)), ("s", "int64", (2,))], [("y", "float32", None)],
                   initializers={"s": i64(3, 4)}).work
    assert exp.kernels == 1 and exp.bytes_read == 12 + 16 and exp.bytes_written == 48


def test_noop_expand_is_free():
    exp = one_node("Expand", [("x", "float32", (3, 4)), ("s", "int64", (2,))], [("y", "float32", None)],
                   initializers={"s": i64(3, 4)}).work
    assert exp.kernels == 0


def test_depth_to_space():
    work = one_node("DepthToSpace", [("x", "float32", (1, 8, 2, 2))], [("y", "float32", None)],
                    attrs=dict(blocksize=2)).work
    assert work.kernels == 1 and work.bytes_read == 128 and work.bytes_written == 128


@pytest.mark.parametrize("attrs, flops, kernels", [({}, 20, 1), (dict(reverse=1), 20, 3), (dict(exclusive=1), 40, 2)])
def test_cumsum(attrs, flops, kernels):
    work = one_node("CumSum", [("x", "float32", (4, 5)), ("a", "int64", ())], [("y", "float32", None)],
                    attrs=attrs, initializers={"a": np.int64(1)}).work
    assert work.flops == {VEC: flops}
    assert work.kernels == kernels


def test_cumsum_carries_pytorchs_scan_loop():
    """Down the rows of [32768, 8] (Mixtral's capacity ranks): a thread per column walks the 32,768 rows; along the
    rows of [32, 512] (position ids): 64 threads across a row (log2 6), 8 rows a block, 4 chunks of 6 + 2 steps; a
    1-D scan is one CUB scan (no loop)."""
    from predictor.graph.ops.data_movement import scan_threads_x_log2, torch_scan_loop

    down = one_node("CumSum", [("x", "int64", (32768, 8)), ("a", "int64", ())], [("y", "int64", None)],
                    initializers={"a": np.int64(0)}).work
    assert down.thread_loop == (32768, 8, 256, 2 * 32768 * 8 * 8)
    along = one_node("CumSum", [("x", "float32", (32, 512)), ("a", "int64", ())], [("y", "float32", None)],
                     initializers={"a": np.int64(-1)}).work
    assert along.thread_loop == (4 * (6 + 2), 4 * 512, 2048, 2 * 32 * 512 * 4)
    flat = one_node("CumSum", [("x", "float32", (512,)), ("a", "int64", ())], [("y", "float32", None)],
                    initializers={"a": np.int64(0)}).work
    assert flat.thread_loop is None
    # rows far more numerous than their length: the thread split wraps to 512 across, one row a block
    assert scan_threads_x_log2(131072, 8) == 9 and scan_threads_x_log2(4096, 4096) == 4
    assert torch_scan_loop((4, 3, 5), 1, 4) == (3, 20, 32 * 5, 2 * 60 * 4)  # 32 blocks of 5 threads an SM


def test_range_writes_only():
    # torch.arange(x.size(0)): the limit is shape arithmetic, known at load time but not a constant
    from onnx import helper

    nodes = [helper.make_node("Size", ["x"], ["l"]), helper.make_node("Range", ["s", "l", "d"], ["y"])]
    model = make_model(nodes, [("x", "float32", (10,))], [("y", "int64", None)],
                       {"s": np.int64(0), "d": np.int64(1)})
    work = node_work(load_model_proto(model).nodes[-1], policy("fp32"))
    assert work.flops == {VEC: 20}  # one FMA per element
    assert work.kernels == 1 and work.bytes_read == 0 and work.bytes_written == 80


def test_range_of_constants_is_folded():
    work = one_node("Range", [("s", "int64", ()), ("l", "int64", ()), ("d", "int64", ())], [("y", "int64", None)],
                    initializers={"s": np.int64(0), "l": np.int64(10), "d": np.int64(1)}).work
    assert work.kernels == 0 and not work.flops


def test_trilu():
    work = one_node("Trilu", [("x", "float32", (4, 4))], [("y", "float32", None)], opset=14).work
    assert work.flops == {VEC: 16} and work.kernels == 1


def test_one_hot():
    work = one_node("OneHot", [("i", "int64", (3,)), ("d", "int64", ()), ("v", "float32", (2,))],
                    [("y", "float32", None)], initializers={"d": np.int64(10), "v": np.array([0, 1], np.float32)}).work
    assert work.kernels == 4
    assert work.bytes_read == 3 * 24  # min, max, scatter each read the indices
    assert work.bytes_written == 120 + 12  # zeros + one element per index


def test_non_zero_unknown_output_uses_upper_bound():
    work = one_node("NonZero", [("x", "float32", (3, 4))], [("y", "int64", None)]).work
    assert work.kernels == 3
    upper = 2 * 12 * 8  # rank * numel int64 = 192
    assert work.bytes_read == 48 + 48 + upper
    assert work.bytes_written == upper + upper
    assert work.notes


@pytest.mark.parametrize("attrs, kernels", [({}, 2), (dict(sorted=0), 1)])
def test_top_k(attrs, kernels):
    work = one_node("TopK", [("x", "float32", (4, 100)), ("k", "int64", (1,))],
                    [("v", "float32", None), ("i", "int64", None)], attrs=attrs, initializers={"k": i64(5)}).work
    assert work.flops == {VEC: 400}
    assert work.kernels == kernels
    out = 20 * 4 + 20 * 8  # values + int64 indices = 240
    assert work.bytes_written == out * kernels


def test_col2im_is_one_kernel_reading_the_columns():
    # fold of (1, 2*3*3, 16) columns (3x3 blocks, stride 1, pad 1) into a 2x4x4 image: 1 add per column entry
    work = one_node("Col2Im", [("x", "float32", (1, 18, 16)), ("img", "int64", (2,)), ("blk", "int64", (2,))],
                    [("y", "float32", None)], attrs=dict(pads=[1, 1, 1, 1]),
                    initializers={"img": i64(4, 4), "blk": i64(3, 3)}, opset=18).work
    assert work.kernels == 1 and work.bytes_read == 18 * 16 * 4 and work.bytes_written == 2 * 16 * 4
    assert work.flops == {VEC: 18 * 16}
