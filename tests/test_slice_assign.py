"""The exporter's slice assignment (ScatterND on a shape-built index grid) as PyTorch runs it (predictor/slice_assign.py)."""
import numpy as np
from onnx import helper

from predictor.graph.context import INDEX_GRID, SLICE_ASSIGN
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
