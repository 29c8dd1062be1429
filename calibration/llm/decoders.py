"""Decoder-only transformers written out in plain PyTorch (random weights, no downloads), three families:

* ``llama``: RMSNorm, rotary positions, grouped-query attention, SwiGLU MLP, no biases (LlamaConfig);
* ``gpt2``:  LayerNorm, learned positions, one fused QKV projection with bias, GELU MLP (GPT2Config);
* ``opt``:   LayerNorm, learned positions, separate Q/K/V projections with bias, ReLU MLP (OPTConfig).

Each model runs three ways:
* ``prefill(ids)``: the prompt at once (causal attention), returns the last position's logits and the
  per-layer keys/values (the cache the prompt fills);
* ``decode_static(ids, k_cache, v_cache, pos)``: one token per sequence against preallocated cache tensors
  ``[B, kv_heads, C, head_dim]``: writes position ``pos`` in place and attends over ``0..pos`` (what a
  serving engine's CUDA graph runs);
* ``decode_concat(ids, past)``: the same step in the form ONNX exporters write it: past keys/values are graph
  inputs, present = concat(past, new) are outputs (the ``past_key_values`` convention).

In measurement mode attention is ``F.scaled_dot_product_attention`` (flash kernels at fp16/bf16, GQA without
copying keys/values); in export mode (``export_mode=True``) it is written as MatMul/Softmax/MatMul with the
query heads grouped per key/value head, so the ONNX graph neither repeats nor copies the cache.

torch is imported by the caller (this module needs it at import time, calibration-side only).
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F
from torch import nn


@dataclass(frozen=True)
class DecoderConfig:
    """Shape of one decoder; ``hf`` names the transformers config class whose fields it mirrors."""

    name: str
    family: str            # llama | gpt2 | opt
    hidden: int
    layers: int
    heads: int
    kv_heads: int
    intermediate: int
    vocab: int
    max_positions: int
    hf: str = ""
    rope_theta: float = 10000.0
    norm_eps: float = 1e-5

    @property
    def head_dim(self) -> int:
        return self.hidden // self.heads

    def hf_fields(self) -> dict:
        """The same shape in the field names of the transformers config class ``hf``."""
        if self.family == "llama":
            return {"hidden_size": self.hidden, "num_hidden_layers": self.layers, "num_attention_heads": self.heads,
                    "num_key_value_heads": self.kv_heads, "intermediate_size": self.intermediate,
                    "vocab_size": self.vocab, "max_position_embeddings": self.max_positions,
                    "rope_theta": self.rope_theta, "rms_norm_eps": self.norm_eps, "hidden_act": "silu",
                    "attention_bias": False, "tie_word_embeddings": False}
        if self.family == "gpt2":
            return {"n_embd": self.hidden, "n_layer": self.layers, "n_head": self.heads, "n_inner": self.intermediate,
                    "vocab_size": self.vocab, "n_positions": self.max_positions,
                    "activation_function": "gelu_new", "layer_norm_epsilon": self.norm_eps}
        return {"hidden_size": self.hidden, "num_hidden_layers": self.layers, "num_attention_heads": self.heads,
                "ffn_dim": self.intermediate, "vocab_size": self.vocab,
                "max_position_embeddings": self.max_positions, "activation_function": "relu",
                "do_layer_norm_before": True, "word_embed_proj_dim": self.hidden}

    def to_dict(self) -> dict:
        return {**asdict(self), "head_dim": self.head_dim, "hf_fields": self.hf_fields(),
                "n_params": n_params(self)}


def n_params(cfg: DecoderConfig) -> int:
    """Parameter count of `Decoder(cfg)` (embeddings and untied LM head included)."""
    h, kv = cfg.hidden, cfg.kv_heads * cfg.head_dim
    if cfg.family == "llama":
        per = h * h * 2 + h * kv * 2 + 3 * h * cfg.intermediate + 2 * h
        return cfg.layers * per + 2 * cfg.vocab * h + h
    per = (h * h * 2 + h * kv * 2 + 2 * h + 2 * kv) + (2 * h * cfg.intermediate + cfg.intermediate + h) + 4 * h
    return cfg.layers * per + 2 * cfg.vocab * h + cfg.max_positions * h + 2 * h


# Medium sizes that fit an H200 with a 64 x 2048 cache and run a sweep in well under a minute each.
CONFIGS: dict[str, DecoderConfig] = {
    # TinyLlama-1.1B's shape (22 layers, GQA 32 query / 4 key-value heads)
    "llama": DecoderConfig("llama", "llama", hidden=2048, layers=22, heads=32, kv_heads=4, intermediate=5632,
                           vocab=32000, max_positions=8320, hf="LlamaConfig"),
    # gpt2-medium's shape, position table extended to 8320 so that contexts reach 8k
    "gpt2": DecoderConfig("gpt2", "gpt2", hidden=1024, layers=24, heads=16, kv_heads=16, intermediate=4096,
                          vocab=50257, max_positions=8320, hf="GPT2Config"),
    # opt-1.3b's shape, position table extended to 8320
    "opt": DecoderConfig("opt", "opt", hidden=2048, layers=24, heads=32, kv_heads=32, intermediate=8192,
                         vocab=50272, max_positions=8320, hf="OPTConfig"),
}

# Tiny versions for the CPU dry run (same code paths, seconds on a laptop).
TINY: dict[str, DecoderConfig] = {
    "llama": DecoderConfig("llama", "llama", 64, 2, 4, 2, 128, 256, 512, "LlamaConfig"),
    "gpt2": DecoderConfig("gpt2", "gpt2", 64, 2, 4, 4, 256, 256, 512, "GPT2Config"),
    "opt": DecoderConfig("opt", "opt", 64, 2, 4, 4, 256, 256, 512, "OPTConfig"),
}


class RMSNorm(nn.Module):
    def __init__(self, n: int, eps: float):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(n))
        self.eps = eps

    def forward(self, x):
        var = x.float().pow(2).mean(-1, keepdim=True)
        return (x.float() * torch.rsqrt(var + self.eps)).to(x.dtype) * self.weight


def _norm(cfg: DecoderConfig) -> nn.Module:
    return RMSNorm(cfg.hidden, cfg.norm_eps) if cfg.family == "llama" else nn.LayerNorm(cfg.hidden, eps=cfg.norm_eps)


def _rotate_half(x):
    a, b = x.chunk(2, dim=-1)
    return torch.cat((-b, a), dim=-1)


def rope(x, positions, theta: float):
    """Rotary embedding of x [B, H, S, D] at integer positions [S] (rotate-half form, as LLaMA)."""
    d = x.shape[-1]
    inv = 1.0 / (theta ** (torch.arange(0, d, 2, device=x.device, dtype=torch.float32) / d))
    freqs = positions.to(torch.float32)[:, None] * inv[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos().to(x.dtype), emb.sin().to(x.dtype)
    return x * cos + _rotate_half(x) * sin


def attention_math(q, k, v, causal: bool, groups: int, head_dim: int):
    """softmax(q k^T / sqrt(D)) v with query heads grouped per key/value head (no key/value copies).

    q [B, H, Sq, D], k and v [B, KV, Sk, D] with H = groups x KV; causal aligns the last query with the
    last key. ``groups`` and ``head_dim`` are Python ints (static in a traced graph). Written as ONNX's
    scaled-dot-product-attention decomposition (q and k^T each scaled by D^-1/4, MatMul, additive mask,
    Softmax, MatMul), the form the predictor fuses into one attention kernel (graph/runtime.py ``sdpa``).
    """
    b, h, sq, d = q.shape[0], groups * k.shape[1], q.shape[2], head_dim
    kvh, sk = k.shape[1], k.shape[2]
    g = groups
    root = 1.0 / math.sqrt(math.sqrt(d))
    qg = q.reshape(b, kvh, g * sq, d) if g > 1 else q
    s = torch.matmul(qg * root, k.transpose(-1, -2) * root)
    if causal:
        mask = torch.triu(torch.full((sq, sk), float("-inf"), device=q.device, dtype=s.dtype), diagonal=1)
        s = s + (mask.repeat(g, 1) if g > 1 else mask)
    p = torch.softmax(s, dim=-1)
    o = torch.matmul(p, v)
    return o.reshape(b, h, sq, d) if g > 1 else o


def attention_sdpa(q, k, v, causal: bool):
    if k.shape[1] != q.shape[1]:
        try:
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)
        except TypeError:  # torch < 2.5: no GQA in SDPA
            rep = q.shape[1] // k.shape[1]
            k, v = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
    return F.scaled_dot_product_attention(q, k, v, is_causal=causal)


class Block(nn.Module):
    def __init__(self, cfg: DecoderConfig):
        super().__init__()
        self.cfg = cfg
        h, kv = cfg.hidden, cfg.kv_heads * cfg.head_dim
        bias = cfg.family != "llama"
        self.ln1, self.ln2 = _norm(cfg), _norm(cfg)
        if cfg.family == "gpt2":
            self.qkv = nn.Linear(h, h + 2 * kv, bias=True)
        else:
            self.q, self.k, self.v = nn.Linear(h, h, bias=bias), nn.Linear(h, kv, bias=bias), nn.Linear(h, kv, bias=bias)
        self.o = nn.Linear(h, h, bias=bias)
        if cfg.family == "llama":
            self.gate = nn.Linear(h, cfg.intermediate, bias=False)
        self.up = nn.Linear(h, cfg.intermediate, bias=bias)
        self.down = nn.Linear(cfg.intermediate, h, bias=bias)
        self.export_mode = False

    def _qkv(self, x, positions):
        cfg = self.cfg
        b, s, _ = x.shape
        if cfg.family == "gpt2":
            q, k, v = self.qkv(x).split([cfg.hidden, cfg.kv_heads * cfg.head_dim, cfg.kv_heads * cfg.head_dim], -1)
        else:
            q, k, v = self.q(x), self.k(x), self.v(x)
        q = q.view(b, s, cfg.heads, cfg.head_dim).transpose(1, 2)
        k = k.view(b, s, cfg.kv_heads, cfg.head_dim).transpose(1, 2)
        v = v.view(b, s, cfg.kv_heads, cfg.head_dim).transpose(1, 2)
        if cfg.family == "llama":
            q, k = rope(q, positions, cfg.rope_theta), rope(k, positions, cfg.rope_theta)
        return q, k, v

    def _mlp(self, x):
        if self.cfg.family == "llama":
            return self.down(F.silu(self.gate(x)) * self.up(x))
        if self.cfg.family == "gpt2":
            return self.down(F.gelu(self.up(x), approximate="tanh"))
        return self.down(F.relu(self.up(x)))

    def _finish(self, x, o):
        b, _, s, _ = o.shape
        x = x + self.o(o.transpose(1, 2).reshape(b, s, self.cfg.hidden))
        return x + self._mlp(self.ln2(x))

    def _attend(self, q, k, v, causal: bool):
        if self.export_mode:
            return attention_math(q, k, v, causal, self.cfg.heads // self.cfg.kv_heads, self.cfg.head_dim)
        return attention_sdpa(q, k, v, causal)

    def prefill(self, x, positions):
        q, k, v = self._qkv(self.ln1(x), positions)
        return self._finish(x, self._attend(q, k, v, causal=True)), k, v

    def decode_static(self, x, positions, k_cache, v_cache, pos: int):
        q, k, v = self._qkv(self.ln1(x), positions)
        k_cache[:, :, pos:pos + 1].copy_(k)
        v_cache[:, :, pos:pos + 1].copy_(v)
        o = self._attend(q, k_cache[:, :, :pos + 1], v_cache[:, :, :pos + 1], causal=False)
        return self._finish(x, o)

    def decode_concat(self, x, positions, past_k, past_v):
        q, k, v = self._qkv(self.ln1(x), positions)
        k, v = torch.cat((past_k, k), dim=2), torch.cat((past_v, v), dim=2)
        return self._finish(x, self._attend(q, k, v, causal=False)), k, v


class Decoder(nn.Module):
    def __init__(self, cfg: DecoderConfig):
        super().__init__()
        self.cfg = cfg
        self.embed = nn.Embedding(cfg.vocab, cfg.hidden)
        if cfg.family != "llama":
            self.pos = nn.Embedding(cfg.max_positions, cfg.hidden)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.layers))
        self.norm = _norm(cfg)
        self.lm_head = nn.Linear(cfg.hidden, cfg.vocab, bias=False)

    def set_export_mode(self, on: bool) -> None:
        for blk in self.blocks:
            blk.export_mode = on

    def _embed(self, ids, positions):
        x = self.embed(ids)
        return x + self.pos(positions)[None] if self.cfg.family != "llama" else x

    def _logits(self, x):
        return self.lm_head(self.norm(x[:, -1:]))       # last position only, as a serving engine samples

    def prefill(self, ids):
        positions = torch.arange(ids.shape[1], device=ids.device)
        x = self._embed(ids, positions)
        ks, vs = [], []
        for blk in self.blocks:
            x, k, v = blk.prefill(x, positions)
            ks.append(k)
            vs.append(v)
        return self._logits(x), ks, vs

    def decode_static(self, ids, k_caches, v_caches, pos: int):
        positions = torch.arange(pos, pos + 1, device=ids.device)
        x = self._embed(ids, positions)
        for blk, kc, vc in zip(self.blocks, k_caches, v_caches):
            x = blk.decode_static(x, positions, kc, vc, pos)
        return self._logits(x)

    def decode_concat(self, ids, past):
        past_len = past[0].shape[2]
        positions = torch.arange(past_len, past_len + ids.shape[1], device=ids.device)
        x = self._embed(ids, positions)
        present = []
        for i, blk in enumerate(self.blocks):
            x, k, v = blk.decode_concat(x, positions, past[2 * i], past[2 * i + 1])
            present += [k, v]
        return self._logits(x), present


class PrefillGraph(nn.Module):
    """input_ids -> (logits, present.0.key, present.0.value, ...), for export."""

    def __init__(self, model: Decoder):
        super().__init__()
        self.model = model

    def forward(self, input_ids):
        logits, ks, vs = self.model.prefill(input_ids)
        return (logits, *[t for kv in zip(ks, vs) for t in kv])


class DecodeGraph(nn.Module):
    """(input_ids, past_key_values.0.key, past_key_values.0.value, ...) -> (logits, present...), for export."""

    def __init__(self, model: Decoder):
        super().__init__()
        self.model = model

    def forward(self, input_ids, *past):
        logits, present = self.model.decode_concat(input_ids, list(past))
        return (logits, *present)


def build(cfg: DecoderConfig, device: str, dtype, init: bool = True) -> Decoder:
    """The decoder on `device` at `dtype`, allocated without a CPU copy; random N(0, 0.02) weights (norms 1).

    ``init=False`` (exports): each parameter filled with its own constant instead (a memset, not a random
    draw; distinct values, because the TorchScript exporter merges initializers of equal value and shape).
    """
    with torch.device("meta"):
        model = Decoder(cfg)
    model = model.to(dtype).to_empty(device=device)
    with torch.no_grad():
        for i, (name, p) in enumerate(model.named_parameters()):
            if not init:
                p.fill_(1.0 + 1e-3 * i)
            elif p.dim() == 1 and ("ln" in name or "norm" in name):
                p.fill_(1.0)
            elif p.dim() == 1:
                p.zero_()
            else:
                p.normal_(0.0, 0.02)
    return model.eval()


def kv_cache_bytes(cfg: DecoderConfig, batch: int, context: int, elem_bytes: int) -> int:
    """Keys + values of every layer for `batch` sequences of `context` tokens."""
    return 2 * cfg.layers * batch * cfg.kv_heads * context * cfg.head_dim * elem_bytes
