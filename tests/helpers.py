"""Test helpers: build one-node ONNX models with onnx.helper and cost them through the real loader."""
from __future__ import annotations

from typing import Sequence

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from predictor.graph.cost import node_work, to_cost
from predictor.graph.loader import Graph, load_model_proto
from predictor.precision import policy
from predictor.types import OpCost

_ELEM = {"float32": TensorProto.FLOAT, "float16": TensorProto.FLOAT16, "bfloat16": TensorProto.BFLOAT16,
         "int64": TensorProto.INT64, "int32": TensorProto.INT32, "int8": TensorProto.INT8,
         "bool": TensorProto.BOOL, "uint8": TensorProto.UINT8, "float64": TensorProto.DOUBLE}

TensorSpec = tuple  # (name, dtype, shape) ; shape may be None for an output left to inference


def make_model(nodes: Sequence[onnx.NodeProto], inputs: Sequence[TensorSpec], outputs: Sequence[TensorSpec],
               initializers: dict | None = None, opset: int = 17) -> onnx.ModelProto:
    """A model from specs; ``initializers`` maps name -> numpy array (kept inside the graph)."""
    inits = [numpy_helper.from_array(np.asarray(v), name=k) for k, v in (initializers or {}).items()]
    init_names = set((initializers or {}).keys())
    g_inputs = [helper.make_tensor_value_info(n, _ELEM[d], s) for n, d, s in inputs if n not in init_names]
    g_outputs = [helper.make_tensor_value_info(n, _ELEM[d], s) for n, d, s in outputs]
    graph = helper.make_graph(list(nodes), "test", g_inputs, g_outputs, initializer=inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def load_nodes(model: onnx.ModelProto, batch: int | None = None, shapes: dict | None = None) -> Graph:
    return load_model_proto(model, batch=batch, shapes=shapes)


def one_node(op_type: str, inputs: Sequence[TensorSpec], outputs: Sequence[TensorSpec], attrs: dict | None = None,
             initializers: dict | None = None, precision: str = "fp32", opset: int = 17,
             domain: str = "") -> OpCost:
    """Cost a single node ``op_type(inputs) -> outputs``. Input/output specs are (name, dtype, shape).

    An input spec may use an empty name "" for a missing optional input. Initializer values are given by
    name in ``initializers`` (their spec in ``inputs`` still gives dtype and shape).
    """
    node = helper.make_node(op_type, [n for n, _, _ in inputs], [n for n, _, _ in outputs], domain=domain or None,
                            **(attrs or {}))
    model = make_model([node], [s for s in inputs if s[0]], outputs, initializers, opset)
    graph = load_model_proto(model)
    n = graph.nodes[0]
    pol = policy(precision)
    work = node_work(n, pol, opset)
    assert work is not None, f"no formula for {op_type}"
    return to_cost(n, work, pol)


def prepared_costs(g: Graph, precision: str = "fp16") -> tuple[dict, dict]:
    """(nodes by name, costs by name) of ``g`` after predict's graph passes (prepare_graph), costed at ``precision``."""
    from predictor.graph.cost import cost_graph
    from predictor.predict import prepare_graph

    prepared = prepare_graph(g, policy(precision))
    gc = cost_graph(prepared.graph.nodes, policy(precision), 17, graph_inputs=prepared.graph.input_names)
    return {n.name: n for n in prepared.graph.nodes}, {c.name: c for c in gc.costs}
