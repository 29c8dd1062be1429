"""Recurrent-layer backward (LSTM, GRU, RNN) as cuDNN runs it (``cudnnRNNBackwardData`` then
``cudnnRNNBackwardWeights``, PyTorch's ``_cudnn_rnn_backward``), per direction, for the forward of
graph/ops/rnn.py (S steps, batch B, input I, hidden H, G gates):

    data, per step in reverse:  the recurrent data-gradient GEMM dh_{t-1} = R^T dgates_t
                                (2 B G H H FLOPs) and a pointwise cell-backward kernel (the gate
                                derivatives: 2 x the forward's gate FLOPs per unit): 2 kernels per step;
                                R is re-read by every step kernel (S times), as in the forward
    dX   one GEMM over all steps and directions: dgates [S B, D G H] x W -> [S B, I]   2 S B I G H per direction
    dW   one GEMM over all steps: dgates^T x X                                         2 S B I G H
    dR   one GEMM over all steps: dgates^T x h_{t-1} (the saved hidden states Y)        2 S B H G H
    dB   the sum of dgates over S x B: one reduction kernel

so MATMUL = 2 x the forward's, in 2 S + 4 kernels per direction (dX skipped when the input needs no
gradient, the first layer on data; dW/dR/dB when the weights are frozen). The forward in training mode writes
cuDNN's reserve space (the gate activations, and the cell states for LSTM: S B (G H + H) per direction) for
the backward; X, W, R, the initial states and Y are saved. NB: cuDNN's persistent-kernel algorithms (small
hidden sizes) are not modelled, as in the forward.
"""
from __future__ import annotations

from ...graph.ops._common import prod
from ...graph.ops.rnn import GATES, rnn_gate_flops_per_unit
from ..registry import backward

BACKWARD_GATE_FACTOR = 2.0  # the cell's backward does about twice its forward's pointwise work


def _dims(ctx) -> tuple[int, int, int, int, int, int]:
    x, w = ctx.shape(ctx.input(0)), ctx.shape(ctx.input(1))
    g = GATES[ctx.op_type]
    if int(ctx.attr("layout", 0) or 0) == 0:
        s, b, i = x
    else:
        b, s, i = x
    d = w[0]
    h = int(ctx.attr("hidden_size", 0) or 0) or w[1] // g
    return s, b, i, d, h, g


@backward("LSTM", "GRU", "RNN", diff=(0, 1, 2, 3, 5, 6, 7))
def recurrent(ctx):
    s, b, i, d, h, g = _dims(ctx)
    x, w, r = ctx.input(0), ctx.input(1), ctx.input(2)
    y = ctx.output(0) if ctx.node.outputs and ctx.node.outputs[0].name else None
    grads_out = tuple(ctx.grad_out(j) for j in range(len(ctx.node.outputs)) if ctx.grad_out(j) is not None)
    if not grads_out:
        return []
    states = tuple(ctx.input(k) for k in (5, 6) if ctx.has_input(k))
    cell = h if ctx.op_type == "LSTM" else 0
    reserve = ctx.internal("reserve", x.dtype, (d, s, b, g * h + cell))
    ctx.save(x, w, r, y, *states)
    dgates = ctx.temp("dgates", x, shape=(d, s, b, g * h))
    acts = ctx.attr("activations", None) or ("Tanh",)
    per_unit = rnn_gate_flops_per_unit(ctx.op_type, ctx.has_input(3), acts[0], ctx.op_type == "LSTM" and
                                       ctx.has_input(7))
    state_grads = tuple(ctx.grad_in(k) for k in (5, 6) if ctx.has_input(k) and ctx.needs_grad(k))
    hidden = y if y is not None else x
    out = [ctx.kernel("bwd_data_steps", (r, reserve, hidden, *grads_out, *states), (dgates, *state_grads),
                      matmul=d * 2 * s * b * g * h * h, vector=BACKWARD_GATE_FACTOR * d * s * b * h * per_unit,
                      kernels=2 * s * d, times={r.name: float(s)})]
    rows = s * b
    if ctx.needs_grad(0):
        out.append(ctx.kernel("dgrad_x", (dgates, w), (ctx.grad_in(0),), op_type="MatMul",
                              matmul=d * 2 * rows * i * g * h, gemm=(1, rows, i, d * g * h), operands=(dgates, w)))
    if ctx.needs_grad(1):
        out.append(ctx.kernel("wgrad_w", (dgates, x), (ctx.grad_in(1),), op_type="MatMul",
                              matmul=d * 2 * rows * i * g * h, gemm=(d, g * h, i, rows), operands=(dgates, x)))
    if ctx.needs_grad(2):
        out.append(ctx.kernel("wgrad_r", (dgates, hidden), (ctx.grad_in(2),), op_type="MatMul",
                              matmul=d * 2 * rows * h * g * h, gemm=(d, g * h, h, rows), operands=(dgates, hidden)))
    if ctx.has_input(3) and ctx.needs_grad(3):
        out.append(ctx.kernel("bgrad", (dgates,), (ctx.grad_in(3),), op_type="ReduceSum",
                              vector=prod(ctx.shape(dgates))))
    return out
