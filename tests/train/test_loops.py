"""train/loops.py: a training step over a Loop or Scan body runs every iteration's forward and backward."""
import numpy as np
from onnx import TensorProto, helper

from predictor.graph.loader import load_model_proto
from predictor.machine.profile import load_profile
from predictor.train import predict_training_graph
from tests.helpers import make_model

H = 256


def _vi(name, elem=TensorProto.FLOAT, shape=(64, H)):
    return helper.make_tensor_value_info(name, elem, list(shape))


def _loop_model(trips):
    """h_{t+1} = tanh(h_t @ W) for ``trips`` iterations from the input x[64, 256], then y = h_T @ W2."""
    body = helper.make_graph([helper.make_node("Identity", ["cond_in"], ["cond_out"]),
                              helper.make_node("MatMul", ["h_in", "w"], ["mm"]),
                              helper.make_node("Tanh", ["mm"], ["h_out"])],
                             "body", [_vi("iter", TensorProto.INT64, ()), _vi("cond_in", TensorProto.BOOL, ()),
                                      _vi("h_in")], [_vi("cond_out", TensorProto.BOOL, ()), _vi("h_out")])
    nodes = [helper.make_node("Constant", [], ["M"], value=helper.make_tensor("m", TensorProto.INT64, [], [trips])),
             helper.make_node("Loop", ["M", "", "x"], ["h"], name="loopy", body=body),
             helper.make_node("MatMul", ["h", "w2"], ["y"], name="head")]
    return make_model(nodes, [("x", "float32", [64, H])], [("y", "float32", None)],
                      {"w": np.zeros((H, H), np.float32), "w2": np.zeros((H, 10), np.float32)})


def _train(model):
    return predict_training_graph(load_model_proto(model), load_profile("h200"))


def _kernels(pred, phase, name_part):
    return sum(o.cost.kernels for o, ph in zip(pred.ops, pred.op_phases) if ph == phase and name_part in o.cost.name)


def test_forward_and_backward_run_every_iteration():
    one, five = _train(_loop_model(1)), _train(_loop_model(5))
    # forward: the body's MatMul and Tanh once per iteration
    assert _kernels(one, "forward", "loopy/body/") == 2 and _kernels(five, "forward", "loopy/body/") == 10
    body_flops = 2 * 64 * H * H
    mm = [o for o, ph in zip(five.ops, five.op_phases) if ph == "forward" and o.cost.name == "loopy/body/MatMul_1"]
    assert mm[0].cost.total_flops == 5 * body_flops
    # backward: one iteration has only dW (x is data); five iterations chain through h, so each has dA and dW,
    # and the Tanh backward; the 5 weight gradients are summed by 4 Adds of W's 65,536 floats
    assert _kernels(one, "backward", "loopy/body/MatMul_1::dA") == 0
    assert _kernels(five, "backward", "loopy/body/MatMul_1::dA") == 5
    assert _kernels(five, "backward", "loopy/body/MatMul_1::dB") == 5
    assert _kernels(five, "backward", "loopy/body/Tanh_2::bwd") == 5
    (acc,) = [o for o in five.ops if o.cost.name == "loopy/body/MatMul_1::accumulate_iterations::w"]
    assert acc.cost.kernels == 4 and acc.cost.total_flops == 4 * H * H       # one add per element, 4 times
    assert not five.unsupported
    assert any("forward and backward kernels repeated per iteration" in n for n in five.notes)
    # loss 4 + head 2 + body: (Tanh, dW) once, or (Tanh, dA, dW) x 5 + 4 accumulations
    assert one.phase("backward").kernels == 4 + 2 + 2 and five.phase("backward").kernels == 4 + 2 + 15 + 4


def test_every_iteration_keeps_its_activations():
    """Five iterations keep five copies of the body's two [64, 256] float32 activations (mm and h, 64 KiB
    each) for the backward: 640 KiB of activations at the peak, the end of the forward."""
    five = _train(_loop_model(5))
    assert five.memory.peak_at == "forward: loopy/body/Tanh_2"
    assert five.memory.components["activations"] == 5 * 2 * 64 * H * 4


def test_scan_body_backward_runs_per_step():
    """A Scan over a [6, 64, 256] sequence: s_{t+1} = tanh(s_t @ W + x_t); 6 steps of forward and backward."""
    body = helper.make_graph([helper.make_node("MatMul", ["s_in", "w"], ["mm"]),
                              helper.make_node("Add", ["mm", "x_t"], ["pre"]),
                              helper.make_node("Tanh", ["pre"], ["s_out"])],
                             "body", [_vi("s_in"), _vi("x_t")], [_vi("s_out")])
    scan = helper.make_node("Scan", ["s0", "seq"], ["s_T"], name="scanny", body=body, num_scan_inputs=1)
    head = helper.make_node("MatMul", ["s_T", "w2"], ["y"], name="head")
    m = make_model([scan, head], [("s0", "float32", [64, H]), ("seq", "float32", [6, 64, H])],
                   [("y", "float32", None)], {"w": np.zeros((H, H), np.float32),
                                              "w2": np.zeros((H, 10), np.float32)})
    pred = _train(m)
    assert _kernels(pred, "forward", "scanny/body/MatMul") == 6
    assert _kernels(pred, "backward", "scanny/body/MatMul_0::dA") == 6
    assert _kernels(pred, "backward", "scanny/body/MatMul_0::dB") == 6
    assert not pred.unsupported


def test_graph_without_control_flow_is_unchanged():
    m = make_model([helper.make_node("MatMul", ["x", "w"], ["y"])], [("x", "float32", [64, H])],
                   [("y", "float32", None)], {"w": np.zeros((H, H), np.float32)})
    pred = _train(m)
    assert not any("Loop/Scan" in n for n in pred.notes)
    assert _kernels(pred, "backward", "::dB") == 1
