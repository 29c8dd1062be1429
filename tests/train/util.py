"""Helpers of the training tests: tiny ONNX graphs through the real loader and the training pipeline."""
from __future__ import annotations

import numpy as np
from onnx import helper

from predictor.graph.loader import load_model_proto
from predictor.machine.profile import load_profile
from predictor.precision import policy
from predictor.predict import predict_graph
from predictor.train.context import BackwardContext
from predictor.train.step import plan_step, predict_training_graph
from tests.helpers import make_model


def graph_of(nodes, inputs, outputs, inits=None, opset=17, batch=None):
    return load_model_proto(make_model(nodes, inputs, outputs, inits, opset), batch=batch)


def plan(graph, precision="fp32", optimizer="adamw", impl="fused", loss="mse", gpu="v100"):
    prof = load_profile(gpu)
    fwd = predict_graph(graph, prof, precision)
    return plan_step(graph, fwd.ops, policy(precision), optimizer, impl, loss)


def train(graph, precision="fp32", gpu="v100", **kw):
    return predict_training_graph(graph, load_profile(gpu), precision, **kw)


def kernels_of(p, source: str) -> dict:
    """{kind: kernel} of the backward kernels of forward node ``source``."""
    return {k.kind: k for k in p.backward if k.source == source}


def rng_w(*shape):
    return np.random.default_rng(0).standard_normal(shape).astype(np.float32)


def mlp(n=128, d_in=256, hidden=512, d_out=128):
    """x [n, d_in] -> Gemm(W1 [hidden, d_in], b1) -> Relu -> Gemm(W2 [d_out, hidden], b2) -> y [n, d_out]."""
    nodes = [helper.make_node("Gemm", ["x", "W1", "b1"], ["h1"], transB=1, name="fc1"),
             helper.make_node("Relu", ["h1"], ["r"], name="relu"),
             helper.make_node("Gemm", ["r", "W2", "b2"], ["y"], transB=1, name="fc2")]
    inits = {"W1": rng_w(hidden, d_in), "b1": rng_w(hidden), "W2": rng_w(d_out, hidden), "b2": rng_w(d_out)}
    return graph_of(nodes, [("x", "float32", [n, d_in])], [("y", "float32", None)], inits)


def context(node, work, needs, grad_outs, precision="fp32"):
    return BackwardContext(node, work, policy(precision), tuple(needs), tuple(grad_outs))
