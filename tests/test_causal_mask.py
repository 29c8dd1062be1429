"""Causal masks that fused attention applies itself (predictor/causal_mask.py): their builders launch nothing."""
import numpy as np
from onnx import helper

from predictor.causal_mask import mark_causal_masks
from predictor.graph.context import CAUSAL_MASK
from predictor.graph.cost import cost_graph
from predictor.graph.loader import load_model_proto
from predictor.precision import policy
from predictor.predict import prepare_graph
from tests.helpers import make_model


def _graph(padding_input: bool = False, mask_also_output: bool = False):
    """SDPA as the TorchScript exporter writes ``is_causal=True`` (q, k^T, v: [1, 2, 4, 8] / [1, 2, 8, 4]): the mask
    [4, 4] is ConstantOfShape(-1e4) over the scores' last two dims (read by Shape), then Trilu above the diagonal;
    with ``padding_input`` a graph input is added to it (a padding mask: data, kept)."""
    nodes = [helper.make_node("Mul", ["q", "s"], ["qs"], name="mq"),
             helper.make_node("Mul", ["kt", "s"], ["ks"], name="mk"),
             helper.make_node("MatMul", ["qs", "ks"], ["scores"], name="mm1"),
             helper.make_node("Shape", ["scores"], ["sshape"], name="shape", start=-2),
             helper.make_node("ConstantOfShape", ["sshape"], ["fill"], name="fill",
                              value=helper.make_tensor("v", 1, [1], [-1e4])),
             helper.make_node("Trilu", ["fill", "one"], ["tri"], upper=1, name="tri")]
    mask = "tri"
    if padding_input:
        nodes.append(helper.make_node("Add", ["tri", "pad"], ["m"], name="with_pad"))
        mask = "m"
    nodes += [helper.make_node("Add", ["scores", mask], ["sm_in"], name="add_mask"),
              helper.make_node("Softmax", ["sm_in"], ["p"], axis=-1, name="sm"),
              helper.make_node("MatMul", ["p", "v"], ["o"], name="mm2")]
    inputs = [("q", "float32", [1, 2, 4, 8]), ("kt", "float32", [1, 2, 8, 4]), ("v", "float32", [1, 2, 4, 8])]
    if padding_input:
        inputs.append(("pad", "float32", [4, 4]))
    outputs = [("o", "float32", None)] + ([("tri", "float32", None)] if mask_also_output else [])
    inits = {"s": np.array(0.5, np.float32), "one": np.array(1, np.int64)}
    return load_model_proto(make_model(nodes, inputs, outputs, inits), batch=None)


def _costs(g):
    prepared = prepare_graph(g, policy("fp16"))
    gc = cost_graph(prepared.graph.nodes, policy("fp16"), 17, graph_inputs=prepared.graph.input_names)
    return prepared.graph, {c.name: c for c in gc.costs}


def test_shape_built_causal_mask_is_free_and_not_read():
    g, costs = _costs(_graph())
    assert {n.name for n in g.nodes if n.attrs.get(CAUSAL_MASK)} == {"fill", "tri"}
    assert costs["fill"].kernels == 0 and costs["tri"].kernels == 0
    fused = costs["mm2"]
    assert fused.kernels == 1 and fused.work.runtime_kernel == "Attention" and fused.work.attention_causal
    # q, k, v at fp16 (3 x 64 elements x 2 bytes), no mask
    assert fused.work.bytes_read == 384 and sum(c.kernels for c in costs.values()) == 1


def test_mask_with_a_padding_input_is_kept_and_read():
    g, costs = _costs(_graph(padding_input=True))
    assert not any(n.attrs.get(CAUSAL_MASK) for n in g.nodes)
    assert costs["fill"].kernels == 1 and costs["with_pad"].kernels == 1
    # q, k, v and the [4, 4] mask at fp16: 384 + 32
    assert costs["mm2"].work.bytes_read == 416


def test_mask_the_graph_also_returns_is_kept():
    g, costs = _costs(_graph(mask_also_output=True))
    assert not any(n.attrs.get(CAUSAL_MASK) for n in g.nodes)  # "tri" is returned: it and its input are built
    assert costs["fill"].kernels == 1 and costs["mm2"].work.bytes_read == 416  # q, k, v and the mask


def test_graph_without_attention_is_returned_as_is():
    g = load_model_proto(make_model([helper.make_node("Softmax", ["x"], ["y"])], [("x", "float32", [2, 3])],
                                    [("y", "float32", None)]), batch=None)
    assert mark_causal_masks(g) is g
