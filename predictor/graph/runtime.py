"""What the reference runtime (PyTorch eager, cuDNN/cuBLAS) launches for ONNX patterns that exporters
decompose: each pattern here folds the nodes of one PyTorch call back into the kernel PyTorch runs.

* ``sdpa``: scaled-dot-product attention as the TorchScript exporter writes it, MatMul(Mul(q, s), Mul(k^T, s))
  [-> Add(mask)] -> Softmax -> MatMul(., v) (q and k both scaled by sqrt(scale): explicit attention code scales
  the scores or q only and stays unfused in eager) -> one fused attention kernel reading q, k, v (and an
  explicit mask; a causal one built from shapes alone is the kernel's is_causal, predictor/causal_mask.py) and
  writing the output; the score matrix never reaches memory. The views around it (head transposes, the q/k/v
  split of a packed projection, keys and values the graph returns, the output's head transpose) launch nothing.
  A Dropout on the probabilities (a training export) is part of the call: flash and memory-efficient attention
  apply it inside the kernel.
* ``linear_bias``: MatMul/Gemm followed by Add of a 1-D constant bias -> the bias rides in the GEMM epilogue.
* ``gelu_erf``: x * 0.5 * (1 + erf(x / sqrt 2)) -> one GELU kernel.
* ``silu``: x * sigmoid(x) -> one SiLU kernel.
* ``var_welford``: torch.var / std (ReduceMean, Sub, Mul(d, d), ReduceMean [, correction, Sqrt]) -> one Welford
  reduction reading x.
* ``group_norm``: F.group_norm (Reshape, InstanceNormalization, Reshape [, Mul, Add]) -> native_group_norm's 3
  kernels with its row-moments loop.
* ``stacked_rnn``: an LSTM/GRU/RNN layer fed (through views) by another is the next layer of one cuDNN call,
  whose time steps run on their own stream beside the previous layer's: ``overlaps_producer`` (unidirectional
  layers only: a bidirectional layer's output at step 0 needs its backward direction's last step, so the next
  layer cannot start before it ends; measured, two bidirectional layers take 2.0x one: run 7 rnn_bidir).
Absorbed nodes keep their FLOPs (moved to the node that takes their place) and launch nothing.
Ignores: fusions that depend on runtime heuristics beyond the graph (cuDNN conv+bias+act fusion is off in
PyTorch eager), and exporter variants these matchers do not recognise (they stay unfused: safe side).
"""
from __future__ import annotations

from math import prod
from operator import attrgetter, itemgetter
from collections.abc import Callable, Sequence  # (typing.Callable compiles its string arguments)

from ..fastinit import fast_replace as replace  # (OpWork is a fast_init class)
from ..frozen import frozen_dataclass
from ..types import Node, OpWork, WorkKind, frozen_map
from .context import CAUSAL_MASK, OpContext
from .ops.normalization import RMSNORM_FLOPS, group_norm_loop
from .ops.reduction import reduce_loop
from .ops.rnn import is_bidirectional_rnn
from .registry import STORAGE_VIEWS, op_traits

Pattern = Callable[["_Index", Node], "list[tuple[str, OpWork]] | None"]
_PATTERNS: dict[str, Pattern] = {}
_TRIGGERS: dict[str, frozenset | None] = {}  # pattern name -> op types it can start at (None: any)


def pattern(name: str, ops: tuple[str, ...] | None = None):
    """Register a pattern; ``ops``: the op types of the nodes it starts at (it is tried on no other node)."""

    def deco(fn: Pattern) -> Pattern:
        if name in _PATTERNS:
            raise ValueError(f"runtime pattern {name} registered twice")
        _PATTERNS[name] = fn
        _TRIGGERS[name] = frozenset(ops) if ops is not None else None
        return fn

    return deco


class _Index:
    """Producers, consumers and works of a costed sequence."""

    def __init__(self, seq: Sequence[tuple[Node, OpWork]], all_nodes: Sequence[Node]):
        self.work = {n.name: w for n, w in seq}
        producer: dict[str, Node] = {}
        consumers: dict[str, list[Node]] = {}
        get = consumers.get
        for n in all_nodes:  # one pass: producers (the last writer of a name wins) and consumers in order
            for t in n.inputs:
                if t is not None:
                    name = t.name
                    c = get(name)
                    if c is None:
                        consumers[name] = [n]
                    else:
                        c.append(n)
            for t in n.outputs:
                producer[t.name] = n
        producer.pop("", None)  # an omitted output has no producer
        self.producer, self.consumers = producer, consumers
        self.taken: set[str] = set()
        self._const: dict[str, bool] = {}

    def prod(self, node: Node, i: int) -> Node | None:
        if i >= len(node.inputs) or node.inputs[i] is None:
            return None
        p = self.producer.get(node.inputs[i].name)
        # look through free views (Identity, Reshape, Cast to the same storage...) is not done: exact match
        return p

    def only_consumer(self, node: Node) -> Node | None:
        cs = self.consumers.get(node.outputs[0].name, [])
        return cs[0] if len(cs) == 1 else None

    def is_const(self, node: Node, i: int, depth: int = 0) -> bool:
        """Input i is known before the run: computed from initializers, Constant nodes and shapes alone."""
        if i >= len(node.inputs) or node.inputs[i] is None:
            return False
        name = node.inputs[i].name
        if name in self._const:
            return self._const[name]
        p = self.producer.get(name)
        if p is None:
            val = name not in self.graph_inputs
        elif p.op_type == "Constant":
            val = True
        elif p.op_type in ("Shape", "Size"):
            val = True  # every dimension is bound before costing: shapes are known values
        elif p.op_type == "CastLike":  # its second input gives the dtype only
            val = self.is_const(p, 0, depth + 1)
        elif depth > 32:
            val = False
        else:
            val = all(self.is_const(p, k, depth + 1) for k, t in enumerate(p.inputs) if t is not None)
        self._const[name] = val
        return val

    graph_inputs: frozenset = frozenset()

    def free(self, *names: str) -> bool:
        return self.taken.isdisjoint(names) and self.work.keys() >= set(names)


ABSORBED = "absorbed into a fused runtime kernel"


_NONE = frozen_map()  # the flops and input bytes of every absorbed node (read-only: shared)


def _absorbed(w: OpWork) -> OpWork:
    return replace(w, flops=_NONE, bytes_read=0.0, bytes_written=0.0, kernels=0, weight_bytes=0.0,
                   input_bytes=_NONE, gemm=None, gemm_operand_bytes=0.0, notes=w.notes + (ABSORBED,))


def _merge_flops(*works: OpWork) -> dict:
    out: dict = {}
    for w in works:
        for k, v in w.flops.items():
            out[k] = out.get(k, 0.0) + v
    return out


def _scalar_const(ix: _Index, node: Node) -> int | None:
    """Index of the input of a binary node that is a scalar/1-element constant, else None."""
    for i in (0, 1):
        t = node.inputs[i] if i < len(node.inputs) else None
        if t is not None and ix.is_const(node, i) and t.shape is not None and prod(t.shape) == 1:
            return i
    return None


_COMPARE = frozenset({"LessOrEqual", "GreaterOrEqual", "Less", "Greater"})
CAUSAL_MAKERS = frozenset({"Trilu"}) | _COMPARE  # the op types causal_mask looks for


def _from_range(ix: _Index, name: str, depth: int = 4) -> bool:
    """Whether tensor ``name`` is computed from a Range within ``depth`` producers (positions of a sequence)."""
    node = ix.producer.get(name)
    if node is None or depth < 0:
        return False
    if node.op_type == "Range":
        return True
    return any(t is not None and _from_range(ix, t.name, depth - 1) for t in node.inputs)


def causal_mask(ix: _Index, name: str, depth: int = 8) -> bool:
    """Whether the attention mask ``name`` is a causal one: built by Trilu (torch's is_causal, exported), or by
    comparing two position ranges (``k_pos <= q_pos``, the transformers library's masks), within ``depth``
    producers. Ignores: a causal pattern hidden in a constant mask tensor."""
    node = ix.producer.get(name)
    if node is None or depth < 0:
        return False
    if node.op_type == "Trilu":
        return True
    if node.op_type in _COMPARE and len(node.inputs) == 2 and all(
            t is not None and _from_range(ix, t.name) for t in node.inputs):
        return True
    return any(t is not None and causal_mask(ix, t.name, depth - 1) for t in node.inputs)


@frozen_dataclass
class _SdpaMatch:
    """The nodes of one scaled-dot-product attention call."""

    group: list  # every node of the call, the second MatMul last
    mq: Node
    mk: Node
    second: Node
    add: Node | None
    extra: list
    mask_src: object


_LAYOUT_VIEWS = frozenset({"Transpose", "Reshape", "Squeeze", "Unsqueeze", "Flatten", "Gather"})
_SHAPE_READERS = frozenset({"Shape", "Size"})  # read a tensor's shape, never its data
_QKV_VIEWS = _LAYOUT_VIEWS | {"Split"}


def _returned_view(ix: _Index, n: Node) -> bool:
    """A transpose or reshape whose outputs only leave the graph (or feed shape reads): PyTorch returns the view
    (a prefill's per-layer keys and values), no copy kernel runs."""
    return n.op_type in ("Transpose", "Reshape") and all(
        c.op_type in _SHAPE_READERS for t in n.outputs for c in ix.consumers.get(t.name, ()))


def _qkv_views(ix: _Index, starts: list[str], group: set[str]) -> list[Node]:
    """Layout nodes upstream of a fused attention call's q, k, v inputs that only feed it, found through reshapes and
    squeezes: transposes, constant scalar-index Gathers (the q/k/v split of nn.MultiheadAttention's packed
    projection) and Splits (``qkv.split(...)`` of a packed projection), each of whose outputs is consumed only by
    such nodes, by the call, by shape reads or by views the graph returns (:func:`_returned_view`). PyTorch passes
    strided views to SDPA and its fused multi-head attention path reads the packed projection in place: no copy
    kernel runs (torchvision's ViT-B/16 kernel table: per layer two projection GEMMs and one flash kernel). Ignores:
    a training step's ``.contiguous()`` copy of the packed projection."""
    cand: dict[str, Node] = {}
    stack = list(starts)
    while stack:
        p = ix.producer.get(stack.pop())
        if p is None or p.name in cand or p.op_type not in _QKV_VIEWS or not p.inputs or p.inputs[0] is None:
            continue
        if p.op_type == "Gather" and not (len(p.inputs) > 1 and p.inputs[1] is not None and p.inputs[1].shape == ()
                                          and ix.is_const(p, 1)):
            continue
        cand[p.name] = p
        stack.append(p.inputs[0].name)
    for n in list(cand.values()):  # views of the same tensors the graph returns (a prefill's keys and values)
        for t in n.outputs:
            for c in ix.consumers.get(t.name, ()):
                if c.name not in cand and c.name not in group and _returned_view(ix, c):
                    cand[c.name] = c
    changed = True
    while changed:  # keep a node only while every consumer of its outputs is kept or is the call
        changed = False
        for name, n in list(cand.items()):
            if _returned_view(ix, n):
                continue
            cons = [c for t in n.outputs for c in ix.consumers.get(t.name, ())]
            if not cons or any(c.name not in cand and c.name not in group and c.op_type not in _SHAPE_READERS
                               for c in cons):
                del cand[name]
                changed = True
    # reshapes and squeezes launch nothing anyway: left as they are, a training step keeps their backward
    return [n for n in cand.values() if n.op_type in ("Transpose", "Gather", "Split")]


def _only_data_consumer(ix: _Index, node: Node) -> Node | None:
    """The one consumer of ``node``'s first output that reads its data (Shape and Size read metadata only)."""
    cs = [c for c in ix.consumers.get(node.outputs[0].name, ()) if c.op_type not in _SHAPE_READERS]
    return cs[0] if len(cs) == 1 else None


def _fusable_shapes(qkv) -> bool:
    """Whether PyTorch's fused SDPA kernels take these q, k (transposed: B x H x D x S), v: 4-D, with equal batch and
    heads (sdp_utils' dense checks). Otherwise SDPA runs its math path, kernel by kernel: NesT's 5-D blocks and a
    multi-query K of one head broadcast over the query heads (Falcon's, not expanded) take it. Unknown shapes
    pass. The math path's fp32 upcast of 16-bit inputs: predictor/math_attention.py."""
    shapes = [t.shape for t in qkv]
    if any(sh is None for sh in shapes):
        return True
    return all(len(sh) == 4 for sh in shapes) and len({tuple(sh[:2]) for sh in shapes}) == 1


def _sdpa_match(ix: _Index, sm: Node, math_path: bool = False) -> _SdpaMatch | None:
    """The SDPA call around Softmax ``sm`` that the fused kernels take; with ``math_path``, instead the call whose
    shapes they do not take (its nodes without the mask conversion, the views or the output transpose, which stay
    kernels of their own on that path)."""
    if sm.op_type != "Softmax":
        return None
    first = ix.prod(sm, 0)
    add = None
    if first is not None and first.op_type == "Add":
        add, first = first, next((ix.prod(first, i) for i in (0, 1)
                                  if ix.prod(first, i) is not None and ix.prod(first, i).op_type == "MatMul"), None)
    if first is None or first.op_type != "MatMul":
        return None
    mq, mk = ix.prod(first, 0), ix.prod(first, 1)
    if mq is None or mk is None or mq.op_type != "Mul" or mk.op_type != "Mul":
        return None
    if _scalar_const(ix, mq) is None or _scalar_const(ix, mk) is None:
        return None
    # the exporter guards fully-masked rows: Where(IsNaN(p), 0, p) between Softmax and the second MatMul
    guard: list[Node] = []
    cons = ix.consumers.get(sm.outputs[0].name, [])
    probs = sm
    if len(cons) == 2 and {c.op_type for c in cons} == {"IsNaN", "Where"}:
        isnan = next(c for c in cons if c.op_type == "IsNaN")
        where = next(c for c in cons if c.op_type == "Where")
        guard, probs = [isnan, where], where
    nxt = ix.only_consumer(probs)
    if nxt is not None and nxt.op_type == "Dropout":  # a training export: attention dropout, fused by SDPA
        guard, probs = guard + [nxt], nxt
    second = ix.only_consumer(probs)
    if second is None or second.op_type != "MatMul" or second.inputs[0].name != probs.outputs[0].name:
        return None
    extra: list[Node] = []
    mask_src = None
    if add is not None:
        mask = add.inputs[1] if add.inputs[0].name == first.outputs[0].name else add.inputs[0]
        mask_src = mask
        mp = ix.producer.get(mask.name)
        if mp is not None and mp.op_type == "Where" and ix.only_consumer(mp) is add:
            extra.append(mp)  # boolean mask turned additive: SDPA takes the boolean mask itself
            mask_src = mp.inputs[0]
    # views around the fused kernel: the layout nodes between the projections and q, k, v (head transposes, the
    # q/k/v split of a packed projection; the output's head transpose below), when the fused kernels take the shapes
    qkv = (mq.inputs[1 - _scalar_const(ix, mq)], mk.inputs[1 - _scalar_const(ix, mk)], second.inputs[1])
    if _fusable_shapes(qkv) == math_path:
        return None
    if math_path:
        group = [mq, mk, first] + ([add] if add is not None else []) + [sm] + guard + [second]
        return _SdpaMatch(group, mq, mk, second, add, [], mask_src)
    extra += _qkv_views(ix, [t.name for t in qkv], {mq.name, mk.name, second.name})
    # multi-/grouped-query attention: K and V broadcast over the query heads by Expand (+ Reshape to B x H); SDPA
    # reads the broadcast views, no copy kernel runs (the GPTBigCode-shaped decoder's kernel table)
    for t in (mk.inputs[1 - _scalar_const(ix, mk)], second.inputs[1]):
        tp = ix.producer.get(t.name)
        if tp is not None and tp.op_type == "Transpose" and len(ix.consumers.get(t.name, [])) == 1:
            t = tp.inputs[0]
        rs = ix.producer.get(t.name)
        if rs is None or rs.op_type != "Reshape" or len(ix.consumers.get(t.name, [])) != 1:
            continue
        ex = ix.producer.get(rs.inputs[0].name)
        if ex is not None and ex.op_type == "Expand" and len(ix.consumers.get(rs.inputs[0].name, [])) == 1:
            extra += [n for n in (rs, ex) if n not in extra]
    out_t = _only_data_consumer(ix, second)  # the output's head transpose (shape reads aside)
    if out_t is not None and out_t.op_type == "Transpose":
        extra.append(out_t)
    group = [mq, mk, first] + ([add] if add is not None else []) + [sm] + guard + extra + [second]
    return _SdpaMatch(group, mq, mk, second, add, extra, mask_src)


def sdpa_groups(nodes: Sequence[Node], graph_inputs: frozenset = frozenset()) -> frozenset:
    """Names of the nodes the ``sdpa`` pattern folds into fused attention kernels (before costing)."""
    ix = _Index([], nodes)
    ix.graph_inputs = graph_inputs
    out: set[str] = set()
    for n in nodes:
        if n.op_type == "Softmax" and n.name not in out:
            m = _sdpa_match(ix, n)
            if m is not None:
                out.update(x.name for x in m.group)
    return frozenset(out)


def causal_mask_reads(nodes: Sequence[Node], graph_inputs: frozenset = frozenset()) -> list[tuple[Node, str]]:
    """(node, tensor) for each fused attention call whose mask is causal (:func:`causal_mask`): the node of the call
    that reads the mask (the score Add, or the Where that turns a boolean mask additive) and the mask's tensor name
    (before costing; predictor/causal_mask.py)."""
    ix = _Index([], nodes)
    ix.graph_inputs = graph_inputs
    out: list[tuple[Node, str]] = []
    for n in nodes:
        if n.op_type == "Softmax":
            m = _sdpa_match(ix, n)
            if m is not None and m.mask_src is not None and causal_mask(ix, m.mask_src.name):
                out.append((_mask_reader(m), m.mask_src.name))
    return out


def _mask_reader(m: _SdpaMatch) -> Node:
    return m.extra[0] if m.extra and m.extra[0].op_type == "Where" else m.add


@frozen_dataclass
class MathAttention:
    """One SDPA call PyTorch runs on its math path (shapes its fused kernels do not take): the names of its nodes
    and its q, k (as the score MatMul reads it, transposed) and v inputs and its output."""

    nodes: frozenset
    q: object
    k: object
    v: object
    out: object


def math_attention_calls(nodes: Sequence[Node], graph_inputs: frozenset = frozenset()) -> list[MathAttention]:
    """The SDPA calls of ``nodes`` that run on PyTorch's math path, kernel by kernel (before costing)."""
    ix = _Index([], nodes)
    ix.graph_inputs = graph_inputs
    out: list[MathAttention] = []
    for n in nodes:
        if n.op_type != "Softmax":
            continue
        m = _sdpa_match(ix, n, math_path=True)
        if m is not None:
            out.append(MathAttention(frozenset(x.name for x in m.group), m.mq.inputs[1 - _scalar_const(ix, m.mq)],
                                     m.mk.inputs[1 - _scalar_const(ix, m.mk)], m.second.inputs[1],
                                     m.second.outputs[0]))
    return out


@pattern("sdpa", ("Softmax",))
def _sdpa(ix: _Index, sm: Node):
    m = _sdpa_match(ix, sm)
    if m is None or not ix.free(*(n.name for n in m.group)):
        return None
    group, mq, mk, second, add, extra, mask_src = m.group, m.mq, m.mk, m.second, m.add, m.extra, m.mask_src
    ws = [ix.work[n.name] for n in group]
    inputs: dict[str, float] = {}
    for node, t in ((mq, mq.inputs[1 - _scalar_const(ix, mq)]), (mk, mk.inputs[1 - _scalar_const(ix, mk)]),
                    (second, second.inputs[1])):
        inputs[t.name] = ix.work[node.name].input_bytes.get(t.name, 0.0)
    mask_made = ix.producer.get(mask_src.name) if mask_src is not None else None
    if mask_src is not None and not (mask_made is not None and mask_made.attrs.get(CAUSAL_MASK)):
        # (a causal mask built from shapes alone is the kernel's is_causal: nothing read, predictor/causal_mask.py)
        inputs[mask_src.name] = ix.work[_mask_reader(m).name].input_bytes.get(mask_src.name, 0.0)
    fused = replace(ws[-1], flops=frozen_map(_merge_flops(*ws)), bytes_read=sum(inputs.values()),
                    bytes_written=ix.work[second.name].bytes_written, kernels=1, input_bytes=frozen_map(inputs),
                    gemm=None, gemm_operand_bytes=0.0, notes=("fused scaled-dot-product attention",),
                    runtime_kernel="Attention", attention_tiles=ws[-1].gemm,
                    attention_causal=mask_src is not None and causal_mask(ix, mask_src.name))
    return [(n.name, _kept_view(w, SPLIT_VIEW) if n.op_type == "Split" else _absorbed(w)) for n, w in zip(group[:-1], ws[:-1])] \
        + [(second.name, fused)]


SAFE_SOFTMAX = "math-path SDPA's _safe_softmax: softmax, isneginf, all over the row, where (4 kernels)"
SAFE_SOFTMAX_FLOPS = 3  # per element: the -inf test, the row's all, the select


@pattern("safe_softmax", ("Softmax",))
def _safe_softmax(ix: _Index, sm: Node):
    """The softmax of an SDPA call PyTorch runs on its math path (``_fusable_shapes``): ``at::_safe_softmax`` (PyTorch
    >= 2.5), which zeroes fully masked rows: after the softmax an isneginf pass over the scores (writes a bool per
    element), an all() over each row and a where() rewriting the probabilities, 3 more kernels (SAM's 4,096-token
    global attention at batch 32: 30 ms of them beside the softmax's 20 ms, the kernel table of
    timing/blind9/samvit_base). Ignores that the where's row flags broadcast (it runs PyTorch's generic kernel)."""
    w = ix.work.get(sm.name)
    out = sm.outputs[0]
    if w is None or w.kernels != 1 or out.shape is None or _sdpa_match(ix, sm, math_path=True) is None:
        return None
    numel = prod(out.shape)
    rows = numel // out.shape[-1] if out.shape[-1] else 0
    scores_b, probs_b = w.bytes_read, w.bytes_written
    read = scores_b + numel + (probs_b + rows)  # isneginf reads the scores, all() its flags, where the probabilities
    written = numel + rows + probs_b
    flops = _merge_flops(w, OpWork(flops={WorkKind.VECTOR: SAFE_SOFTMAX_FLOPS * numel}, bytes_read=0.0,
                                   bytes_written=0.0, kernels=0))
    return [(sm.name, replace(w, flops=frozen_map(flops), bytes_read=w.bytes_read + read,
                              bytes_written=w.bytes_written + written, kernels=4, notes=w.notes + (SAFE_SOFTMAX,)))]


WELFORD = "torch.var/std: one Welford reduction kernel reading x"


def _reduced_like(a: Node, b: Node) -> bool:
    """Two reductions with outputs of one element count (the same rows reduced, keepdims or not)."""
    sa, sb = a.outputs[0].shape, b.outputs[0].shape
    return sa is not None and sb is not None and prod(sa) == prod(sb)


def _sole_reader(ix: _Index, node: Node, reader: Node) -> bool:
    """``reader`` is the only node reading ``node``'s output (it may read it twice: Mul(d, d))."""
    cs = ix.consumers.get(node.outputs[0].name, ())
    return bool(cs) and all(c is reader for c in cs)


def _var_tail(ix: _Index, r: Node) -> list[Node]:
    """What the exporter writes after a variance's mean of squares: the correction, Mul by N then Div by N - c (both
    scalar constants), then std's Sqrt; each the only reader of the one before. A lone Mul is the caller's."""
    tail: list[Node] = []
    mul = ix.only_consumer(r)
    if mul is not None and mul.op_type == "Mul" and _scalar_const(ix, mul) is not None:
        div = ix.only_consumer(mul)
        if div is not None and div.op_type == "Div" and _scalar_const(ix, div) == 1:
            tail = [mul, div]
    sqrt = ix.only_consumer(tail[-1] if tail else r)
    if sqrt is not None and sqrt.op_type == "Sqrt":
        tail.append(sqrt)
    return tail


@pattern("var_welford", ("Mul",))
def _var_welford(ix: _Index, sq: Node):
    """aten::var / std / var_mean as the TorchScript exporter writes them: ReduceMean(x) -> Sub(x, mean) ->
    Mul(d, d) -> ReduceMean [-> Mul, Div: the correction] [-> Sqrt] -> one WelfordOps reduction reading x once, its
    correction and square root in the projection (xLSTM's multi-head norm x.var, Gemma 3n's torch.std: one 45-103 us
    kernel where the decomposition costs 235-716 us, kernel tables of h100/timing/blind10). The exporter's mean and
    centred tensor launch nothing unless another node reads them. Left as costed: x computed from constants alone
    (BiT's and NFNet's weight standardisation, a batch_norm over the weights that the exporter writes around a
    BatchNormalization) and a square written as Pow (a hand-written variance runs its kernels one by one).
    FLOPs: a mean's, as the reduction class counts them (the centring and square are Welford's register updates;
    their FLOPs are dropped, not moved). Its thread loop is reduce_kernel's with two values per iteration (vt0 = 2,
    unrolled and vectorised: std_var_kernel_impl)."""
    ins = sq.inputs
    if len(ins) != 2 or ins[0] is None or ins[1] is None or ins[0].name != ins[1].name:
        return None
    d = ix.prod(sq, 0)
    if d is None or d.op_type != "Sub" or len(d.inputs) != 2 or d.inputs[0] is None:
        return None
    mu, x = ix.prod(d, 1), d.inputs[0]
    if mu is None or mu.op_type != "ReduceMean" or not mu.inputs or mu.inputs[0] is None \
            or mu.inputs[0].name != x.name or ix.is_const(d, 0):
        return None
    r = ix.only_consumer(sq)
    if r is None or r.op_type != "ReduceMean" or not _reduced_like(mu, r):
        return None
    group = [sq]
    if _sole_reader(ix, d, sq):
        group.insert(0, d)
        if _sole_reader(ix, mu, d):
            group.insert(0, mu)
    tail = _var_tail(ix, r)
    if not ix.free(*(n.name for n in group + [r] + tail)):
        return None
    wr = ix.work[r.name]
    xb = ix.work[d.name].input_bytes.get(x.name, wr.bytes_read)
    fused = replace(wr, bytes_read=xb, input_bytes=frozen_map({x.name: xb}), kernels=1, notes=wr.notes + (WELFORD,),
                    thread_loop=reduce_loop(OpContext(r, None), vt0=2, vec=2, x_bytes=xb))
    return [(n.name, _absorbed(ix.work[n.name])) for n in group + tail] + [(r.name, fused)]


RMS_NORM = "rms_norm: one vectorized_layer_norm_kernel (rms) reading x"


@pattern("rms_norm", ("Div",))
def _rms_norm(ix: _Index, div: Node):
    """aten::rms_norm as calibration/networks/export.py's symbolic writes it: Mul(x, x) -> ReduceMean(trailing axes,
    keepdims) -> Add(eps) -> Sqrt -> Div(x, .) [-> Mul(weight)] -> PyTorch's one fused kernel
    (vectorized_layer_norm_kernel with rms = true, a thread block per row: Wan 2.1's 40 norms are 5.3 ms at fp16
    batch 32 on the H100, kernel table of h100/timing/blind17_part3, where the six kernels cost ~38 ms). The fused
    node is an ``RMSNormalization`` kernel (OpWork.runtime_kernel) reading x (and the weight) once and writing y.
    FLOPs: RMSNormalization's (RMSNORM_FLOPS per element, 3 without a weight); the decomposition's are dropped, not
    moved. Left as costed: a hand-written RMSNorm (Pow, rsqrt, x * r: PyTorch runs its kernels one by one), any
    intermediate another node reads."""
    ins = div.inputs
    if len(ins) != 2 or ins[0] is None or ins[1] is None or ins[0].shape is None:
        return None
    x = ins[0]
    sqrt = ix.prod(div, 1)
    if sqrt is None or sqrt.op_type != "Sqrt" or not _sole_reader(ix, sqrt, div):
        return None
    add = ix.prod(sqrt, 0)
    if add is None or add.op_type != "Add" or len(add.inputs) != 2 or not _sole_reader(ix, add, sqrt):
        return None
    k = _scalar_const(ix, add)
    mean = ix.prod(add, 1 - k) if k is not None else None
    if mean is None or mean.op_type != "ReduceMean" or not _sole_reader(ix, mean, add):
        return None
    sq = ix.prod(mean, 0)
    if sq is None or sq.op_type != "Mul" or len(sq.inputs) != 2 \
            or any(t is None or t.name != x.name for t in sq.inputs) or not _sole_reader(ix, sq, mean):
        return None
    xs, ms = tuple(x.shape), _shape_of(mean, out=True)
    if ms is None or len(ms) != len(xs):
        return None
    lead = 0  # the normalised axes are the trailing ones, kept as 1s
    while lead < len(xs) and ms[lead] == xs[lead]:
        lead += 1
    if lead == len(xs) or any(d != 1 for d in ms[lead:]):
        return None
    width = prod(xs[lead:])
    group, tail, params = [sq, mean, add, sqrt], [], {}
    mul = ix.only_consumer(div)
    if mul is not None and mul.op_type == "Mul" and len(mul.inputs) == 2 and all(t is not None for t in mul.inputs):
        j = 1 if mul.inputs[0].name == div.outputs[0].name else 0
        w = mul.inputs[j]
        if ix.is_const(mul, j) and w.shape is not None and prod(w.shape) == width and _shape_of(mul, out=True) == xs:
            tail = [mul]
            params[w.name] = ix.work[mul.name].input_bytes.get(w.name, 0.0)
    if not ix.free(*(n.name for n in group + [div] + tail)):
        return None
    wd = ix.work[div.name]
    x_b = wd.input_bytes.get(x.name, 0.0)
    numel = prod(xs)
    flops = float((RMSNORM_FLOPS if tail else RMSNORM_FLOPS - 1) * numel)
    fused = replace(wd, flops=frozen_map({WorkKind.VECTOR: flops}),
                    bytes_read=x_b + sum(params.values()),
                    bytes_written=ix.work[(tail or [div])[-1].name].bytes_written,
                    kernels=1, input_bytes=frozen_map({x.name: x_b, **params}), weight_bytes=sum(params.values()),
                    rows=numel // max(width, 1), runtime_kernel="RMSNormalization", notes=wd.notes + (RMS_NORM,))
    return [(n.name, _absorbed(ix.work[n.name])) for n in group + tail] + [(div.name, fused)]


GROUP_NORM = "F.group_norm: row moments, fused parameters, apply (native_group_norm, 3 kernels)"


def _shape_of(node: Node, i: int = 0, out: bool = False) -> tuple | None:
    ts = node.outputs if out else node.inputs
    t = ts[i] if i < len(ts) else None
    return tuple(t.shape) if t is not None and t.shape is not None else None


def _channel_affine(ix: _Index, node: Node | None, op: str, y: str, channels: int) -> int | None:
    """Index of the constant per-channel operand ([C, 1, ...] or [C]) of a Mul/Add ``node`` whose other operand is
    ``y``; None when ``node`` is not such an op."""
    if node is None or node.op_type != op or len(node.inputs) != 2 or any(t is None for t in node.inputs):
        return None
    k = 1 if node.inputs[0].name == y else 0 if node.inputs[1].name == y else None
    if k is None or not ix.is_const(node, k):
        return None
    shape = node.inputs[k].shape
    return k if shape is not None and prod(shape) == channels else None


@pattern("group_norm", ("InstanceNormalization",))
def _group_norm(ix: _Index, inorm: Node):
    """F.group_norm as the TorchScript exporter writes it: Reshape(x [N, C, ...] -> [N, G, -1]) ->
    InstanceNormalization (constant unit scale and zero bias of G) -> Reshape(back to x's shape) [-> Mul(weight
    [C, 1, ...]) -> Add(bias)] -> native_group_norm's kernels on x (graph/ops/normalization.group_norm: row moments
    with their thread loop, fused parameters, one apply pass writing y). The reshapes are views; the affine Mul and
    Add are the apply pass's FMA. Measured: the SD VAE decoder's 30 group norms are 3 kernels each, 12.3 of its 21.7
    ms at fp16 batch 1 on the H100 (kernel table of h100/timing/blind15), where the decomposition costs 6 kernels
    and no loop. Under autocast the cast to fp32 between the first reshape and the norm stays a kernel (group_norm
    is on autocast's fp32 list: PyTorch casts its input). FLOPs: the instance norm's (GROUPNORM_FLOPS per element,
    the apply's FMA included); the Mul's and Add's are dropped, not moved. Left as costed: an instance norm of its
    own (no Reshape before it), one whose statistics another node reads, one with non-constant parameters."""
    r1, reader = ix.prod(inorm, 0), inorm  # reader: the node reading the first reshape
    if r1 is not None and r1.op_type == "AmpCast" and r1.domain == "ai.predictor":  # autocast's cast to fp32: kept
        if _only_data_consumer(ix, r1) is not inorm:
            return None
        r1, reader = ix.prod(r1, 0), r1
    if r1 is None or r1.op_type != "Reshape" or not r1.inputs or r1.inputs[0] is None:
        return None
    x, grouped = _shape_of(r1), _shape_of(inorm)
    if x is None or grouped is None or len(x) < 3 or len(grouped) != 3 or grouped[0] != x[0] or x[1] % grouped[1] \
            or not (ix.is_const(inorm, 1) and ix.is_const(inorm, 2)) or _only_data_consumer(ix, r1) is not reader:
        return None
    r2 = _only_data_consumer(ix, inorm)
    if r2 is None or r2.op_type != "Reshape" or _shape_of(r2, out=True) != x:
        return None
    group, tail = ([r1] if reader is inorm else []), [r2]
    params: dict[str, float] = {}  # the affine's weight and bias: bytes read
    for op in ("Mul", "Add"):
        nxt = _only_data_consumer(ix, tail[-1])
        k = _channel_affine(ix, nxt, op, tail[-1].outputs[0].name, x[1])
        if k is None:
            break
        tail.append(nxt)
        params[nxt.inputs[k].name] = ix.work[nxt.name].input_bytes.get(nxt.inputs[k].name, 0.0)
    if not ix.free(*(n.name for n in group + [inorm] + tail)):
        return None
    w = ix.work[inorm.name]
    x_b = w.input_bytes.get(inorm.inputs[0].name, 0.0) / 2.0  # (instance norm reads its input twice)
    y_b = ix.work[tail[-1].name].bytes_written if params else x_b  # (a reshape writes nothing; y is x's size, type)
    fused = replace(w, kernels=3 if params else 2, bytes_read=2.0 * x_b + sum(params.values()), bytes_written=y_b,
                    input_bytes=frozen_map({inorm.inputs[0].name: 2.0 * x_b, **params}), notes=w.notes + (GROUP_NORM,),
                    thread_loop=group_norm_loop(x[0], grouped[1], grouped[2], x_b))
    return [(n.name, _absorbed(ix.work[n.name])) for n in group + tail] + [(inorm.name, fused)]


SPLIT_VIEW = "q/k/v split of a packed projection: views SDPA reads"
WINDOW_VIEW = "a slice (or its view) a cat reads in place: an unfold window or a rolled piece"


def _kept_view(w: OpWork, note: str) -> OpWork:
    """A view the runtime launches nothing for but keeps in the graph (a Split around fused attention, a slice a cat
    reads): no kernel, but not absorbed, so a training step's autograd passes the gradients through it, as
    torch.split's views do. ``note`` says which."""
    return replace(w, flops=_NONE, bytes_read=0.0, bytes_written=0.0, kernels=0, input_bytes=_NONE,
                   notes=w.notes + (note,))


_WINDOW_VIEWS = frozenset({"Transpose", "Reshape", "Squeeze", "Unsqueeze"})


@pattern("unfold_windows", ("Concat",))
def _unfold_windows(ix: _Index, cat: Node):
    """A Concat of two or more slices of one tensor, each reaching it through layout views only, each used only
    there: the export of ``Tensor.unfold`` (a Slice, a Transpose and an Unsqueeze per window, then Concat) or a cat
    of a tensor's own pieces. PyTorch's slices and unfold are strided views: the slices and their views launch nothing
    and the Concat's copy is the one kernel (PatchTSMixer's patching on the H200: one 2.8 us kernel, where its 63
    windows had been costed as 128). The slices and their views stay views, not absorbed: a training step passes the
    cat's gradient back through them. Ignores: a window view PyTorch would copy first (a consumer needing contiguous
    memory)."""
    ins = cat.inputs
    if len(ins) < 2:
        return None
    src = None
    chain: list[Node] = []
    for t in ins:
        if t is None:
            return None
        n = ix.producer.get(t.name)
        nxt = cat
        while n is not None and n.op_type in _WINDOW_VIEWS and n.inputs and n.inputs[0] is not None:
            if _only_data_consumer(ix, n) is not nxt:
                return None
            chain.append(n)
            nxt, n = n, ix.producer.get(n.inputs[0].name)
        if n is None or n.op_type != "Slice" or not n.inputs or n.inputs[0] is None \
                or _only_data_consumer(ix, n) is not nxt:
            return None
        if src is None:
            src = n.inputs[0].name
        elif n.inputs[0].name != src:
            return None
        chain.append(n)
    names = [n.name for n in chain]
    if len(set(names)) != len(names) or not ix.free(cat.name, *names):
        return None
    return [(n.name, _kept_view(ix.work[n.name], WINDOW_VIEW)) for n in chain] + [(cat.name, ix.work[cat.name])]


@pattern("linear_bias", ("MatMul", "Gemm"))
def _linear_bias(ix: _Index, mm: Node):
    if mm.op_type not in ("MatMul", "Gemm"):
        return None
    add = ix.only_consumer(mm)
    if add is None or add.op_type != "Add" or not ix.free(mm.name, add.name):
        return None
    other = 1 if add.inputs[0].name == mm.outputs[0].name else 0
    t = add.inputs[other]
    if t is None or t.shape is None or len([d for d in t.shape if d != 1]) > 1 or not ix.is_const(add, other):
        return None
    wm, wa = ix.work[mm.name], ix.work[add.name]
    bias_bytes = wa.input_bytes.get(t.name, 0.0)
    fused = replace(wm, flops=frozen_map(_merge_flops(wm, wa)), bytes_read=wm.bytes_read + bias_bytes,
                    input_bytes=frozen_map({**wm.input_bytes, t.name: bias_bytes}),
                    bytes_written=wa.bytes_written, notes=wm.notes + ("bias add in the GEMM epilogue",))
    return [(mm.name, fused), (add.name, _absorbed(wa))]


def _chain_fuse(ix: _Index, group: list[Node], x_name: str) -> list[tuple[str, OpWork]] | None:
    names = [n.name for n in group]
    if not ix.free(*names):
        return None
    ws = list(map(ix.work.__getitem__, names))
    last = ws[-1]
    # x's bytes once (a node reading x twice, x * x, records them twice); the largest over the chain (plain loops:
    # a generator per node costs more than the loop)
    xb = None
    for n, w in zip(group, ws):
        reads = 0
        for t in n.inputs:
            if t is not None and t.name == x_name:
                reads += 1
        b = w.input_bytes.get(x_name, 0.0) / max(1, reads)
        if xb is None or b > xb:  # (as max() keeps the first of equal values)
            xb = b
    fused = replace(last, flops=frozen_map(_merge_flops(*ws)), bytes_read=xb, input_bytes=frozen_map({x_name: xb}),
                    kernels=1, notes=("one elementwise kernel in PyTorch",))
    return [(n.name, _absorbed(w)) for n, w in zip(group[:-1], ws[:-1])] + [(group[-1].name, fused)]


@pattern("gelu_erf", ("Erf",))
def _gelu_erf(ix: _Index, erf: Node):
    if erf.op_type != "Erf":
        return None
    div = ix.prod(erf, 0)
    if div is None or div.op_type not in ("Div", "Mul") or _scalar_const(ix, div) is None:
        return None
    x = div.inputs[1 - _scalar_const(ix, div)]
    add = ix.only_consumer(erf)
    if add is None or add.op_type != "Add" or _scalar_const(ix, add) is None:
        return None
    chain = [div, erf, add]
    cur = ix.only_consumer(add)
    for _ in range(2):
        if cur is None or cur.op_type != "Mul":
            return None
        chain.append(cur)
        nxt = ix.only_consumer(cur)
        if nxt is None or nxt.op_type != "Mul" or len(chain) == 5:
            break
        cur = nxt
    if len(chain) < 5 and not any(t is not None and t.name == x.name for t in chain[-1].inputs):
        return None
    return _chain_fuse(ix, chain, x.name)


def _mul_of(ix: _Index, node: Node | None, first: str, second: str) -> bool:
    """``node`` is Mul(first, second), in that input order (tensor names)."""
    return node is not None and node.op_type == "Mul" and len(node.inputs) == 2 and \
        node.inputs[0] is not None and node.inputs[1] is not None and \
        (node.inputs[0].name, node.inputs[1].name) == (first, second)


@pattern("gelu_tanh", ("Tanh",))
def _gelu_tanh(ix: _Index, th: Node):
    """``F.gelu(x, approximate="tanh")`` as the TorchScript exporter writes it: half * (x * (1 + tanh(beta * (x +
    kappa * (x * (x * x)))))), one kernel in PyTorch. Only the exporter's operand order matches: the same formula
    written out in Python (x * x * x, torch.pow) runs as separate kernels eagerly and stays unfused."""
    if th.op_type != "Tanh":
        return None
    inner = ix.prod(th, 0)
    if inner is None or inner.op_type != "Mul" or _scalar_const(ix, inner) is None:
        return None
    add = ix.prod(inner, 1 - _scalar_const(ix, inner))
    if add is None or add.op_type != "Add" or ix.only_consumer(add) is not inner:
        return None
    km = ix.prod(add, 1)
    if km is None or km.op_type != "Mul" or _scalar_const(ix, km) is None or ix.only_consumer(km) is not add:
        return None
    x = add.inputs[0]
    cube = ix.prod(km, 1 - _scalar_const(ix, km))
    sq = ix.prod(cube, 1) if cube is not None else None
    if sq is None or not _mul_of(ix, sq, x.name, x.name) or not _mul_of(ix, cube, x.name, sq.outputs[0].name) \
            or ix.only_consumer(sq) is not cube or ix.only_consumer(cube) is not km:
        return None
    one = ix.only_consumer(th)
    if one is None or one.op_type != "Add" or _scalar_const(ix, one) is None:
        return None
    mx = ix.only_consumer(one)
    if not _mul_of(ix, mx, x.name, one.outputs[0].name):
        return None
    half = ix.only_consumer(mx)
    if half is None or half.op_type != "Mul" or _scalar_const(ix, half) is None:
        return None
    return _chain_fuse(ix, [sq, cube, km, add, inner, th, one, mx, half], x.name)


@pattern("silu", ("Sigmoid",))
def _silu(ix: _Index, sig: Node):
    if sig.op_type != "Sigmoid":
        return None
    mul = ix.only_consumer(sig)
    x = sig.inputs[0]
    if mul is None or mul.op_type != "Mul" or x.name not in [t.name for t in mul.inputs if t is not None]:
        return None
    return _chain_fuse(ix, [sig, mul], x.name)




@pattern("stacked_rnn", ("LSTM", "GRU", "RNN"))  # the ops with the registry trait recurrent
def _stacked_rnn(ix: _Index, node: Node):
    if not op_traits(node.op_type).recurrent or node.name not in ix.work:
        return None
    src = ix.prod(node, 0)
    for _ in range(8):
        if src is None or op_traits(src.op_type).view not in STORAGE_VIEWS:
            break
        src = ix.prod(src, 0)
    if src is None or not op_traits(src.op_type).recurrent or is_bidirectional_rnn(node) or is_bidirectional_rnn(src):
        return None
    return [(node.name, replace(ix.work[node.name], overlaps_producer=True))]



# elements from which a value computed from constants and shapes is a device tensor in eager PyTorch: scalars and
# shape vectors are Python numbers and tuples (an attention scale, a reshape target), a longer tensor is built by
# device kernels every forward (torch.arange(n, device=...) and what follows it: rotary tables, position grids, masks)
_SMALL = 8


@pattern("const_fold")
def _const_fold(ix: _Index, node: Node):
    """Arithmetic on constants alone of at most _SMALL elements (attention scales, shape arithmetic) is a Python
    value in eager; a longer result runs its kernels."""
    outs = node.outputs
    if outs and outs[0].shape is not None and prod(outs[0].shape) > _SMALL:  # most nodes: an early no
        return None
    w = ix.work.get(node.name)
    if w is None or w.kernels == 0 or not node.inputs or node.op_type in ("Constant", "ConstantOfShape") \
            or node.domain == "ai.predictor":  # the predictor's own kernels (autocast casts) run as costed
        return None
    out = node.outputs[0]
    if out.shape is None or prod(out.shape) > _SMALL:
        return None
    if all(ix.is_const(node, k) for k, t in enumerate(node.inputs) if t is not None):
        return [(node.name, _absorbed(w))]
    return None


SLICE_VIEW = "a slice its elementwise consumers read in place (a view in PyTorch)"
_READS_STRIDED = frozenset({"Cast"})  # kernels of other classes that take a strided operand as it is (TensorIterator)


def tensor_iterator(node: Node) -> bool:
    """A node whose kernel is PyTorch's TensorIterator (reads strided operands as they are, writes its output in its
    first full-shape operand's memory order): an elementwise op that is not a view itself (a Reshape of a view
    copies), or a Cast."""
    t = op_traits(node.op_type)
    return (t.cls == "elementwise" and t.view is None) or node.op_type in _READS_STRIDED


def _reads_strided(node: Node) -> bool:
    """A node whose kernel reads a strided view directly: a TensorIterator kernel, a reader of the shape alone, or a
    Slice (a view of the view: ``mask[a:b][:, c:d]``, one copy at most where the last view is read)."""
    return tensor_iterator(node) or node.op_type in _SHAPE_READERS or node.op_type == "Slice"


@pattern("slice_views", ("Slice", "Split"))
def _slice_views(ix: _Index, node: Node):
    """``torch.chunk``, ``split``, ``narrow`` and ``x[..., a:b]`` make views: the elementwise kernels that read them
    (add, mul, the activations: TensorIterator) take the strided slice as it is, and nothing copies it. A Slice or
    Split every output of which is read, and read only by such kernels (:func:`_reads_strided`), launches nothing;
    its readers' bytes are unchanged (they read the slice's elements). Left as one copy: a slice that a reshape, a
    GEMM, a concat, a convolution or no node reads (a graph output), or that another pattern took (q/k/v splits
    around attention). Measured: SD-1.5's GEGLU (``h, gate = proj(x).chunk(2, -1)``; ``h * gelu(gate)``) launches
    the gelu and the mul alone (kernel tables of h100/timing/blind14); the copies were 10% of its predicted time at
    fp16 batch 32. Ignores: the slower strided path of a kernel whose operand is not contiguous; in a training step
    the view's backward (slice_backward's zeros and copy, split's cat of the gradients), which predictor/train prices
    as a view's, as for the q/k/v splits."""
    w = ix.work.get(node.name)
    if w is None or w.kernels == 0:
        return None
    for t in node.outputs:
        if not t.name:
            continue
        readers = ix.consumers.get(t.name)
        if not readers or not all(_reads_strided(c) for c in readers):
            return None
    return [(node.name, _kept_view(w, SLICE_VIEW))]


def apply(seq: Sequence[tuple[Node, OpWork]], all_nodes: Sequence[Node],
          graph_inputs: frozenset = frozenset()) -> list[tuple[Node, OpWork]]:
    """The sequence with each recognised pattern folded into the kernels the runtime launches."""
    out = list(seq)
    for k, w in rewrites(seq, all_nodes, graph_inputs).items():
        out[k] = (out[k][0], w)
    return out


def rewrites(seq: Sequence[tuple[Node, OpWork]], all_nodes: Sequence[Node],
             graph_inputs: frozenset = frozenset()) -> dict[int, OpWork]:
    """The works :func:`apply` puts in place of those of ``seq``, by position in ``seq``."""
    ix = _Index(seq, all_nodes)
    ix.graph_inputs = graph_inputs
    changed: dict[str, OpWork] = {}
    by_op: dict[str, list[int]] = {}  # op type -> positions in seq
    for k, (node, _) in enumerate(seq):
        at = by_op.get(node.op_type)
        if at is None:
            by_op[node.op_type] = [k]
        else:
            at.append(k)
    everything = range(len(seq))
    for name, fn in _PATTERNS.items():
        ops = _TRIGGERS[name]
        if ops is None:
            where = everything
        else:
            where = [k for op in ops for k in by_op.get(op, ())]
            if len(ops) > 1:
                where.sort()
        for k in where:
            node = seq[k][0]
            if node.name in ix.taken:
                continue
            found = fn(ix, node)
            if not found:
                continue
            for n, w in found:
                changed[n] = w
                ix.work[n] = w
                ix.taken.add(n)
    if not changed:
        return {}
    at = dict(zip(map(_name_of, map(_first, seq)), range(len(seq))))  # name -> position (C calls)
    if len(at) == len(seq):  # (unique names: one position each)
        return {at[n]: w for n, w in changed.items() if n in at}
    return {k: changed[nd.name] for k, (nd, _) in enumerate(seq) if nd.name in changed}


_first = itemgetter(0)
_name_of = attrgetter("name")


__all__ = ["apply", "pattern", "rewrites", "WorkKind"]
