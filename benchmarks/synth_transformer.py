"""Build a decoder-only transformer ONNX graph from a config, weights as external data that is never written.

Used by the speed and large-model benchmarks: a 7B-parameter model (32 layers, d_model 4096) whose
initializers point into an external file that does not exist, and a 2,000-node stack for timing.
Per layer (27 nodes): LayerNorm, Q/K/V MatMul, Reshape+Transpose x3, QK^T MatMul, scale Mul, mask Add,
Softmax, AV MatMul, Transpose, Reshape, out MatMul, residual Add, LayerNorm, SwiGLU MLP (gate and up
MatMul, Sigmoid, two Mul, down MatMul), residual Add.
"""
from __future__ import annotations

import argparse
from dataclasses import dataclass

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


@dataclass(frozen=True)
class DecoderConfig:
    n_layers: int = 32
    d_model: int = 4096
    n_heads: int = 32
    d_ff: int = 11008
    vocab: int = 32000
    seq: int = 2048
    dynamic_seq: bool = False  # the sequence axis symbolic ("seq"): the graph has no constant sized by it

    @property
    def params(self) -> int:
        per_layer = 4 * self.d_model * self.d_model + 3 * self.d_model * self.d_ff + 4 * self.d_model
        return self.n_layers * per_layer + 2 * self.vocab * self.d_model


def _weight(name: str, shape: tuple[int, ...], offset: int, inline: bool) -> tuple[onnx.TensorProto, int]:
    nbytes = int(np.prod(shape)) * 4
    if inline:
        return numpy_helper.from_array(np.zeros(shape, np.float32) + 0.01, name), offset + nbytes
    t = onnx.TensorProto()
    t.name, t.data_type = name, TensorProto.FLOAT
    t.dims.extend(shape)
    t.data_location = TensorProto.EXTERNAL
    for k, v in (("location", "weights.bin"), ("offset", str(offset)), ("length", str(nbytes))):
        e = t.external_data.add()
        e.key, e.value = k, v
    return t, offset + nbytes


def build_decoder(cfg: DecoderConfig, inline_weights: bool = False) -> onnx.ModelProto:
    d, h, dh = cfg.d_model, cfg.n_heads, cfg.d_model // cfg.n_heads
    nodes, inits = [], []
    off = 0

    def w(name, shape):
        nonlocal off
        t, off = _weight(name, shape, off, inline_weights)
        inits.append(t)
        return name

    def const(name, values):
        inits.append(numpy_helper.from_array(np.asarray(values, dtype=np.int64), name))
        return name

    const("heads_shape", [0, 0, h, dh])
    const("merge_shape", [0, 0, d])
    inits.append(numpy_helper.from_array(np.array(1.0 / np.sqrt(dh), np.float32), "scale"))
    inits.append(numpy_helper.from_array(np.zeros((1, 1, cfg.seq, cfg.seq), np.float32) if inline_weights
                                         else np.zeros((1, 1, 1, 1), np.float32), "mask"))
    nodes.append(helper.make_node("Gather", [w("embed", (cfg.vocab, d)), "input_ids"], ["x0"], name="/embed/Gather"))
    x = "x0"
    for i in range(cfg.n_layers):
        p = f"/layers.{i}"
        ln = lambda src, tag: (nodes.append(helper.make_node(
            "LayerNormalization", [src, w(f"{p}{tag}.g", (d,)), w(f"{p}{tag}.b", (d,))], [f"{p}{tag}.y"],
            axis=-1, name=f"{p}/{tag}/LayerNormalization")), f"{p}{tag}.y")[1]
        a = ln(x, "ln1")
        heads = {}
        for q in ("q", "k", "v"):
            nodes.append(helper.make_node("MatMul", [a, w(f"{p}.{q}.w", (d, d))], [f"{p}.{q}"], name=f"{p}/attn/{q}_proj/MatMul"))
            nodes.append(helper.make_node("Reshape", [f"{p}.{q}", "heads_shape"], [f"{p}.{q}r"], name=f"{p}/attn/{q}/Reshape"))
            perm = [0, 2, 3, 1] if q == "k" else [0, 2, 1, 3]
            nodes.append(helper.make_node("Transpose", [f"{p}.{q}r"], [f"{p}.{q}t"], perm=perm, name=f"{p}/attn/{q}/Transpose"))
            heads[q] = f"{p}.{q}t"
        nodes += [
            helper.make_node("MatMul", [heads["q"], heads["k"]], [f"{p}.s"], name=f"{p}/attn/MatMul"),
            helper.make_node("Mul", [f"{p}.s", "scale"], [f"{p}.ss"], name=f"{p}/attn/Mul"),
            helper.make_node("Add", [f"{p}.ss", "mask"], [f"{p}.sm"], name=f"{p}/attn/Add"),
            helper.make_node("Softmax", [f"{p}.sm"], [f"{p}.pr"], axis=-1, name=f"{p}/attn/Softmax"),
            helper.make_node("MatMul", [f"{p}.pr", heads["v"]], [f"{p}.o"], name=f"{p}/attn/MatMul_1"),
            helper.make_node("Transpose", [f"{p}.o"], [f"{p}.ot"], perm=[0, 2, 1, 3], name=f"{p}/attn/Transpose"),
            helper.make_node("Reshape", [f"{p}.ot", "merge_shape"], [f"{p}.or"], name=f"{p}/attn/Reshape"),
            helper.make_node("MatMul", [f"{p}.or", w(f"{p}.o.w", (d, d))], [f"{p}.op"], name=f"{p}/attn/o_proj/MatMul"),
            helper.make_node("Add", [x, f"{p}.op"], [f"{p}.r1"], name=f"{p}/Add"),
        ]
        m = ln(f"{p}.r1", "ln2")
        nodes += [
            helper.make_node("MatMul", [m, w(f"{p}.gate.w", (d, cfg.d_ff))], [f"{p}.ga"], name=f"{p}/mlp/gate/MatMul"),
            helper.make_node("Sigmoid", [f"{p}.ga"], [f"{p}.sg"], name=f"{p}/mlp/Sigmoid"),
            helper.make_node("Mul", [f"{p}.ga", f"{p}.sg"], [f"{p}.si"], name=f"{p}/mlp/Mul"),
            helper.make_node("MatMul", [m, w(f"{p}.up.w", (d, cfg.d_ff))], [f"{p}.u"], name=f"{p}/mlp/up/MatMul"),
            helper.make_node("Mul", [f"{p}.si", f"{p}.u"], [f"{p}.g"], name=f"{p}/mlp/Mul_1"),
            helper.make_node("MatMul", [f"{p}.g", w(f"{p}.down.w", (cfg.d_ff, d))], [f"{p}.dn"], name=f"{p}/mlp/down/MatMul"),
            helper.make_node("Add", [f"{p}.r1", f"{p}.dn"], [f"{p}.out"], name=f"{p}/Add_1"),
        ]
        x = f"{p}.out"
    nodes.append(helper.make_node("MatMul", [x, w("lm_head", (d, cfg.vocab))], ["logits"], name="/lm_head/MatMul"))
    graph = helper.make_graph(
        nodes, "decoder",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq" if cfg.dynamic_seq else cfg.seq])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT,
                                       ["batch", "seq" if cfg.dynamic_seq else cfg.seq, cfg.vocab])],
        initializer=inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)], producer_name="synth_transformer")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--layers", type=int, default=32)
    ap.add_argument("--d-model", type=int, default=4096)
    ap.add_argument("--heads", type=int, default=32)
    ap.add_argument("--d-ff", type=int, default=11008)
    ap.add_argument("--vocab", type=int, default=32000)
    ap.add_argument("--seq", type=int, default=2048)
    ap.add_argument("--inline-weights", action="store_true", help="store real (constant) weights inside the file")
    ap.add_argument("--dynamic-seq", action="store_true", help="a symbolic sequence axis (for predict serve)")
    a = ap.parse_args(argv)
    cfg = DecoderConfig(a.layers, a.d_model, a.heads, a.d_ff, a.vocab, a.seq, a.dynamic_seq)
    model = build_decoder(cfg, a.inline_weights)
    onnx.save_model(model, a.out)
    print(f"{a.out}: {len(model.graph.node)} nodes, {cfg.params / 1e9:.2f} B parameters")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
