"""The exporter's slice assignment (ScatterND on a shape-built index grid) as PyTorch runs it (predictor/slice_assign.py)."""
import numpy as np
from onnx import helper

from predictor.graph.context import INDEX_GRID, SLICE_ASSIGN, SOURCE_VIEW, STRIDED_GATHER
from predictor.graph.cost import cost_graph
from predictor.graph.loader import load_model_proto
from predictor.precision import policy
from predictor.predict import prepare_graph
from predictor.slice_assign import mark_slice_assignments
from tests.helpers import make_model


def _graph(indices_from_input=False):
    # x[:, :, 0:2] = u on x [2, 4, 6]: the grid [2, 4, 2, 3] is three expanded int64 index columns, concatenated
    nodes = [helper.make_node("Relu", ["x"], ["a"], name="act"),
             helper.make_node("Relu", ["u"], ["ua"], name="upd")]
    if indices_from_input:
        idx = "idx_in"
    else:
        idx = "idx"
        for k in range(3):
            nodes.append(helper.make_node("Expand", [f"col{k}", "grid_shape"], [f"e{k}"], name=f"expand{k}"))
        nodes.append(helper.make_node("Concat", ["e0", "e1", "e2"], ["idx"], axis=-1, name="grid"))
    nodes.append(helper.make_node("ScatterND", ["a", idx, "ua"], ["y"], name="assign"))
    inits = {f"col{k}": np.zeros((1, 1, 2, 1), np.int64) for k in range(3)}
    inits["grid_shape"] = np.array([2, 4, 2, 1], np.int64)
    inputs = [("x", "float32", [2, 4, 6]), ("u", "float32", [2, 4, 2])]
    if indices_from_input:
        inputs.append(("idx_in", "int64", [2, 4, 2, 3]))
    return load_model_proto(make_model(nodes, inputs, [("y", "float32", None)], inits), batch=None)


def _costs(g):
    prepared = prepare_graph(g, policy("fp32"))
    gc = cost_graph(prepared.graph.nodes, policy("fp32"), 17, graph_inputs=prepared.graph.input_names)
    return prepared.graph, {c.name: c for c in gc.costs}


def test_slice_assignment_is_one_copy_and_its_grid_is_free():
    g, costs = _costs(_graph())
    marks = {n.name: (bool(n.attrs.get(SLICE_ASSIGN)), bool(n.attrs.get(INDEX_GRID))) for n in g.nodes}
    assert marks == {"act": (False, False), "upd": (False, False), "expand0": (False, True),
                     "expand1": (False, True), "expand2": (False, True), "grid": (False, True),
                     "assign": (True, False)}
    assert [costs[f"expand{k}"].kernels for k in range(3)] + [costs["grid"].kernels] == [0, 0, 0, 0]
    assign = costs["assign"]
    assert assign.kernels == 1
    assert assign.work.bytes_read == 2 * 4 * 2 * 4 and assign.work.bytes_written == 64  # the updates, once each


def test_scatter_on_data_dependent_indices_is_unchanged():
    g, costs = _costs(_graph(indices_from_input=True))
    assert not any(n.attrs.get(SLICE_ASSIGN) or n.attrs.get(INDEX_GRID) for n in g.nodes)
    assert costs["assign"].kernels == 2  # clone of the data, then the scatter


def test_graph_without_scatter_is_returned_as_is():
    g = load_model_proto(make_model([helper.make_node("Relu", ["x"], ["y"])], [("x", "float32", [2, 3])],
                                    [("y", "float32", None)]), batch=None)
    assert mark_slice_assignments(g) is g


def test_source_slices_are_views_and_a_shape_only_index_is_grid():
    # x[:, :, 0:2] = relu(u)[:, :, 1:3] on x [2, 4, 6], u [2, 4, 4]; the exporter also broadcasts two index columns
    # (an int64 Add read only by a Shape) to size the grid: PyTorch runs one copy_ from the strided view
    nodes = [helper.make_node("Relu", ["x"], ["a"], name="act"),
             helper.make_node("Relu", ["u"], ["ua"], name="upd"),
             helper.make_node("Slice", ["ua", "st", "en", "ax"], ["us"], name="src"),
             helper.make_node("Add", ["rows", "cols"], ["bc"], name="bcast"),
             helper.make_node("Shape", ["bc"], ["bc_shape"], name="shape"),
             helper.make_node("Max", ["bc_shape", "grid_shape"], ["gs"], name="size")]
    for k in range(3):
        nodes.append(helper.make_node("Expand", [f"col{k}", "gs"], [f"e{k}"], name=f"expand{k}"))
    nodes += [helper.make_node("Concat", ["e0", "e1", "e2"], ["idx"], axis=-1, name="grid"),
              helper.make_node("ScatterND", ["a", "idx", "us"], ["y"], name="assign")]
    inits = {f"col{k}": np.zeros((1, 1, 2, 1), np.int64) for k in range(3)}
    inits.update(grid_shape=np.array([2, 4, 2, 1], np.int64), rows=np.zeros((2, 1, 1, 1), np.int64),
                 cols=np.zeros((1, 1, 2, 1), np.int64), st=np.array([1], np.int64), en=np.array([3], np.int64),
                 ax=np.array([2], np.int64))
    g = load_model_proto(make_model(nodes, [("x", "float32", [2, 4, 6]), ("u", "float32", [2, 4, 4])],
                                    [("y", "float32", None)], inits), batch=None)
    g, costs = _costs(g)
    marks = {n.name for n in g.nodes if n.attrs.get(INDEX_GRID)}
    assert marks == {"bcast", "shape", "size", "expand0", "expand1", "expand2", "grid"}
    assert next(n for n in g.nodes if n.name == "src").attrs.get(SOURCE_VIEW)
    assert costs["bcast"].kernels == costs["src"].kernels == 0 and costs["upd"].kernels == 1
    assign = costs["assign"]
    assert assign.kernels == 1 and assign.work.bytes_read == 64 and assign.work.bytes_written == 64


def test_gather_on_an_index_grid_is_a_strided_copy():
    # flat [8192] (a relu of x [64, 128] reshaped) gathered at a [64, 128] int64 grid: an Add of a column of window
    # starts and a row of steps, sized by the input's shape (the exporter's as_strided); an embedding lookup by
    # graph-input ids beside it is left as it was
    nodes = [helper.make_node("Relu", ["x"], ["a"], name="act"),
             helper.make_node("Reshape", ["a", "flat_shape"], ["flat"], name="flatten"),
             helper.make_node("Shape", ["x"], ["xs"], name="shape"),
             helper.make_node("Gather", ["xs", "zero"], ["n"], axis=0, name="rows"),
             helper.make_node("Range", ["zero", "n", "one"], ["r"], name="range"),
             helper.make_node("Unsqueeze", ["r", "one_axis"], ["starts"], name="column"),
             helper.make_node("Add", ["starts", "steps"], ["idx"], name="windows"),
             helper.make_node("Gather", ["flat", "idx"], ["w"], axis=0, name="strided"),
             helper.make_node("Gather", ["table", "ids"], ["emb"], axis=0, name="embed")]
    inits = {"flat_shape": np.array([8192], np.int64), "zero": np.array(0, np.int64), "one": np.array(1, np.int64),
             "one_axis": np.array([1], np.int64), "steps": np.arange(128, dtype=np.int64)[None, :],
             "table": np.zeros((10, 4), np.float32)}
    g = load_model_proto(make_model(nodes, [("x", "float32", [64, 128]), ("ids", "int64", [2, 3])],
                                    [("w", "float32", None), ("emb", "float32", None)], inits), batch=None)
    g, costs = _costs(g)
    by = {n.name: n for n in g.nodes}
    assert by["strided"].attrs.get(STRIDED_GATHER) and by["windows"].attrs.get(INDEX_GRID)
    assert not by["embed"].attrs.get(STRIDED_GATHER) and costs["windows"].kernels == 0
    strided = costs["strided"].work
    assert strided.kernels == 1 and strided.bytes_read == strided.bytes_written == 64 * 128 * 4  # no index read
    assert costs["embed"].work.bytes_read == 6 * 4 * 4 + 6 * 8  # 6 rows of 4 fp32, and the 6 int64 ids
