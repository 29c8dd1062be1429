"""16-bit SDPA calls on PyTorch's math path compute in fp32 (predictor/math_attention.py)."""
import numpy as np
from onnx import helper

from predictor.graph.cost import cost_graph
from predictor.graph.loader import load_model_proto
from predictor.math_attention import upcast_math_attention
from predictor.precision import policy
from predictor.predict import prepare_graph
from tests.helpers import make_model


def _graph(q_shape):
    # q (5-D when blocked), k^T, v as the TorchScript exporter writes SDPA: both q and k scaled by sqrt(scale)
    nodes = [
        helper.make_node("Mul", ["q", "s"], ["qs"], name="mq"),
        helper.make_node("Mul", ["kt", "s"], ["ks"], name="mk"),
        helper.make_node("MatMul", ["qs", "ks"], ["scores"], name="mm1"),
        helper.make_node("Softmax", ["scores"], ["p"], axis=-1, name="sm"),
        helper.make_node("MatMul", ["p", "v"], ["o"], name="mm2"),
        helper.make_node("Relu", ["o"], ["y"], name="after"),
    ]
    k_shape = q_shape[:-2] + [q_shape[-1], q_shape[-2]]
    inputs = [("q", "float32", q_shape), ("kt", "float32", k_shape), ("v", "float32", q_shape)]
    model = make_model(nodes, inputs, [("y", "float32", None)], {"s": np.array(0.5, np.float32)})
    return load_model_proto(model, batch=None)


def _costs(g, prec):
    prepared = prepare_graph(g, policy(prec))
    gc = cost_graph(prepared.graph.nodes, policy(prec), 17, graph_inputs=prepared.graph.input_names,
                    node_policies=prepared.node_policy)
    return prepared, {c.name: c for c in gc.costs}


def test_math_path_call_runs_in_fp32_with_casts_at_16_bit():
    g = _graph([1, 2, 3, 4, 8])  # 5-D blocks: the fused kernels refuse them
    prepared, costs = _costs(g, "fp16")
    pols = {n: p.name for n, p in prepared.node_policy.items()}
    assert {n: pols[n] for n in ("mq", "mk", "mm1", "sm", "mm2")} == dict.fromkeys(("mq", "mk", "mm1", "sm", "mm2"), "fp32")
    casts = [n for n in prepared.graph.nodes if n.op_type == "AmpCast"]
    assert len(casts) == 4 and all(pols[c.name] == "fp16" for c in casts)
    # q up-cast: 1*2*3*4*8 = 192 elements read at 2 bytes, written at 4
    q_cast = next(c for c in casts if c.inputs[0].name == "q")
    assert (costs[q_cast.name].work.bytes_read, costs[q_cast.name].work.bytes_written) == (384, 768)
    # the output cast back: 192 fp32 elements read, 192 fp16 written; the next node reads the 16-bit tensor
    out_cast = next(c for c in casts if c.outputs[0].name == "o")
    assert (costs[out_cast.name].work.bytes_read, costs[out_cast.name].work.bytes_written) == (768, 384)
    assert costs["after"].work.bytes_read == 384
    # the scores (1*2*3*4*4 = 96 elements) are written by the first GEMM at 4 bytes
    assert costs["mm1"].work.bytes_written == 384
    assert all(f.precision.value == "fp32" for f in costs["mm1"].flops)


def test_fused_shapes_and_fp32_unchanged():
    fused = _graph([1, 2, 4, 8])  # 4-D: one fused kernel, no casts
    prepared, costs = _costs(fused, "fp16")
    assert not prepared.node_policy and sum(c.kernels for c in costs.values()) == 2
    blocked = _graph([1, 2, 3, 4, 8])
    for prec in ("fp32", "tf32"):  # nothing to cast up
        assert upcast_math_attention(blocked, policy(prec))[0] is blocked


def test_math_path_call_runs_in_fp32_under_autocast():
    """torch.autocast hands an SDPA call 16-bit q, k, v, and the math path computes in fp32: the call's nodes are fp32
    ops, so its fp32 inputs (graph inputs here) need no cast and nothing inside runs at 16 bits (the MatMuls as low
    ops would cast q, k, the scores and v down: 5 kernels); a call the fused kernels take stays one low op."""
    for prec, low in (("amp", "fp16"), ("amp-bf16", "bf16")):
        prepared, costs = _costs(_graph([1, 2, 3, 4, 8]), prec)
        pols = {n: p.name for n, p in prepared.node_policy.items()}
        assert {n: pols[n] for n in ("mq", "mk", "mm1", "sm", "mm2")} == dict.fromkeys(("mq", "mk", "mm1", "sm", "mm2"), "fp32")
        assert not [n for n in prepared.graph.nodes if n.op_type == "AmpCast"]
        assert all(f.precision.value == "fp32" for n in ("mm1", "mm2") for f in costs[n].flops)
        assert costs["mm1"].work.bytes_written == 384  # 96 fp32 scores
        fused, fused_costs = _costs(_graph([1, 2, 4, 8]), prec)
        assert {n: p.name for n, p in fused.node_policy.items()}["mm2"] == low
        assert all(f.precision.value == low for f in fused_costs["mm2"].flops)
