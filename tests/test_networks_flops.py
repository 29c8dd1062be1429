"""The committed real graphs (calibration/data/networks/onnx): every node costed, and whole-network
matmul/conv FLOPs equal to the textbook counts.

Each graph is loaded once per batch size (1 and 32) and costed under fp32, tf32, fp16 and bf16: the
``unsupported`` listing of ``predict`` (ops with no formula, or whose shapes stayed unknown) must be
empty for all of them.

FLOP totals count only the MATMUL work of Conv, ConvTranspose, MatMul, Gemm and Einsum (an FMA is 2
FLOPs), per image or sequence, and must be within 2% of the textbook arithmetic below (written in
MACs, multiply-accumulates; FLOPs = 2 x MACs).
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import pytest

from predictor.graph.context import ShapeUnknown
from predictor.graph.cost import cost_graph, node_work
from predictor.graph.loader import Graph, load
from predictor.precision import policy
from predictor.types import WorkKind

ONNX_DIR = Path(__file__).resolve().parent.parent / "calibration" / "data" / "networks" / "onnx"
FILES = sorted(p.name for p in ONNX_DIR.glob("*.onnx"))
PRECISIONS = ("fp32", "tf32", "fp16", "bf16")
MATMUL_OPS = ("Conv", "ConvTranspose", "MatMul", "Gemm", "Einsum")

pytestmark = pytest.mark.skipif(not FILES, reason="no committed ONNX graphs")


@lru_cache(maxsize=None)
def graph(name: str, batch: int) -> Graph:
    return load(str(ONNX_DIR / name), batch=batch)


def not_costed(g: Graph, precision: str) -> dict[str, int]:
    """``predict``'s ``unsupported`` listing (cost_graph's rule) from the formulas alone, without the
    traffic and runtime-pattern stages that do not change it."""
    pol = policy(precision)
    out: dict[str, int] = {}
    for n in g.nodes:
        try:
            work = node_work(n, pol, g.opset or 21)
        except ShapeUnknown:
            key = f"{n.op_type} (unknown shape)"
        else:
            if work is not None:
                continue
            key = n.op_type if n.domain in ("", "ai.onnx") else f"{n.domain}.{n.op_type}"
        out[key] = out.get(key, 0) + 1
    return out


@pytest.mark.parametrize("batch", [1, 32])
@pytest.mark.parametrize("name", FILES)
def test_every_node_is_shaped_and_costed(name, batch):
    g = graph(name, batch)
    unknown = sorted({n.op_type for n in g.nodes for t in n.outputs if t.name and t.shape is None})
    assert unknown == [], f"{name} at batch {batch}: outputs of unknown shape from {unknown}"
    assert cost_graph(g.nodes, policy("fp32"), g.opset or 21).not_costed == {}
    for p in PRECISIONS:
        assert not_costed(g, p) == {}, f"{name} batch {batch} {p}"


def matmul_flops(g: Graph) -> float:
    pol = policy("fp32")
    return sum(node_work(n, pol, g.opset or 21).flops.get(WorkKind.MATMUL, 0.0)
               for n in g.nodes if n.op_type in MATMUL_OPS)


# ---------------------------------------------------------------------------------- textbook counts
M = 1e6  # MACs, in millions


def _transformer_encoder_macs(tokens: int, layers: int, d: int = 768, d_ff: int = 3072) -> tuple[float, float]:
    """(linear, attention) MACs of a pre/post-norm transformer stack on ``tokens`` tokens.

    Linear per token per layer: Q, K, V and output projections 4*d*d + the MLP 2*d*d_ff;
    BERT-base/GPT-2 small (d 768, d_ff 3072): 4*589,824 + 4,718,592 = 7,077,888 MACs.
    Attention per layer: scores Q K^T tokens*tokens*d + weighted sum P V tokens*tokens*d (all heads).
    """
    linear = layers * tokens * (4 * d * d + 2 * d * d_ff)
    attention = layers * 2 * tokens * tokens * d
    return float(linear), float(attention)


# ResNet-50 at 224x224: 4,089 M MACs in the convolutions (stem 7x7/2: 118.0 M; bottleneck stages
# 3/4/6/3 blocks at 56/28/14/7 pixels: 3,969 M) + fc 2048*1000 = 2.05 M  ->  8.18 GFLOP per image.
RESNET50_GFLOP = 8.18

# BERT-base, 128 tokens, 12 layers, no pooler: linear 12*128*7,077,888 = 10,871.7 M MACs = 21.74 GFLOP;
# attention 12*2*128*128*768 = 302.0 M MACs = 0.60 GFLOP; embeddings are lookups (no MACs).
_BERT_LIN, _BERT_ATT = _transformer_encoder_macs(128, 12)
BERT_GFLOP = 2 * (_BERT_LIN + _BERT_ATT) / 1e9  # 21.74 + 0.60 = 22.35

# GPT-2 small (GPT2Model, no LM head), 128 tokens: the same shapes as BERT-base (12 layers, d 768,
# d_ff 3072; Conv1D = Gemm); the causal mask does not change the dense count: 22.35 GFLOP.
GPT2_GFLOP = BERT_GFLOP

# DistilBERT: 6 layers of BERT-base: 10.87 + 0.30 = 11.17 GFLOP.
_DB_LIN, _DB_ATT = _transformer_encoder_macs(128, 6)
DISTILBERT_GFLOP = 2 * (_DB_LIN + _DB_ATT) / 1e9

# ViT-B/16 at 224x224: 196 patches + class token = 197 tokens.
#   patch embedding conv 16x16/16, 3 -> 768: 196 * 768 * (3*16*16) = 115.6 M MACs
#   12 encoder layers: linear 12*197*7,077,888 = 16,731.9 M; attention 12*2*197*197*768 = 715.3 M
#   head 768*1000 = 0.77 M    -> 17,563.6 M MACs = 35.13 GFLOP
_VIT_LIN, _VIT_ATT = _transformer_encoder_macs(197, 12)
VIT_B16_GFLOP = 2 * (196 * 768 * 768 + _VIT_LIN + _VIT_ATT + 768 * 1000) / 1e9

# Swin-T at 224x224 (windows 7x7 = 49 tokens, dims C = 96/192/384/768 at 56/28/14/7 = N tokens,
# depths 2/2/6/2). Per block: linear 12*C*C*N (qkv 3, proj 1, MLP 8) + window attention 2*N*49*C;
# patch merging 4C -> 2C on N/4 tokens = 2*C*C*N; patch embedding 4x4/4: 3136*96*48; head 768*1000.
def _swin_t_macs() -> float:
    total = 3136 * 96 * 48 + 768 * 1000
    for c, n, depth in ((96, 3136, 2), (192, 784, 2), (384, 196, 6), (768, 49, 2)):
        total += depth * (12 * c * c * n + 2 * n * 49 * c)
        if c != 768:
            total += 2 * c * c * n  # patch merging into the next stage
    return float(total)  # 4,490.4 M MACs


SWIN_T_GFLOP = 2 * _swin_t_macs() / 1e9  # 8.98

TEXTBOOK = {
    "resnet50.torchscript.onnx": RESNET50_GFLOP,
    "resnet50.dynamo.onnx": RESNET50_GFLOP,
    "bert_base.torchscript.onnx": BERT_GFLOP,
    "bert_base.dynamo.onnx": BERT_GFLOP,
    "gpt2.torchscript.onnx": GPT2_GFLOP,
    "gpt2.dynamo.onnx": GPT2_GFLOP,
    "distilbert.torchscript.onnx": DISTILBERT_GFLOP,
    "vit_b_16.torchscript.onnx": VIT_B16_GFLOP,
    "vit_b_16.dynamo.onnx": VIT_B16_GFLOP,
    "swin_t.torchscript.onnx": SWIN_T_GFLOP,
}


def test_textbook_arithmetic():
    assert round(BERT_GFLOP, 2) == 22.35 and round(2 * _BERT_LIN / 1e9, 2) == 21.74
    assert round(2 * _BERT_ATT / 1e9, 2) == 0.60
    assert round(VIT_B16_GFLOP, 2) == 35.13
    assert round(SWIN_T_GFLOP, 2) == 8.98


@pytest.mark.parametrize("name", sorted(TEXTBOOK))
def test_matmul_flops_per_image_match_textbook(name):
    if name not in FILES:
        pytest.skip(f"{name} not committed")
    per_image = matmul_flops(graph(name, 1)) / 1e9
    assert per_image == pytest.approx(TEXTBOOK[name], rel=0.02)
    # and batch 32 is 32 images' worth
    assert matmul_flops(graph(name, 32)) / 1e9 == pytest.approx(32 * per_image, rel=1e-9)


def test_bert_split_linear_and_attention():
    g = graph("bert_base.torchscript.onnx", 1)
    pol = policy("fp32")
    weights = attention = 0.0
    for n in g.nodes:
        if n.op_type in MATMUL_OPS:
            f = node_work(n, pol, g.opset).flops.get(WorkKind.MATMUL, 0.0)
            if any(t is not None and t.is_initializer for t in n.inputs):
                weights += f
            else:
                attention += f
    assert weights / 1e9 == pytest.approx(21.74, rel=0.02)
    assert attention / 1e9 == pytest.approx(0.60, rel=0.02)


def test_dynamo_lstm_weight_reordering_is_folded():
    """The dynamo LSTM export slices and re-concatenates the gate weights (eager never does): free,
    and the LSTM still reads its (re-ordered) weights as weights."""
    g = graph("lstm.dynamo.onnx", 1)
    pol = policy("fp32")
    for n in g.nodes:
        if n.op_type in ("Slice", "Concat", "Unsqueeze") and all(t.is_initializer for t in n.inputs if t):
            assert node_work(n, pol, g.opset).kernels == 0
    lstms = [n for n in g.nodes if n.op_type == "LSTM"]
    assert lstms and all(n.inputs[1].is_initializer and n.inputs[2].is_initializer for n in lstms)
    assert all(node_work(n, pol, g.opset).weight_bytes > 0 for n in lstms)
    ts = graph("lstm.torchscript.onnx", 1)
    kernels = lambda gr: sum(node_work(n, pol, gr.opset).kernels for n in gr.nodes)  # noqa: E731
    assert abs(kernels(g) - kernels(ts)) <= 2
