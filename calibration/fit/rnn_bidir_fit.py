"""``rnn_bidir_overlap``: how much of a bidirectional RNN layer's two directions run at once (CPU only).

cuDNN runs the forward and backward directions of a bidirectional LSTM/GRU layer on two streams. Their step
kernels are small (latency-bound at these sizes), so one direction's fixed costs (t0 and graph gaps) largely hide
under the other's while their bodies (bytes and FLOPs) still add. The share hidden, per measured one-layer
bidirectional call of microbenchmark run 7 (``rnn_bidir``: LSTM/GRU, hidden 256-1024, batch 1/32, sequence 32,
fp32/tf32/fp16/bf16), is (predicted without overlap - measured) / (half the layer's fixed costs) with the fitted
``rnn`` / ``rnn_gemv`` classes; the parameter is the median over calls, within [0, 0.95]. The stacked (two-layer)
calls are not used: a bidirectional layer cannot overlap the next (graph/runtime.py ``stacked_rnn``).
Ignores: the per-shape spread of the share (its quartiles are reported), contention between the directions' bodies.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from predictor.fitted import FittedCalibration
from predictor.graph.cost import cost_graph
from predictor.graph.traffic import traffic_for
from predictor.precision import policy
from predictor.types import DEFAULT_OPSET, Node, TensorInfo, frozen_map

from .micro_fit import MICROBENCH, microbench_rows, row_params

FAMILY = "rnn_bidir"


def bidir_rnn_node(p: dict) -> Node:
    """One bidirectional layer of the microbenchmark's nn.LSTM / nn.GRU: X [seq, batch, input], W/R/B for two
    directions as initializers."""
    gates = {"lstm": 4, "gru": 3}[p["op"]]
    s, b, i, h = p["seq"], p["batch"], p["input"], p["hidden"]
    ins = (TensorInfo("x", "float32", (s, b, i)), TensorInfo("w", "float32", (2, gates * h, i), True),
           TensorInfo("r", "float32", (2, gates * h, h), True), TensorInfo("b", "float32", (2, 2 * gates * h), True))
    return Node(name="op", op_type=p["op"].upper(), domain="", inputs=ins, outputs=(TensorInfo("y", "float32", (s, 2, b, h)),),
                attrs=frozen_map({"hidden_size": h, "direction": "bidirectional"}))


def fit_rnn_bidir_overlap(doc: dict, profile, log=print, root: Path = MICROBENCH) -> dict | None:
    """{"value", "samples", "quartiles", "median", "at_bound"} of rnn_bidir_overlap from ``doc``'s fitted classes, or None without data."""
    cal = FittedCalibration({**doc, "rnn_bidir_overlap": 0.0})
    traffic = traffic_for(profile)
    shares = []
    for r in microbench_rows((FAMILY,), root):
        p = row_params(r)
        if p.get("layers") != 1 or not p.get("bidirectional") or r["precision"] not in ("fp32", "tf32", "fp16", "bf16"):
            continue
        node = bidir_rnn_node(p)
        pol = policy(r["precision"])
        cost = cost_graph([node], pol, DEFAULT_OPSET, traffic, frozenset({"x"})).costs[0]
        pred = cal.predict_op(node, cost, profile, pol)
        n_kernels = cost.kernels + sum(h.count_for(node) for h in cal.hidden_kernels(node, pol.name))
        fixed = pred.level_time_s["latency"] + n_kernels * cal.kernel_gap_s
        shares.append((pred.time_s - float(r["time_s"])) / (0.5 * fixed))
    if not shares:
        return None
    value = float(min(max(np.median(shares), 0.0), 0.95))
    q = (float(np.percentile(shares, 25)), float(np.percentile(shares, 75)))
    log(f"rnn_bidir_overlap: {value:.3f} from {len(shares)} one-layer bidirectional calls (quartiles "
        f"{q[0]:.2f} / {q[1]:.2f})")
    return {"value": value, "samples": len(shares), "quartiles": q, "median": float(np.median(shares)),
            "at_bound": value >= 0.95}
