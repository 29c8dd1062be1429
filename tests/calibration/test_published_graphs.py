"""The graphs of NeuSight's transformers: the eager kernels of each model, with exact matmul FLOPs."""
from collections import Counter

import pytest

from calibration.evaluate.published_graphs import CONFIGS, build
from predictor.graph.loader import load_model_proto
from predictor.machine.profile import load_profile
from predictor.precision import policy
from predictor.graph.cost import cost_graph
from predictor.graph.traffic import traffic_for
from predictor.types import WorkKind


def _costs(name, seq, batch, training=False):
    g = load_model_proto(build(name, seq, training), batch=batch)
    gc = cost_graph(g.nodes, policy("fp32"), g.opset, traffic_for(load_profile("h200")),
                    frozenset(t.name for t in g.inputs))
    assert not gc.not_costed
    return g, gc.costs


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_matmul_flops_are_the_models(name):
    c, s, b = CONFIGS[name], 16, 2
    _, costs = _costs(name, s, b)
    mm = sum(x.work.flops.get(WorkKind.MATMUL, 0) for x in costs)
    t, d = b * s, c.hidden
    layer = 2 * t * (4 * d * d + 2 * d * c.ffn) + 2 * 2 * b * s * s * d   # projections + QK^T and PV
    head = 2 * b * (d * d + d * 2) if c.family == "bert" else 2 * t * d * c.vocab
    assert mm == c.layers * layer + head


def test_kernels_per_layer_are_the_eager_ones():
    # GPT-2: ln, q/k/v gemms (3), head copies (3), QK^T, div, where, softmax, PV, merge copy, out gemm, add, ln,
    # fc1, 8 gelu_new kernels, fc2, add = 27 (dropouts free in inference)
    _, costs = _costs("gpt2_large", 16, 1)
    per_layer = Counter(x.name.split(".")[0].lstrip("/") for x in costs if x.kernels and "layer" in x.name)
    assert set(per_layer.values()) == {27}
    # BERT (post-norm): q/k/v gemms, head copies, QK^T, div, + mask, softmax, PV, merge copy, out gemm, add, ln,
    # fc1, one Gelu kernel, fc2, add, ln = 20
    _, costs = _costs("bert_large", 16, 1)
    per_layer = Counter(x.name.split(".")[0].lstrip("/") for x in costs if x.kernels and "layer" in x.name)
    assert set(per_layer.values()) == {20}


def test_dropout_is_free_in_inference_and_a_kernel_in_training():
    from predictor.fitted import bundled_calibration
    from predictor.train import predict_training_graph

    prof = load_profile("h200")
    g = load_model_proto(build("opt_13", 16, training=True), batch=1)
    step = predict_training_graph(g, prof, "fp32", bundled_calibration(prof), batch=1, loss="cross_entropy")
    drops = [o for o, ph in zip(step.ops, step.op_phases) if ph == "forward" and o.cost.op_type == "Dropout"]
    assert len(drops) == 2 * CONFIGS["opt_13"].layers and all(o.cost.kernels == 1 for o in drops)
    _, costs = _costs("opt_13", 16, 1)
    assert all(x.kernels == 0 for x in costs if x.op_type == "Dropout")


def test_unknown_model_is_named():
    with pytest.raises(KeyError, match="unknown NeuSight model 'gpt5'"):
        build("gpt5", 16)
