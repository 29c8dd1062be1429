"""LSTM / GRU / RNN backward (cuDNN's backward data per step + whole-sequence weight GEMMs)."""
from onnx import helper

from predictor.types import WorkKind
from tests.train.util import graph_of, kernels_of, plan, rng_w, train

MM, VEC = WorkKind.MATMUL, WorkKind.VECTOR
S, B, I, H = 5, 2, 3, 4   # steps, batch, input, hidden


def _lstm(op="LSTM", first_layer=True):
    g = {"LSTM": 4, "GRU": 3, "RNN": 1}[op]
    nodes = []
    src = "x"
    if not first_layer:  # a linear before the layer: its input needs a gradient
        nodes.append(helper.make_node("MatMul", ["x", "wx"], ["xp"], name="proj"))
        src = "xp"
    nodes.append(helper.make_node(op, [src, "W", "R", "Bias"], ["Y", "Y_h"], hidden_size=H, name="rnn"))
    inits = {"W": rng_w(1, g * H, I), "R": rng_w(1, g * H, H), "Bias": rng_w(1, 2 * g * H)}
    if not first_layer:
        inits["wx"] = rng_w(I, I)
    return graph_of(nodes, [("x", "float32", [S, B, I])], [("Y", "float32", None)], inits)


def test_lstm_backward_kernels_and_flops():
    k = kernels_of(plan(_lstm(first_layer=False)), "rnn")
    assert set(k) == {"bwd_data_steps", "dgrad_x", "wgrad_w", "wgrad_r", "bgrad"}
    steps = k["bwd_data_steps"]
    assert steps.work.kernels == 2 * S                                   # recurrent GEMM + cell per step
    assert steps.work.flops[MM] == 2 * S * B * 4 * H * H                 # 2*5*2*16*4 = 1280
    assert steps.work.flops[VEC] == 2 * S * B * H * 38                   # 2 x forward gates (38 with bias) = 3040
    assert steps.work.input_bytes["R"] == S * 16 * 4 * 4                 # R [1, 16, 4] re-read per step
    assert k["dgrad_x"].work.flops[MM] == 2 * S * B * I * 4 * H          # 960
    assert k["dgrad_x"].work.gemm == (1, S * B, I, 4 * H)
    assert k["wgrad_w"].work.gemm == (1, 4 * H, I, S * B) and k["wgrad_w"].work.flops[MM] == 960
    assert k["wgrad_r"].work.gemm == (1, 4 * H, H, S * B) and k["wgrad_r"].work.flops[MM] == 2 * S * B * H * 4 * H
    assert k["bgrad"].work.flops[VEC] == S * B * 4 * H                   # dgates summed over S x B


def test_first_layer_has_no_input_gradient():
    k = kernels_of(plan(_lstm()), "rnn")
    assert "dgrad_x" not in k and "wgrad_w" in k


def test_gru_and_rnn_have_rules():
    for op, gates in (("GRU", 3), ("RNN", 1)):
        k = kernels_of(plan(_lstm(op)), "rnn")
        assert k["bwd_data_steps"].work.flops[MM] == 2 * S * B * gates * H * H


def test_training_step_of_an_lstm_is_fully_costed():
    pred = train(_lstm(first_layer=False), loss="mse")
    assert not pred.unsupported
    assert pred.phase("backward").kernels > 2 * S


def test_no_largest_batch_claim_when_work_is_missing():
    from predictor.graph.loader import load_model_proto
    from predictor.machine.profile import load_profile
    from predictor.train.step import predict_training_graph
    from tests.helpers import make_model

    def model():
        nodes = [helper.make_node("MatMul", ["x", "w"], ["h"], name="mm"),
                 helper.make_node("Det", ["h"], ["y"], name="det")]   # Det: no cost formula
        m = make_model(nodes, [("x", "float32", [2, 4, 4])], [("y", "float32", None)], {"w": rng_w(4, 4)})
        m.graph.input[0].type.tensor_type.shape.dim[0].dim_param = "batch"
        return m

    g1, g2 = load_model_proto(model(), batch=2), load_model_proto(model(), batch=4)
    pred = predict_training_graph(g1, load_profile("h200"), batch=2, loss="mse", max_batch_graph=g2)
    assert pred.unsupported and pred.memory.max_batch is None
    assert any("largest batch not given" in n for n in pred.notes)
