"""LLM serving from a decoder ONNX: prefill time, per-token decode time, tokens/s, KV-cache bytes and what fits.

    predict serve MODEL --gpu G [--precision fp16] [--prompt 512] [--context 2048] [--batches 1,4,16,64]
        [--contexts 512,2048,8192] [--weights float|int8|int4] [--format table|json] [--plot FILE]

Two kinds of graph:

* a **decode graph** (inputs ``past_key_values.<i>.key/value`` or any rank-4 ``past*`` input
  [batch, kv_heads, past, head_dim], or rank-5 [2, batch, kv_heads, past, head_dim] holding K and V): a decode step at context C binds the token input to [batch, 1] and every
  past input to [batch, kv_heads, C, head_dim] (an attention mask to [batch, C + 1], position ids to [batch, 1])
  and predicts the graph. Its ``Concat(past, new)`` nodes are how exporters write the cache; a serving engine
  appends in place (a static or paged cache): each is costed as one copy of the new token (:func:`mark_kv_appends`),
  and attention reads the cache from HBM. Prefill binds the token input to [batch, prompt] with a 1-token past (when the graph's sequence
  axis is symbolic). A graph exported with fixed past inputs (fixed batch and past length) is re-bound: those axes
  (and the token input's batch, its length when not 1, the mask's) made symbolic; it is refused in one line when
  its outputs do not follow (a constant holds the export's batch or past length).
* a **plain (prefill) graph** (input_ids [batch, sequence], no past inputs): prefill binds the sequence to the
  prompt length. Decode at context C is derived: the graph at one token (every weight read once, the per-token
  work), plus per attention layer the KV-cache read of 2 x batch x C x heads x head_dim elements at the HBM
  bandwidth (the decode attention kernel streams the cache; its 4 x batch x heads x C x head_dim FLOPs never bound
  it). Attention layers and their heads are found as the Softmax over [batch, heads, S, S] scores and the
  [batch, heads, S, head_dim] values its product reads (scores [batch, kv_heads, groups x S, S] when the query
  heads are grouped per key/value head); NB: a graph that repeats key/value heads for grouped-query attention
  before the product is counted with the repeated heads (an over-estimate).

KV-cache bytes per token = layers x 2 x kv_heads x head_dim x the precision's bytes; weights = the graph's
initializers (floats at the precision's bytes, integer/packed weights as stored). The largest batch at a context
is (usable memory - weights) / (context x KV bytes per token), usable memory as for training (the device's memory
less the CUDA context reserve; activations of a decode step are small and not counted).
"""
from __future__ import annotations

import argparse
import json
import math
from dataclasses import asdict, dataclass, field
from typing import Mapping

from .types import MemLevel, NetworkPrediction, PredictorError

DEFAULT_BATCHES = (1, 4, 16, 64)
DEFAULT_CONTEXTS = (512, 2048, 8192)
MAX_SOFTMAX_FOLLOW = 3   # Cast / Dropout / Identity between a Softmax and its value product


@dataclass(frozen=True)
class KVGeometry:
    layers: int
    kv_heads: int
    head_dim: int
    source: str                      # "past inputs" | "attention in the graph"

    def bytes_per_token(self, elem_bytes: int) -> int:
        return self.layers * 2 * self.kv_heads * self.head_dim * elem_bytes


@dataclass(frozen=True)
class DecodePoint:
    batch: int
    context: int
    time_s: float
    tokens_per_s: float
    kv_cache_bytes: float
    fits: bool


@dataclass(frozen=True)
class ServePrediction:
    model: str
    gpu: str
    precision: str
    graph_kind: str                  # "decode" | "prefill"
    kv: KVGeometry
    kv_bytes_per_token: int
    weight_bytes: float
    usable_bytes: float
    prompt: int | None
    prefill_batch: int
    prefill_s: float | None
    prefill_flops: float
    prefill_hbm_bytes: float
    context: int
    decode: tuple[DecodePoint, ...]
    decode_flops: float
    decode_hbm_bytes: float
    max_batch: Mapping[int, int]     # context -> largest batch that fits
    notes: tuple[str, ...] = field(default=())

    def point(self, batch: int, context: int) -> DecodePoint | None:
        return next((p for p in self.decode if p.batch == batch and p.context == context), None)


# ----------------------------------------------------------------------------- the graph's serving inputs
@dataclass(frozen=True)
class _Inputs:
    tokens: str
    token_dims: tuple
    past: tuple[tuple[str, tuple], ...]
    mask: str | None
    positions: str | None


def _dims(vi) -> tuple:
    tt = vi.type.tensor_type
    return tuple(d.dim_param or (int(d.dim_value) if d.HasField("dim_value") else "?") for d in tt.shape.dim)


def decoder_inputs(path: str) -> _Inputs:
    from .graph.loader import read_model

    m = read_model(path)
    inits = {t.name for t in m.graph.initializer}
    ins = [i for i in m.graph.input if i.name not in inits]
    tokens = next((i for i in ins if "input_ids" in i.name), None)
    if tokens is None:
        tokens = next((i for i in ins if i.type.tensor_type.elem_type in (6, 7) and len(_dims(i)) == 2), None)
    if tokens is None:
        raise PredictorError("serve: no token input (an int input named input_ids, or any rank-2 integer input)")
    past = tuple((i.name, _dims(i)) for i in ins if "past" in i.name.lower() and len(_dims(i)) in (4, 5))
    mask = next((i.name for i in ins if "mask" in i.name.lower() and len(_dims(i)) == 2), None)
    positions = next((i.name for i in ins if "position" in i.name.lower() and len(_dims(i)) == 2), None)
    return _Inputs(tokens.name, _dims(tokens), past, mask, positions)


def _past_axes(dims: tuple) -> tuple[int, int]:
    """(batch axis, past-length axis) of a past input: [batch, heads, past, dim], or [2, batch, heads, past, dim]
    (K and V stacked, older GPT-2 exports): the first symbolic dim is the batch, the next the past length."""
    sym = [k for k, d in enumerate(dims) if not isinstance(d, int)]
    if len(sym) >= 2:
        return sym[0], sym[1]
    batch = 1 if len(dims) == 5 else 0
    return batch, (sym[0] if sym and sym[0] != batch else len(dims) - 2)


def step_shapes(inp: _Inputs, batch: int, seq: int, past: int) -> dict[str, tuple[int, ...]]:
    out = {inp.tokens: (batch, seq)}
    for name, dims in inp.past:
        b_axis, axis = _past_axes(dims)
        full = [batch if k == b_axis else (past if k == axis else d) for k, d in enumerate(dims)]
        if not all(isinstance(d, int) for d in full):
            raise PredictorError(f"serve: past input '{name}' has dims {list(dims)}: only batch and the past length "
                                 "may be symbolic")
        out[name] = tuple(full)
    if inp.mask:
        out[inp.mask] = (batch, past + seq if inp.past else seq)
    if inp.positions:
        out[inp.positions] = (batch, seq)
    return out


# ----------------------------------------------------------------------------- geometry
def _kv_from_past(inp: _Inputs) -> KVGeometry:
    dims = inp.past[0][1]
    stacked = len(dims) == 5                       # one input holds K and V
    layers = len(inp.past) if stacked else len(inp.past) // 2
    b_axis, axis = _past_axes(dims)
    rest = [d for k, d in enumerate(dims) if k not in (b_axis, axis) and not (stacked and k == 0)]
    return KVGeometry(max(layers, 1), int(rest[0]), int(rest[1]), "past inputs")


def _kv_from_attention(graph) -> KVGeometry | None:
    consumers: dict[str, list] = {}
    for n in graph.nodes:
        for t in n.inputs:
            if t is not None:
                consumers.setdefault(t.name, []).append(n)
    layers, heads, head_dim = 0, 0, 0
    for n in graph.nodes:
        s = n.outputs[0].shape if n.op_type == "Softmax" and n.outputs else None
        if s is None or len(s) != 4 or s[2] % s[3]:   # [B, H, S, S], or [B, KV, groups x S, S] (GQA)
            continue
        frontier = {n.outputs[0].name}
        for _ in range(MAX_SOFTMAX_FOLLOW + 1):   # through Cast / Dropout / Where(IsNaN(p), 0, p) ...
            users = [c for t in frontier for c in consumers.get(t, [])]
            mm = next((c for c in users if c.op_type == "MatMul" and c.inputs[0] is not None
                       and c.inputs[0].name in frontier), None)
            if mm is not None:
                v = mm.inputs[1].shape if mm.inputs[1] is not None else None
                if v is not None and len(v) == 4:
                    layers += 1
                    heads, head_dim = v[1], v[3]
                break
            frontier = {o.name for c in users for o in c.outputs if o.name}
    return KVGeometry(layers, heads, head_dim, "attention in the graph") if layers else None


def _weight_bytes(graph, pol) -> float:
    seen: dict[str, float] = {}
    for n in graph.nodes:
        for t in n.inputs:
            if t is not None and t.is_initializer and t.shape is not None and t.name not in seen:
                numel = math.prod(t.shape)
                if numel >= 1024:
                    seen[t.name] = numel * pol.dtype_bytes(t.dtype)
    return float(sum(seen.values()))


# ----------------------------------------------------------------------------- prediction
def predict_step(path, profile, precision, cal, shapes, batch, weights: str = "float",
             source=None, past_names: frozenset = frozenset()) -> tuple[object, NetworkPrediction]:
    """``source``: the model re-bound by :func:`_rebindable` (read once), else the file is loaded. ``past_names``: a
    decode step's cache inputs, whose Concat(past, new) nodes run as in-place appends (:func:`mark_kv_appends`)."""
    from .graph.loader import load, load_model_proto
    from .predict import predict_graph
    from .weight_quant import quantise_weights

    if source is not None:
        model = type(source)()
        model.CopyFrom(source)
        g = load_model_proto(model, batch=batch, shapes=shapes, path=path)
    else:
        g = load(path, batch=batch, shapes=shapes)
    g, _ = quantise_weights(g, weights)
    if past_names:
        g = mark_kv_appends(g, past_names)
    return g, predict_graph(g, profile, precision, cal, batch=batch)


def mark_kv_appends(g, past_names: frozenset):
    """``g`` with each Concat that reads a past input directly marked KV_APPEND (graph/context.py): a serving engine
    appends the new token to a static or paged cache in place, one copy kernel a layer and tensor (measured on the
    H100: 48 ``aten::copy_`` kernels of ~2.5 us a GPT-2-medium decode step, calibration/data/h100/llm_decode_profile),
    and attention then reads the cache from HBM, not from an L2 the Concat just wrote."""
    from dataclasses import replace

    from .graph.context import KV_APPEND
    from .types import with_attrs

    def past_index(n) -> int | None:
        for k, t in enumerate(n.inputs):
            if t is not None and t.name in past_names:
                return k
        return None

    nodes = []
    for n in g.nodes:
        k = past_index(n) if n.op_type == "Concat" else None
        nodes.append(n if k is None else with_attrs(n, {KV_APPEND: k}))
    return replace(g, nodes=tuple(nodes))


def _rebindable(path: str, inp: _Inputs):
    """A plain graph exported at a fixed batch or sequence length, with those axes of its token input (and of the
    rank-2 inputs of the same fixed shape: attention mask, positions) made symbolic, so that serve can bind
    them to the prompt and to one token; None when they are symbolic already."""
    fixed = [k for k, d in enumerate(inp.token_dims) if isinstance(d, int)]
    if not fixed:
        return None
    from .graph.loader import read_model

    model = read_model(path)
    inits = {t.name for t in model.graph.initializer}
    for vi in model.graph.input:
        if vi.name in inits or len(_dims(vi)) != 2:
            continue
        dims = vi.type.tensor_type.shape.dim
        if vi.name != inp.tokens and _dims(vi) != inp.token_dims:
            continue
        for k in fixed:
            dims[k].dim_param = ("batch", "sequence")[k]   # clears the fixed value (a oneof)
    return model


def _rebindable_decode(path: str, inp: _Inputs):
    """A decode graph exported with fixed past inputs (and a fixed batch, mask length or prompt length), with the
    axes serve varies made symbolic: the batch and the past length of every past input, the batch (and a prompt
    length other than 1) of the token and position inputs, the batch and total length of the attention mask. A
    graph exported at one token keeps its token axis (a decode step; prefill is not derived from it). None when
    those axes are symbolic already."""
    seq_fixed = isinstance(inp.token_dims[1], int) and inp.token_dims[1] != 1
    token_axes = [k for k, d in enumerate(inp.token_dims) if isinstance(d, int) and (k == 0 or seq_fixed)]
    past_fixed = any(isinstance(dims[k], int) for _, dims in inp.past for k in _past_axes(dims))
    if not token_axes and not past_fixed:
        return None
    from .graph.loader import read_model

    model = read_model(path)
    by_name = {vi.name: vi for vi in model.graph.input}

    def symbolic(name: str, axes_names: dict[int, str]) -> None:
        dims = by_name[name].type.tensor_type.shape.dim
        for k, label in axes_names.items():
            if dims[k].HasField("dim_value"):
                dims[k].dim_param = label   # clears the fixed value (a oneof)

    for name in (inp.tokens, inp.positions):
        if name:
            symbolic(name, {k: ("batch", "sequence")[k] for k in token_axes})
    for name, dims in inp.past:
        b_axis, axis = _past_axes(dims)
        symbolic(name, {b_axis: "batch", axis: "past_sequence"})
    if inp.mask:
        symbolic(inp.mask, {0: "batch", 1: "total_sequence"})
    return model


def _check_rebound_decode(g, inp: _Inputs, batch: int, seq: int, past: int) -> None:
    """The re-bound decode graph follows the new batch and past length: its first output has the batch (and the
    tokens), and every past-shaped output (present.*) holds past + tokens. A graph whose constants hold its
    export sizes (a fixed-size mask, a reshape to the export batch) does not: one-line error."""
    fixed = {name: dims for name, dims in inp.past}
    first = next(iter(fixed.values()))
    want = {}
    for o in g.outputs:
        if o.shape is not None and len(o.shape) == len(first) and "present" in o.name.lower():
            b_axis, axis = _past_axes(first)
            want[o.name] = (o.shape, {b_axis: batch, axis: past + seq})
    out = g.outputs[0].shape if g.outputs else None
    bad = out is None or not out or out[0] != batch or (len(out) == 3 and out[1] != seq)   # logits [B, S, V]
    bad = bad or any(shape[k] != v for shape, need in want.values() for k, v in need.items())
    if bad:
        name, dims = inp.past[0]
        got = "unknown" if out is None else list(out)
        raise PredictorError(f"serve: the graph's batch and past length ('{name}' {list(dims)}) are built into its "
                             f"constants (output {got} at batch {batch}, past {past}, {seq} token(s)): export it "
                             "with dynamic batch and past axes")


def _plain_shapes(inp: _Inputs, batch: int, seq: int, source) -> dict[str, tuple[int, ...]]:
    """Bindings of a plain graph: the token input, and the mask / positions that re-binding made symbolic."""
    out = {inp.tokens: (batch, seq)}
    if source is not None:
        dims = {vi.name: _dims(vi) for vi in source.graph.input}
        for name in (inp.mask, inp.positions):
            if name and name in dims and name != inp.tokens and not all(isinstance(d, int) for d in dims[name]):
                out[name] = (batch, seq)
    return out


def _check_rebound(g, inp: _Inputs, seq: int) -> None:
    """The re-bound graph's first output follows the new length: a graph whose constants hold its export
    length (a causal mask of [S, S], reshapes to S) would broadcast back to it, or not load."""
    out = g.outputs[0].shape if g.outputs else None
    fixed = inp.token_dims[1]
    if out is None or (isinstance(fixed, int) and len(out) >= 2 and out[1] != seq):
        got = "unknown" if out is None else list(out)
        raise PredictorError(f"serve: the graph's sequence length {fixed} is built into its constants (output "
                             f"{got} at {seq} tokens): export it with a dynamic sequence axis")


def predict_serving(path: str, profile, precision: str = "fp16", calibration=None, prompt: int = 512,
                    context: int = 2048, batches=DEFAULT_BATCHES, contexts=DEFAULT_CONTEXTS,
                    prefill_batch: int = 1, weights: str = "float") -> ServePrediction:
    import os

    from .precision import policy as get_policy
    from .train import memory as mem
    from .train.step import _memory_bytes

    pol = get_policy(precision)
    elem = pol.storage_bytes
    inp = decoder_inputs(path)
    notes: list[str] = []
    contexts = tuple(sorted(set(contexts) | {context}))
    batches = tuple(sorted(set(batches)))
    hbm = profile.bandwidth(MemLevel.HBM)
    decode_points: list[DecodePoint] = []
    prefill_s = None
    prefill_flops = prefill_bytes = decode_flops = decode_bytes = 0.0
    seq_symbolic = not isinstance(inp.token_dims[1], int)
    if inp.past:
        kind = "decode"
        kv = _kv_from_past(inp)
        past_names = frozenset(n for n, _ in inp.past)
        source = _rebindable_decode(path, inp)
        fixed_inp = inp
        if source is not None:
            inp = _Inputs(inp.tokens, _dims(next(i for i in source.graph.input if i.name == inp.tokens)),
                          tuple((n, _dims(next(i for i in source.graph.input if i.name == n))) for n, _ in inp.past),
                          inp.mask, inp.positions)
            notes.append(f"the graph's fixed inputs (past {list(fixed_inp.past[0][1])}, tokens "
                         f"{list(fixed_inp.token_dims)}) re-bound to the batch and past length of each step "
                         "(its constants follow them)")
        seq_symbolic = not isinstance(inp.token_dims[1], int)
        g = None
        for c in contexts:
            for b in batches:
                try:
                    g, pred = predict_step(path, profile, precision, calibration, step_shapes(inp, b, 1, c), b,
                                           weights, source, past_names)
                    if source is not None:
                        _check_rebound_decode(g, fixed_inp, b, 1, c)
                except PredictorError as e:
                    if source is None or "built into its constants" in str(e):
                        raise
                    _, dims = fixed_inp.past[0]
                    raise PredictorError(f"serve: the graph's batch and past length ({list(dims)}) are built into "
                                         f"its constants ({e}): export it with dynamic batch and past axes") from None
                t = pred.total_time_s
                decode_points.append(DecodePoint(b, c, t, b / t, float(b * c * kv.bytes_per_token(elem)), True))
                if b == batches[0] and c == context:
                    decode_flops, decode_bytes = pred.total_flops, pred.total_bytes(MemLevel.HBM)
        notes.append("decode: the graph's Concat(past, new) cache nodes run as in-place appends (one copy of the new "
                     "token; attention reads the cache from HBM)")
        if seq_symbolic:
            gp, pp = predict_step(path, profile, precision, calibration, step_shapes(inp, prefill_batch, prompt, 1),
                                  prefill_batch, weights, source)
            if source is not None:
                _check_rebound_decode(gp, fixed_inp, prefill_batch, prompt, 1)
            prefill_s, prefill_flops, prefill_bytes = pp.total_time_s, pp.total_flops, pp.total_bytes(MemLevel.HBM)
            notes.append("prefill: the decode graph with the prompt as its input and a 1-token past")
        else:
            notes.append("prefill: not derivable from a decode graph whose token input is fixed at "
                         f"{inp.token_dims[1]} (give the prefill graph)")
        weight_total = _weight_bytes(g, pol)
    else:
        kind = "prefill"
        source = _rebindable(path, inp)
        try:
            g, pp = predict_step(path, profile, precision, calibration, _plain_shapes(inp, prefill_batch, prompt, source),
                             prefill_batch, weights, source)
            if source is not None:
                _check_rebound(g, inp, prompt)
                notes.append(f"the graph's fixed input {list(inp.token_dims)} re-bound to [batch, tokens] "
                             "(its constants follow the new length)")
        except PredictorError as e:
            if not isinstance(inp.token_dims[1], int):
                raise
            prompt = inp.token_dims[1]
            notes.append(f"prefill: the graph's sequence is fixed ({e}); prompt = its {prompt} tokens")
            if source is not None:  # re-binding failed: decode (one token) cannot be derived either
                raise PredictorError(f"{e} (decode needs the graph at one token)") from None
            g, pp = predict_step(path, profile, precision, calibration, {inp.tokens: (prefill_batch, prompt)},
                             prefill_batch, weights)
        prefill_s, prefill_flops, prefill_bytes = pp.total_time_s, pp.total_flops, pp.total_bytes(MemLevel.HBM)
        found = _kv_from_attention(g)
        if found is None:
            raise PredictorError("serve: no attention found in the graph (Softmax over [batch, heads, S, S] scores "
                                 "followed by the value product): cannot derive the KV cache")
        kv = found
        weight_total = _weight_bytes(g, pol)
        one: dict[int, NetworkPrediction] = {}
        for b in batches:
            try:
                g1, one[b] = predict_step(path, profile, precision, calibration, _plain_shapes(inp, b, 1, source), b,
                                      weights, source)
                if source is not None:
                    _check_rebound(g1, inp, 1)
            except PredictorError as e:
                raise PredictorError(f"serve: the graph does not load at one token per sequence ({e}); export it "
                                     "with a dynamic sequence axis") from None
        for c in contexts:
            for b in batches:
                kv_read = b * c * kv.bytes_per_token(elem)
                t = one[b].total_time_s + kv_read / hbm
                decode_points.append(DecodePoint(b, c, t, b / t, float(kv_read), True))
        base = one[batches[0]]
        decode_flops = base.total_flops + 4 * batches[0] * context * kv.kv_heads * kv.head_dim * kv.layers
        decode_bytes = base.total_bytes(MemLevel.HBM) + batches[0] * context * kv.bytes_per_token(elem)
        notes.append("decode: derived from the graph at one token plus the KV-cache read per attention layer at the "
                     "HBM bandwidth")
    if weights != "float":
        notes.append(f"weights: every MatMul weight as {weights} MatMulNBits (block 32, symmetric), activations at "
                     f"{pol.name}")
    usable = max(_memory_bytes(profile) - mem.CONTEXT_RESERVE_BYTES, 0.0)
    per_token = kv.bytes_per_token(elem)
    max_batch = {c: max(0, int((usable - weight_total) // (c * per_token))) for c in contexts}
    decode_points = [DecodePoint(p.batch, p.context, p.time_s, p.tokens_per_s, p.kv_cache_bytes,
                                 p.kv_cache_bytes + weight_total <= usable) for p in decode_points]
    return ServePrediction(model=os.path.basename(path), gpu=profile.name, precision=pol.name, graph_kind=kind, kv=kv,
                           kv_bytes_per_token=per_token, weight_bytes=weight_total, usable_bytes=usable, prompt=prompt,
                           prefill_batch=prefill_batch, prefill_s=prefill_s, prefill_flops=prefill_flops,
                           prefill_hbm_bytes=prefill_bytes, context=context, decode=tuple(decode_points),
                           decode_flops=decode_flops, decode_hbm_bytes=decode_bytes, max_batch=max_batch,
                           notes=tuple(notes))


# ----------------------------------------------------------------------------- output
def _t(s: float | None) -> str:
    if s is None:
        return "-"
    return f"{s * 1e3:.3f} ms" if s >= 1e-3 else f"{s * 1e6:.1f} us"


def _b(x: float) -> str:
    for unit, f in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if x >= f:
            return f"{x / f:.3g} {unit}"
    return f"{x:.0f} B"


def to_table(sp: ServePrediction, profile) -> str:
    kv = sp.kv
    lines = [f"model {sp.model} on {profile.full_name} ({sp.gpu}), precision {sp.precision}, serving "
             f"({sp.graph_kind} graph)",
             f"KV cache        {_b(sp.kv_bytes_per_token)} per token ({kv.layers} layers x K,V x {kv.kv_heads} heads x "
             f"{kv.head_dim}, from the {kv.source})",
             f"weights         {_b(sp.weight_bytes)}; usable memory {_b(sp.usable_bytes)}"]
    if sp.prefill_s is not None:
        toks = sp.prefill_batch * (sp.prompt or 0)
        lines.append(f"prefill         prompt {sp.prompt} x batch {sp.prefill_batch}: {_t(sp.prefill_s)} to first token "
                     f"({toks / sp.prefill_s:,.0f} tokens/s; {sp.prefill_flops / sp.prefill_s / 1e12:.1f} TFLOP/s)")
    else:
        lines.append("prefill         -")
    p = sp.point(min(b.batch for b in sp.decode), sp.context)
    if p is not None:
        lines.append(f"decode          context {sp.context} x batch {p.batch}: {_t(p.time_s)} per token "
                     f"({p.tokens_per_s:,.0f} tokens/s)")
    ctxs = sorted({q.context for q in sp.decode})
    lines.append("tokens/s        " + "batch \\ context".rjust(16) + "".join(f"{c:>12}" for c in ctxs))
    for b in sorted({q.batch for q in sp.decode}):
        row = "".join(f"{sp.point(b, c).tokens_per_s:>11,.0f}{'' if sp.point(b, c).fits else '*'}" for c in ctxs)
        lines.append(" " * 16 + f"{b:>16}" + row)
    if any(not q.fits for q in sp.decode):
        lines.append(" " * 16 + "* the KV cache and weights do not fit in memory at this batch x context")
    lines.append("largest batch   " + ", ".join(f"context {c}: {n:,}" for c, n in sorted(sp.max_batch.items())))
    lines += [f"note            {n}" for n in sp.notes]
    return "\n".join(lines) + "\n"


def to_json(sp: ServePrediction, profile) -> str:
    doc = asdict(sp)
    doc["max_batch"] = {str(k): v for k, v in sp.max_batch.items()}
    doc["gpu"] = profile.name
    return json.dumps(doc, indent=1) + "\n"


def write_chart(sp: ServePrediction, profile, path: str) -> None:
    """tokens/s against batch per context (left) and prefill / decode on the time-based roofline (right)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .precision import policy as get_policy

    fig, (ax, rf) = plt.subplots(1, 2, figsize=(11, 4.2))
    for c in sorted({q.context for q in sp.decode}):
        pts = sorted((q for q in sp.decode if q.context == c), key=lambda q: q.batch)
        ax.plot([q.batch for q in pts], [q.tokens_per_s for q in pts], marker="o", label=f"context {c}")
        for q in pts:
            if not q.fits:
                ax.plot(q.batch, q.tokens_per_s, "x", color="red")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("batch (sequences decoded together)")
    ax.set_ylabel("decode tokens/s (predicted)")
    ax.set_title(f"{sp.model}: decode throughput ({sp.precision}, {sp.gpu})")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    pol = get_policy(sp.precision)
    peak = profile.peak(*pol.matmul) or max(profile.peak_flops_per_s.values())
    hbm = profile.bandwidth(MemLevel.HBM)
    xs = [10 ** (k / 10) for k in range(-10, 41)]
    rf.plot(xs, [min(peak, x * hbm) for x in xs], color="black", lw=1)
    p = sp.point(min(q.batch for q in sp.decode), sp.context)
    marks = []
    if sp.prefill_s and sp.prefill_hbm_bytes:
        marks.append((f"prefill {sp.prompt} tokens", sp.prefill_flops / sp.prefill_hbm_bytes,
                      sp.prefill_flops / sp.prefill_s))
    if p is not None and sp.decode_hbm_bytes:
        marks.append((f"decode, context {sp.context}", sp.decode_flops / sp.decode_hbm_bytes, sp.decode_flops / p.time_s))
    for label, x, y in marks:
        rf.plot(x, y, "o", ms=8)
        rf.annotate(label, (x, y), textcoords="offset points", xytext=(8, 6))
    rf.set_xscale("log")
    rf.set_yscale("log")
    rf.set_xlabel("arithmetic intensity (FLOP per HBM byte)")
    rf.set_ylabel("FLOP/s (predicted)")
    rf.set_title("prefill is compute-bound, decode memory-bound")
    rf.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


# ----------------------------------------------------------------------------- command line
def _ints(text: str) -> tuple[int, ...]:
    try:
        out = tuple(int(t) for t in text.split(",") if t.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a comma list of whole numbers") from None
    if not out or any(v <= 0 or v > 2**31 for v in out):
        raise argparse.ArgumentTypeError(f"'{text}': values must be between 1 and 2**31")
    return out


def build_parser() -> argparse.ArgumentParser:
    from .cli_common import Parser, positive_int as _positive_int

    p = Parser(prog="predict serve", description="LLM serving from a decoder ONNX: prefill, decode, tokens/s, "
                "KV cache and what fits.")
    p.add_argument("model", help="decoder ONNX (a decode graph with past_key_values inputs, or the plain graph)")
    p.add_argument("--gpu", required=True, help="bundled GPU name or profile .json")
    p.add_argument("--precision", default="fp16", help="fp16 | bf16 | fp8 | fp32 | ... (default fp16)")
    p.add_argument("--prompt", type=_positive_int, default=512, help="prefill prompt length (default 512)")
    p.add_argument("--prefill-batch", type=_positive_int, default=1, help="prompts prefilled together (default 1)")
    p.add_argument("--context", type=_positive_int, default=2048, help="decode context length (default 2048)")
    p.add_argument("--batches", type=_ints, default=DEFAULT_BATCHES, help="decode batches (default 1,4,16,64)")
    p.add_argument("--contexts", type=_ints, default=DEFAULT_CONTEXTS, help="contexts of the tokens/s table")
    p.add_argument("--weights", choices=("float", "int8", "int4"), default="float",
                   help="weight-only quantisation of the MatMul weights (MatMulNBits, as ONNX Runtime's quantiser)")
    p.add_argument("--format", choices=("table", "json"), default="table")
    p.add_argument("--output", "-o", help="write the report to FILE instead of stdout")
    p.add_argument("--uncalibrated", action="store_true", help="pure roofline on the profile's ceilings")
    p.add_argument("--plot", metavar="FILE", help="tokens/s and roofline chart (.png or .svg)")
    return p


def main(argv: list[str]) -> int:
    from .cli_common import default_calibration as _default_calibration, emit as _emit
    from .calibrate import Uncalibrated
    from .machine.profile import load_profile

    args = build_parser().parse_args(argv)
    if args.plot:
        from .plots.draw import check_plot_path

        check_plot_path(args.plot)
    profile = load_profile(args.gpu)
    cal = Uncalibrated() if args.uncalibrated else _default_calibration(profile)
    sp = predict_serving(args.model, profile, args.precision, cal, args.prompt, args.context, args.batches,
                         args.contexts, args.prefill_batch, args.weights)
    _emit(to_json(sp, profile) if args.format == "json" else to_table(sp, profile), args.output)
    if args.plot:
        write_chart(sp, profile, args.plot)
    return 0
