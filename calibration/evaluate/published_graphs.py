"""ONNX graphs of the transformers in NeuSight's published measurements (calibration/data/published/neusight.csv).

NeuSight (Lee, Phanishayee, Mahajan, ASPLOS 2025) timed HuggingFace models built from config files
(``scripts/asplos/data/DLmodel_configs/*.json`` of its artifact): PyTorch 2.1 eager, ``attn_implementation="eager"``,
fp32 (``neusight/Tracing/trace.py``: TF32 off), inference under ``torch.no_grad()`` in ``eval()`` and training as the
forward in ``train()`` plus ``loss.backward()`` of a cross entropy over the logits. The graphs here are written
with ``onnx.helper`` (no weights: the initializers are external data that is never written or read) so that each
node is one kernel of that eager program:

* a ``Linear``/``Conv1D`` with bias is one ``Gemm`` on the [B*S, d] view (cuBLASLt's bias epilogue, one kernel);
* ``view``/``permute`` are free, and the copies ``torch.matmul``/``contiguous`` make of permuted heads are the
  ``Transpose`` nodes (q, k, v and the merged heads: 4 per layer);
* the scores get the eager chain of the model: BERT ``/ sqrt(d)``, ``+ mask``; GPT-2 ``/ sqrt(d)``,
  ``where(causal, s, min)``; OPT ``q * scale`` before the product, ``+ mask``, ``max(s, min)``; then softmax;
* BERT's GELU is one kernel (``Gelu``); GPT-2's ``gelu_new`` is the 8 elementwise kernels its Python formula runs;
* every ``nn.Dropout`` is a ``Dropout`` node (identity in inference, a kernel in a training step);
* heads: BERT inference runs ``BertForSequenceClassification`` (pooler + 2-way classifier), BERT training
  ``BertForPreTraining``'s masked-LM head (the loss reads only its logits); GPT-2/OPT the LM head over every position.

GPT-2's fused QKV projection is written as three Gemms of a third of its width each (same FLOPs; the eager
``split`` is a view, so no copy is added for it). Ignores: the tiny mask/position kernels (``ones``, ``cumsum``,
``arange``) and the NSP head of pretraining (a 1024 x 2 product on B rows).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ARTIFACT = "https://github.com/trsharm25/NeuSight/blob/bca31fb12ae6efe168efc5d3d274e032c9c86b6e"
OPSET = 20  # Gelu


@dataclass(frozen=True)
class TransformerConfig:
    """A model of NeuSight's ``DLmodel_configs`` (HuggingFace config fields)."""

    name: str
    family: str  # bert | gpt2 | opt
    layers: int
    hidden: int
    heads: int
    ffn: int
    vocab: int

    @property
    def source(self) -> str:
        return f"{ARTIFACT}/scripts/asplos/data/DLmodel_configs/{self.name}.json"


CONFIGS = {c.name: c for c in (
    TransformerConfig("bert_large", "bert", 24, 1024, 16, 4096, 30522),
    TransformerConfig("gpt2_large", "gpt2", 36, 1280, 20, 5120, 50257),  # n_inner unset: 4 x n_embd
    TransformerConfig("gpt3_xl", "gpt2", 24, 3072, 24, 12288, 50257),
    TransformerConfig("gpt3_27", "gpt2", 32, 2560, 32, 10240, 50257),
    TransformerConfig("opt_13", "opt", 24, 2048, 32, 8192, 50272),
)}


class _Builder:
    """Nodes and weightless initializers of one graph; batch axis symbolic, sequence fixed."""

    def __init__(self, cfg: TransformerConfig, seq: int):
        self.cfg, self.seq = cfg, seq
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self._offset = 0
        self._n = 0

    def _name(self, tag: str) -> str:
        self._n += 1
        return f"{tag}_{self._n}"

    def weight(self, tag: str, shape: tuple[int, ...]) -> str:
        """An fp32 weight as external data that is never written (the loader needs shapes only)."""
        name = self._name(tag)
        t = onnx.TensorProto()
        t.name, t.data_type = name, TensorProto.FLOAT
        t.dims.extend(shape)
        t.data_location = TensorProto.EXTERNAL
        nbytes = int(np.prod(shape)) * 4
        for k, v in (("location", "weights.bin"), ("offset", str(self._offset)), ("length", str(nbytes))):
            e = t.external_data.add()
            e.key, e.value = k, v
        self._offset += nbytes
        self.inits.append(t)
        return name

    def const(self, tag: str, array: np.ndarray) -> str:
        name = self._name(tag)
        self.inits.append(numpy_helper.from_array(array, name))
        return name

    def op(self, op_type: str, inputs: list[str], tag: str, **attrs) -> str:
        out = self._name(tag)
        self.nodes.append(helper.make_node(op_type, inputs, [out], name=f"/{tag}/{op_type}_{self._n}", **attrs))
        return out

    def shape(self, dims: list[int]) -> str:
        return self.const("shape", np.asarray(dims, dtype=np.int64))

    # -- layers ----------------------------------------------------------------------------------
    def linear(self, x2d: str, d_in: int, d_out: int, tag: str, bias: bool = True) -> str:
        """nn.Linear / Conv1D on the [B*S, d_in] view: one GEMM kernel (bias in its epilogue)."""
        w = self.weight(f"{tag}.w", (d_in, d_out))
        if not bias:
            return self.op("MatMul", [x2d, w], tag)
        return self.op("Gemm", [x2d, w, self.weight(f"{tag}.b", (d_out,))], tag)

    def layer_norm(self, x: str, tag: str) -> str:
        d = self.cfg.hidden
        return self.op("LayerNormalization", [x, self.weight(f"{tag}.g", (d,)), self.weight(f"{tag}.b", (d,))],
                       tag, axis=-1)

    def dropout(self, x: str, tag: str) -> str:
        return self.op("Dropout", [x, self.const("p", np.array(0.1, np.float32))], tag)

    def heads(self, x2d: str, tag: str, keys: bool = False) -> str:
        """[B*S, d] -> [B, H, S, dh] (keys: [B, H, dh, S]): the copy matmul/contiguous makes of permuted heads."""
        c = self.cfg
        r = self.op("Reshape", [x2d, self.shape([-1, self.seq, c.heads, c.hidden // c.heads])], f"{tag}.view")
        return self.op("Transpose", [r], f"{tag}.heads", perm=[0, 2, 3, 1] if keys else [0, 2, 1, 3])

    def merge(self, ctx: str, tag: str) -> str:
        t = self.op("Transpose", [ctx], f"{tag}.merge", perm=[0, 2, 1, 3])
        return self.op("Reshape", [t, self.shape([-1, self.cfg.hidden])], f"{tag}.view2d")

    def attention(self, x2d: str, tag: str) -> str:
        """Eager self-attention of the family on [B*S, d]; returns the output projection's input [B*S, d]."""
        c, s = self.cfg, self.seq
        dh = c.hidden // c.heads
        q = self.linear(x2d, c.hidden, c.hidden, f"{tag}.q")
        if c.family == "opt":
            q = self.op("Mul", [q, self.const("scale", np.array(dh ** -0.5, np.float32))], f"{tag}.q_scale")
        k = self.linear(x2d, c.hidden, c.hidden, f"{tag}.k")
        v = self.linear(x2d, c.hidden, c.hidden, f"{tag}.v")
        scores = self.op("MatMul", [self.heads(q, f"{tag}.q"), self.heads(k, f"{tag}.k", keys=True)], f"{tag}.qk")
        if c.family == "bert":
            scores = self.op("Div", [scores, self.const("sqrt_d", np.array(math.sqrt(dh), np.float32))], f"{tag}.div")
            scores = self.op("Add", [scores, self.const("mask", np.zeros((1, 1, 1, s), np.float32))], f"{tag}.mask")
        elif c.family == "gpt2":
            scores = self.op("Div", [scores, self.const("sqrt_d", np.array(math.sqrt(dh), np.float32))], f"{tag}.div")
            causal = self.const("causal", np.tril(np.ones((1, 1, s, s), bool)))
            scores = self.op("Where", [causal, scores, self.const("min", np.array(np.finfo(np.float32).min,
                                                                                   np.float32))], f"{tag}.causal")
        else:  # opt: + causal mask, then max(scores, finfo.min)
            scores = self.op("Add", [scores, self.const("mask", np.zeros((1, 1, s, s), np.float32))], f"{tag}.mask")
            scores = self.op("Max", [scores, self.const("min", np.array(np.finfo(np.float32).min, np.float32))],
                             f"{tag}.max")
        probs = self.op("Softmax", [scores], f"{tag}.softmax", axis=-1)
        if c.family != "opt":  # OPT's attention dropout is 0.0
            probs = self.dropout(probs, f"{tag}.attn_drop")
        ctx = self.op("MatMul", [probs, self.heads(v, f"{tag}.v")], f"{tag}.pv")
        return self.merge(ctx, tag)

    def mlp(self, x2d: str, tag: str) -> str:
        c = self.cfg
        h = self.linear(x2d, c.hidden, c.ffn, f"{tag}.fc1")
        if c.family == "bert":
            h = self.op("Gelu", [h], f"{tag}.gelu")
        elif c.family == "opt":
            h = self.op("Relu", [h], f"{tag}.relu")
        else:
            h = self.gelu_new(h, tag)
        return self.linear(h, c.ffn, c.hidden, f"{tag}.fc2")

    def gelu_new(self, x: str, tag: str) -> str:
        """0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))): eight eager kernels."""
        f = lambda v: self.const("c", np.array(v, np.float32))  # noqa: E731
        half = self.op("Mul", [x, f(0.5)], f"{tag}.act")
        cube = self.op("Pow", [x, f(3.0)], f"{tag}.act")
        inner = self.op("Add", [x, self.op("Mul", [cube, f(0.044715)], f"{tag}.act")], f"{tag}.act")
        t = self.op("Tanh", [self.op("Mul", [inner, f(math.sqrt(2.0 / math.pi))], f"{tag}.act")], f"{tag}.act")
        return self.op("Mul", [half, self.op("Add", [t, f(1.0)], f"{tag}.act")], f"{tag}.act")


def build(name: str, seq: int, training: bool = False) -> onnx.ModelProto:
    """The eager program of NeuSight's model ``name`` at sequence ``seq``: input_ids [batch, seq] int64.
    ``training``: the model NeuSight trains (BERT: the pretraining head); the graph's output is what the loss
    reads (logits), and Dropout nodes run in a training step."""
    if name not in CONFIGS:
        raise KeyError(f"unknown NeuSight model {name!r} (known: {', '.join(CONFIGS)})")
    c = CONFIGS[name]
    b = _Builder(c, seq)
    d = c.hidden
    ids = "input_ids"
    x = b.op("Gather", [b.weight("wte", (c.vocab, d)), ids], "embed")
    pos = b.const("positions", np.arange(seq, dtype=np.int64).reshape(1, seq))
    x = b.op("Add", [x, b.op("Gather", [b.weight("wpe", (seq, d)), pos], "pos_embed")], "embed_add")
    if c.family == "bert":
        types = b.const("token_types", np.zeros((1, seq), np.int64))
        x = b.op("Add", [x, b.op("Gather", [b.weight("tte", (2, d)), types], "type_embed")], "embed_add")
        x = b.dropout(b.layer_norm(x, "embed_ln"), "embed_drop")
    elif c.family == "gpt2":
        x = b.dropout(x, "embed_drop")
    x = b.op("Reshape", [x, b.shape([-1, d])], "flat")  # [B*S, d] from here on
    for i in range(c.layers):
        p = f"layer{i}"
        if c.family == "bert":  # post-norm
            a = b.dropout(b.linear(b.attention(x, p), d, d, f"{p}.out"), f"{p}.drop1")
            x = b.layer_norm(b.op("Add", [a, x], f"{p}.res1"), f"{p}.ln1")
            m = b.dropout(b.mlp(x, p), f"{p}.drop2")
            x = b.layer_norm(b.op("Add", [m, x], f"{p}.res2"), f"{p}.ln2")
        else:  # pre-norm
            a = b.dropout(b.linear(b.attention(b.layer_norm(x, f"{p}.ln1"), p), d, d, f"{p}.out"), f"{p}.drop1")
            x = b.op("Add", [x, a], f"{p}.res1")
            m = b.dropout(b.mlp(b.layer_norm(x, f"{p}.ln2"), p), f"{p}.drop2")
            x = b.op("Add", [x, m], f"{p}.res2")
    if c.family == "bert" and not training:  # pooler (first token) + classifier
        first = b.op("Reshape", [x, b.shape([-1, seq, d])], "unflat")
        cls = b.op("Gather", [first, b.const("zero", np.array(0, np.int64))], "first_token", axis=1)
        pooled = b.op("Tanh", [b.linear(cls, d, d, "pooler")], "pooler")
        out = b.linear(b.dropout(pooled, "cls_drop"), d, 2, "classifier")
        out_shape = ["batch", 2]
    else:
        if c.family == "bert":  # masked-LM head: transform + decoder with bias
            h = b.layer_norm(b.op("Gelu", [b.linear(x, d, d, "mlm.transform")], "mlm.gelu"), "mlm.ln")
            logits = b.linear(h, d, c.vocab, "mlm.decoder")
        else:
            logits = b.linear(b.layer_norm(x, "ln_f"), d, c.vocab, "lm_head", bias=False)
        out = b.op("Reshape", [logits, b.shape([-1, seq, c.vocab])], "logits")
        out_shape = ["batch", seq, c.vocab]
    b.nodes[-1].output[0] = "logits" if out_shape[-1] == c.vocab else "output"
    graph = helper.make_graph(
        b.nodes, f"{name}-{'train' if training else 'inf'}-{seq}",
        [helper.make_tensor_value_info(ids, TensorProto.INT64, ["batch", seq])],
        [helper.make_tensor_value_info(b.nodes[-1].output[0], TensorProto.FLOAT, out_shape)],
        initializer=b.inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                             producer_name="calibration.evaluate.published_graphs")


__all__ = ["CONFIGS", "TransformerConfig", "build"]
