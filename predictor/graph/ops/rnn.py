"""Recurrent layers: LSTM, GRU, RNN (one ONNX node = one layer, 1 or 2 directions).

Shapes: X [S, B, I] (``layout`` 0) or [B, S, I] (``layout`` 1); W [D, G*H, I]; R [D, G*H, H];
B [D, 2*G*H]; gates G = 4 (LSTM), 3 (GRU), 1 (RNN); D = 2 when bidirectional.

Per direction (cuDNN's scheme: one GEMM over all time steps for the input projection, then a
recurrent step per time step):

    MATMUL  input GEMM      2 * S * B * I * G*H
            recurrent GEMM  2 * S * B * H * G*H
    VECTOR  per hidden unit per step (S * B * H of them):
            G adds to combine the two GEMM results, G bias adds (if B is given; cuDNN pre-sums
            W's and R's biases), plus the gate maths:
              LSTM 3 sigmoid + 2 tanh = 3*6 + 2*4 = 26; c = f*c + i*g = 3; h = o*tanh(c) = 1 -> 30
                   (+6 for peepholes: 3 FMAs)
              GRU  2 sigmoid + 1 tanh = 2*6 + 4 = 16; r * (R_n h) = 1; h = (1-z)*n + z*h = 4 -> 21
              RNN  the activation (Tanh 4, Relu 1, Sigmoid 6)
            so LSTM 4 + 4 + 30 = 38 with bias (34 without), GRU 3 + 3 + 21 = 27 (24), RNN 6 (5).

Kernels per direction: 1 input GEMM + 2 per step (cuDNN's standard algorithm: a recurrent GEMM/GEMV and
a pointwise cell kernel per step, as the H200 profiles of PyTorch's LSTM and GRU show at every precision;
its persistent algorithm, one kernel, is not modelled). Stacked layers overlap across streams: see the
``stacked_rnn`` runtime pattern (graph/runtime.py).

Bytes beyond the compulsory ones:
* R is re-read by every step kernel: weights are read once per kernel invocation, so R counts
  S times per direction (W once, by the input GEMM). weight_bytes = W + S*R + B (+P), those of
  them that are initializers (the rule in ``_common``, from the per-input reads).
* the input GEMM's gate pre-activations (S * B * G*H per direction) are written to a workspace
  and read back by the step kernels.
* each step reads the previous hidden state (B * H).
NB: ``sequence_lens`` is ignored (every sequence runs all S steps); ``clip``, and GRU's
``linear_before_reset`` do not change the count.
"""
from __future__ import annotations

from ...types import OpWork
from ..context import OpContext
from ._common import SIGMOID, TANH, attr, in_elem_bytes, input_reads, register, with_input_reads

GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}
GATE_MATH_FLOPS = {"LSTM": 3 * SIGMOID + 2 * TANH + 3 + 1, "GRU": 2 * SIGMOID + TANH + 1 + 4}
RNN_ACTIVATION_FLOPS = {"tanh": TANH, "relu": 1, "sigmoid": SIGMOID}
PEEPHOLE_FLOPS = 6
STEP_KERNELS = 2  # recurrent GEMM + pointwise cell kernel per time step (cuDNN standard algorithm)


def is_bidirectional_rnn(node) -> bool:
    """An LSTM/GRU/RNN node with ``direction="bidirectional"``."""
    if node.op_type not in GATES:
        return False
    d = node.attrs.get("direction", "forward")
    return (d.decode() if isinstance(d, bytes) else str(d)) == "bidirectional"


def rnn_gate_flops_per_unit(op_type: str, has_bias: bool, activation: str = "Tanh",
                            peephole: bool = False) -> int:
    """VECTOR FLOPs per hidden unit per time step (see the module docstring)."""
    g = GATES[op_type]
    if op_type == "RNN":
        math = RNN_ACTIVATION_FLOPS.get(activation.lower(), TANH)
    else:
        math = GATE_MATH_FLOPS[op_type]
    return g + (g if has_bias else 0) + math + (PEEPHOLE_FLOPS if peephole else 0)


@register("LSTM", "GRU", "RNN", cls="rnn", autocast="low", recurrent=True)
def recurrent(ctx: OpContext) -> OpWork:
    """LSTM/GRU/RNN layer: see the module docstring for the arithmetic."""
    op = ctx.node.op_type
    g = GATES[op]
    x = ctx.in_shape(0)
    if int(attr(ctx, "layout", 0)) == 0:
        s, b, i = x[0], x[1], x[2]
    else:
        b, s, i = x[0], x[1], x[2]
    w = ctx.in_shape(1)
    d = w[0]
    h = int(attr(ctx, "hidden_size", 0) or 0) or w[1] // g
    has_bias = ctx.has_input(3)
    acts = attr(ctx, "activations", None) or ("Tanh",)
    peephole = op == "LSTM" and ctx.has_input(7)
    per_unit = rnn_gate_flops_per_unit(op, has_bias, acts[0], peephole)

    matmul = d * (2 * s * b * i * g * h + 2 * s * b * h * g * h)
    vector = d * s * b * h * per_unit
    e = in_elem_bytes(ctx, 0)
    r_bytes = ctx.in_bytes(2)
    workspace = d * s * b * g * h * e  # gate pre-activations: written by the input GEMM, read per step
    h_reads = d * s * b * h * e
    bytes_read = ctx.all_in_bytes() + (s - 1) * r_bytes + workspace + h_reads
    bytes_written = ctx.all_out_bytes() + workspace
    work = ctx.work(matmul_flops=matmul, vector_flops=vector, kernels=d * (1 + STEP_KERNELS * s),
                    bytes_read=bytes_read, bytes_written=bytes_written, notes=("sequence_lens ignored",))
    return with_input_reads(work, input_reads(ctx, {2: s * r_bytes}))
