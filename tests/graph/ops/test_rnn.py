"""LSTM, GRU, RNN layers."""
import numpy as np
import pytest

from predictor.graph.ops.rnn import rnn_gate_flops_per_unit
from predictor.types import WorkKind
from tests.helpers import one_node

MM, VEC = WorkKind.MATMUL, WorkKind.VECTOR


def test_bidirectional_lstm_with_bias():
    # S=5, B=2, I=10, H=8, D=2, G=4 (G*H = 32)
    s, b, i, h, d = 5, 2, 10, 8, 2
    work = one_node("LSTM", [("x", "float32", (s, b, i)), ("w", "float32", (d, 32, i)), ("r", "float32", (d, 32, h)),
                             ("bias", "float32", (d, 64))],
                    [("y", "float32", None), ("yh", "float32", None), ("yc", "float32", None)],
                    attrs=dict(hidden_size=h, direction="bidirectional"),
                    initializers={"w": np.zeros((d, 32, i), np.float32), "r": np.zeros((d, 32, h), np.float32),
                                  "bias": np.zeros((d, 64), np.float32)}).work
    # per direction: input GEMM 2*5*2*10*32 = 6400, recurrent GEMM 2*5*2*8*32 = 5120 -> 2 * 11520 = 23040
    assert work.flops[MM] == 23040
    # per unit: 4 combine + 4 bias + 3 sigmoid*6 + 2 tanh*4 + 3 (c) + 1 (h) = 38; 2*5*2*8 units -> 6080
    assert work.flops[VEC] == 6080
    assert work.kernels == 2 * (1 + 2 * 5)  # per direction: input GEMM + recurrent GEMM and cell kernel per step
    x_b, w_b, r_b, bias_b = 400, 2560, 2048, 512
    out_b = (5 * 2 * 2 * 8 + 2 * 2 * 8 + 2 * 2 * 8) * 4  # Y + Y_h + Y_c = 896
    workspace = d * s * b * 32 * 4  # gate pre-activations 2560
    h_reads = d * s * b * h * 4  # 640
    assert work.bytes_read == x_b + w_b + bias_b + s * r_b + workspace + h_reads  # 16912
    assert work.bytes_written == out_b + workspace  # 3456
    assert work.weight_bytes == w_b + s * r_b + bias_b  # R re-read by every step: 13312
    assert work.input_bytes["r"] == s * r_b


def test_gru_forward_without_bias_layout_1():
    # layout 1: X [B, S, I] = [3, 4, 6]; H = 5, G = 3
    work = one_node("GRU", [("x", "float32", (3, 4, 6)), ("w", "float32", (1, 15, 6)), ("r", "float32", (1, 15, 5))],
                    [("y", "float32", None)], attrs=dict(hidden_size=5, layout=1), opset=14).work
    assert work.flops[MM] == 2 * 4 * 3 * 6 * 15 + 2 * 4 * 3 * 5 * 15  # 4320 + 3600 = 7920
    assert work.flops[VEC] == 4 * 3 * 5 * (3 + 21)  # 3 combine + 2*6 + 4 + 1 + 4 gate maths: 1440
    assert work.kernels == 1 + 2 * 4


def test_reverse_rnn_relu():
    work = one_node("RNN", [("x", "float32", (7, 1, 4)), ("w", "float32", (1, 16, 4)), ("r", "float32", (1, 16, 16)),
                            ("bias", "float32", (1, 32))],
                    [("y", "float32", None)],
                    attrs=dict(hidden_size=16, direction="reverse", activations=["Relu"])).work
    assert work.flops[MM] == 2 * 7 * 1 * 4 * 16 + 2 * 7 * 1 * 16 * 16  # 896 + 3584 = 4480
    assert work.flops[VEC] == 7 * 16 * (1 + 1 + 1)  # combine, bias, relu: 336
    assert work.kernels == 1 + 2 * 7


@pytest.mark.parametrize("op, bias, expected", [
    ("LSTM", True, 38), ("LSTM", False, 34), ("GRU", True, 27), ("GRU", False, 24), ("RNN", True, 6),
    ("RNN", False, 5),
])
def test_gate_flops_table(op, bias, expected):
    assert rnn_gate_flops_per_unit(op, bias) == expected


def test_lstm_fp16_bytes_halve():
    args = ([("x", "float32", (5, 2, 10)), ("w", "float32", (1, 32, 10)), ("r", "float32", (1, 32, 8))],
            [("y", "float32", None)])
    w32 = one_node("LSTM", *args, attrs=dict(hidden_size=8)).work
    w16 = one_node("LSTM", *args, attrs=dict(hidden_size=8), precision="fp16").work
    assert w16.bytes_read * 2 == w32.bytes_read
    assert w16.flops == w32.flops
