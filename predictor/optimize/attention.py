"""``attention``: MatMul(q, k^T) [-> scale] [-> mask] -> Softmax -> MatMul(., v) as a compiler lowers it.

Matched from each last-axis Softmax: before it, up to six of Mul/Div by a scalar constant (scale on the
scores), Add (additive mask or bias, e.g. Swin's relative-position bias, or a boolean mask turned additive
by Where(mask, 0, -inf)), Where(mask, scores, fill) and views (Swin's shifted-window mask is added to a
per-window view of the scores), back to the first MatMul; on the q and k operands a
scalar Mul/Div (scale on q or k) and a head Transpose; on v a head Transpose; after the second MatMul an
output Transpose; after the Softmax optionally the exporter's NaN guard Where(IsNaN(p), 0, p). Every
intermediate must be read only inside the pattern.

Two lowerings, as PyTorch's SDPA dispatch picks them (TorchInductor matches these patterns to SDPA and
keeps SDPA calls as they are):

* ``flash`` (``FusedAttention``): one kernel reading q, k, v and the mask/bias, writing the output; the
  score matrix never reaches memory. FLOPs: the members' (4*B*H*Sq*Skv*D MATMUL + scale, mask, softmax).
  The TorchScript exporter's own SDPA form (q and k both scaled by sqrt(scale)) is left to graph/runtime.py,
  which already folds it into the same kernel (PyTorch eager runs it fused).
* ``math`` (SDPA's math fallback), when the mask is broadcast along the key axis (the mask tensor, or the
  input of the Expand that built it, has size 1 in its last dimension while the keys are more than one):
  the fused kernels (cuDNN, memory-efficient) need a mask whose last dimension is materialised, so SDPA
  falls back to its math path, which upcasts 16-bit inputs to fp32. Checked on the H200 (torch 2.11,
  fp16, 32x12x128x64, eager and torch.compile alike): a (32,1,128,128) boolean mask expanded from
  (1,1,128,1) runs ``triton_poi_fused__to_copy_mul`` (q, k), ``sm80_xmma_gemm_f32f32_..._ffma`` (QK^T),
  ``triton_per_fused__safe_softmax``, a cast of v, the fp32 PV GEMM and a cast back (7 kernels, ~91 us);
  a key-varying mask of the same shape runs cuDNN's flash kernel (15 us). The transformers exports of
  DistilBERT and BERT build such a mask (their all-ones attention mask, which eager mode drops before
  SDPA, but which is traced and materialised under torch.compile). The group becomes seven nodes in
  that order: ``FusedElementwise`` (scale + cast of q, then of k), ``FusedMatMul`` (QK^T),
  ``FusedSoftmax`` (scale, mask, softmax, guard), ``FusedElementwise`` (cast of v), ``FusedMatMul`` (PV),
  ``FusedElementwise`` (cast back); intermediates in fp32 (``FP32_TENSORS``), the matmuls on CUDA cores
  (graph/ops/fused.py). At fp32 storage the casts are free and the matmuls run as the policy says.

Ignores: causal masks that let flash kernels skip tiles (counted in full), dropout, GQA head broadcasting,
the cost of a mask on the fused kernel's speed (measured: 15 us with a boolean mask vs 10 us without).
"""
from __future__ import annotations

from ..graph.fused import (
    BACKEND, DOMAIN, FP32_TENSORS, FUSED_ATTENTION, FUSED_ELEMENTWISE, FUSED_MATMUL, FUSED_SOFTMAX, MEMBER_NODES,
    MEMBERS, STAGE, UPCAST,
)
from ..graph.loader import Graph
from ..graph.registry import op_traits
from ..graph.runtime import sdpa_groups
from ..types import DEFAULT_OPSET, Node, TensorInfo, frozen_map
from ._graph import GraphIndex, fused_node, rewrite, scalar_const
from .registry import optimization

_DEFAULT = ("", "ai.onnx")
_MAX_PRE = 6


class _Match:
    def __init__(self):
        self.q_side: list[Node] = []  # q-operand nodes (transpose, scale), producer first
        self.k_side: list[Node] = []
        self.v_side: list[Node] = []
        self.pre: list[Node] = []  # between the first MatMul and the Softmax, MatMul side first
        self.mask_nodes: list[Node] = []  # Where(mask, 0, -inf) turning a boolean mask additive
        self.guard: list[Node] = []
        self.out_side: list[Node] = []
        self.masks: list[TensorInfo] = []  # mask/bias tensors the kernel reads
        self.first: Node | None = None
        self.sm: Node | None = None
        self.second: Node | None = None
        self.q = self.k = self.v = None  # the tensors entering the kernel

    @property
    def members(self) -> list[Node]:
        return (self.q_side + self.k_side + [self.first] + self.mask_nodes + self.pre + [self.sm] + self.guard
                + self.v_side + [self.second] + self.out_side)

    @property
    def output(self) -> TensorInfo:
        return (self.out_side[-1] if self.out_side else self.second).outputs[0]


def _is(n: Node | None, *ops: str) -> bool:
    return n is not None and n.op_type in ops and n.domain in _DEFAULT


def _is_reshape(n: Node | None) -> bool:
    """A reshaping view (Reshape, Flatten, Squeeze, Unsqueeze: registry.OpTraits.view "reshape")."""
    return n is not None and n.domain in _DEFAULT and op_traits(n.op_type).view == "reshape"


def _scale(ix: GraphIndex, n: Node, operand: TensorInfo) -> bool:
    """n multiplies or divides ``operand`` by a scalar constant."""
    i = scalar_const(ix, n)
    if i is None or n.inputs[1 - i] is None or n.inputs[1 - i].name != operand.name:
        return False
    return n.op_type == "Mul" or (n.op_type == "Div" and i == 1)


def _operand_side(ix: GraphIndex, t: TensorInfo, consumer: Node, allow_scale: bool) -> tuple[list[Node], TensorInfo]:
    """Scale and head-transpose nodes producing operand ``t`` (each read only by the next), and the tensor
    before them."""
    side: list[Node] = []
    cur, nxt = t, consumer
    for _ in range(2):
        p = ix.prod(cur)
        if p is None or ix.sole_consumer(p) is not nxt:
            break
        if allow_scale and _is(p, "Mul", "Div") and not any(_is(s, "Mul", "Div") for s in side):
            i = scalar_const(ix, p)
            if i is None or (p.op_type == "Div" and i != 1):
                break
            side.insert(0, p)
            cur, nxt = p.inputs[1 - i], p
        elif _is(p, "Transpose") and not any(_is(s, "Transpose") for s in side):
            side.insert(0, p)
            cur, nxt = p.inputs[0], p
        else:
            break
    return side, cur


def _leads_to_matmul(ix: GraphIndex, t: TensorInfo, depth: int = _MAX_PRE) -> bool:
    for _ in range(depth + 1):
        p = ix.prod(t)
        if _is(p, "MatMul"):
            return True
        if p is None or not (_is(p, "Mul", "Div", "Add", "Where") or _is_reshape(p)):
            return False
        t = p.inputs[1] if p.op_type == "Where" else next(
            (x for x in p.inputs if x is not None and not ix.is_static(x)), None)
        if t is None:
            return False
    return False


def match(ix: GraphIndex, sm: Node) -> _Match | None:
    if not _is(sm, "Softmax") or sm.inputs[0] is None or sm.inputs[0].shape is None:
        return None
    rank = len(sm.inputs[0].shape)
    axis = int(sm.attrs.get("axis", -1 if (ix.graph.opset or DEFAULT_OPSET) >= 13 else 1))
    if rank < 3 or axis not in (-1, rank - 1):
        return None
    m = _Match()
    m.sm = sm
    # after the softmax: the NaN guard, then the second MatMul
    probs = sm
    cons = ix.cons(sm.outputs[0])
    if len(cons) == 2 and {c.op_type for c in cons} == {"IsNaN", "Where"}:
        isnan = next(c for c in cons if c.op_type == "IsNaN")
        where = next(c for c in cons if c.op_type == "Where")
        if ix.sole_consumer(isnan) is not where:
            return None
        m.guard, probs = [isnan, where], where
    second = ix.sole_consumer(probs)
    if not _is(second, "MatMul") or second.inputs[0].name != probs.outputs[0].name:
        return None
    m.second = second
    # before it: scale / mask back to the first MatMul
    cur_t, nxt = sm.inputs[0], sm
    for _ in range(_MAX_PRE + 1):
        p = ix.prod(cur_t)
        if p is None or ix.sole_consumer(p) is not nxt:
            return None
        if _is(p, "MatMul"):
            m.first = p
            break
        if _is(p, "Mul", "Div") and scalar_const(ix, p) is not None:
            i = scalar_const(ix, p)
            if p.op_type == "Div" and i != 1:
                return None
            m.pre.insert(0, p)
            cur_t, nxt = p.inputs[1 - i], p
        elif _is(p, "Add") and len(p.inputs) == 2:
            a, b = p.inputs
            chain, mask = (a, b) if _leads_to_matmul(ix, a) else (b, a) if _leads_to_matmul(ix, b) else (None, None)
            if chain is None:
                return None
            mp = ix.prod(mask)
            if _is(mp, "Where") and ix.sole_consumer(mp) is p and all(ix.is_static(x) for x in mp.inputs[1:]):
                m.mask_nodes.append(mp)  # boolean mask made additive: the kernel reads the boolean mask
                m.masks.append(mp.inputs[0])
            else:
                m.masks.append(mask)
            m.pre.insert(0, p)
            cur_t, nxt = chain, p
        elif _is(p, "Where") and len(p.inputs) == 3 and ix.is_static(p.inputs[2]):
            m.pre.insert(0, p)
            m.masks.append(p.inputs[0])
            cur_t, nxt = p.inputs[1], p
        elif _is_reshape(p) and p.inputs and p.inputs[0] is not None:  # e.g. Swin's per-window mask view
            m.pre.insert(0, p)
            cur_t, nxt = p.inputs[0], p
        else:
            return None
    if m.first is None:
        return None
    m.q_side, m.q = _operand_side(ix, m.first.inputs[0], m.first, True)
    m.k_side, m.k = _operand_side(ix, m.first.inputs[1], m.first, True)
    m.v_side, m.v = _operand_side(ix, second.inputs[1], second, False)
    out = ix.sole_consumer(second)
    if _is(out, "Transpose"):
        m.out_side = [out]
    for t in (m.q, m.k, m.v):
        if t is None or t.shape is None or len(t.shape) < 2:
            return None
    names = {n.name for n in m.members}
    final = m.output.name
    for n in m.members:  # nothing but the output leaves the kernel
        for t in n.outputs:
            if t.name and t.name != final and (t.name in ix.outputs or any(c.name not in names for c in ix.cons(t))):
                return None
    return m


def key_broadcast(ix: GraphIndex, m: _Match) -> bool:
    """A mask broadcast along the key axis: SDPA's fused kernels refuse it (see the module docstring)."""
    skv = m.first.outputs[0].shape[-1] if m.first.outputs[0].shape else 0
    if skv <= 1:
        return False
    for t in m.masks:
        cur = t
        for _ in range(6):
            if cur is None or cur.shape is None or not cur.shape:
                break
            if cur.shape[-1] == 1:
                return True
            p = ix.prod(cur)
            if _is(p, "Expand"):
                src = p.inputs[0]
                return src is not None and src.shape is not None and len(src.shape) >= 1 and src.shape[-1] == 1
            if _is(p, "Cast", "Not", "Identity"):
                cur = p.inputs[0]
            elif _is(p, "Where"):
                cur = p.inputs[0]
            else:
                break
    return False


def _fp32(t: TensorInfo, name: str) -> TensorInfo:
    return TensorInfo(name, "float32", t.shape)


def _math_stages(ix: GraphIndex, m: _Match) -> list[Node]:
    """SDPA's math path: seven nodes with fp32 intermediates (see the module docstring)."""
    base = m.second.name
    q32 = _fp32(m.q_side[-1].outputs[0] if m.q_side else m.q, f"{base}::q_fp32")
    k32 = _fp32(m.k_side[-1].outputs[0] if m.k_side else m.k, f"{base}::k_fp32")
    s32 = m.first.outputs[0]
    p32 = _fp32(m.second.inputs[0], f"{base}::p_fp32")
    v32 = _fp32(m.v_side[-1].outputs[0] if m.v_side else m.v, f"{base}::v_fp32")
    o32 = _fp32(m.second.outputs[0], f"{base}::o_fp32")
    produced = {t.name for n in m.members for t in n.outputs}

    def stage(kind: str, members: list[Node], op: str, ins: list[TensorInfo], out: TensorInfo,
              fp32: list[TensorInfo]) -> Node:
        ordered = sorted(members, key=lambda n: ix.pos[n.name])
        consts = [t for n in ordered for t in n.inputs
                  if t is not None and ix.is_static(t) and t.name not in produced]
        uniq = list({t.name: t for t in ins + consts}.values())
        attrs = {MEMBERS: tuple(n.name for n in ordered), MEMBER_NODES: tuple(ordered), UPCAST: True,
                 BACKEND: "math", STAGE: kind, FP32_TENSORS: tuple(t.name for t in fp32)}
        return Node(name=f"{base}::{kind}", op_type=op, domain=DOMAIN, inputs=tuple(uniq), outputs=(out,),
                    attrs=frozen_map(attrs), scope=m.second.scope)

    return [
        stage("q", m.q_side, FUSED_ELEMENTWISE, [m.q], q32, [q32]),
        stage("k", m.k_side, FUSED_ELEMENTWISE, [m.k], k32, [k32]),
        stage("qk", [m.first], FUSED_MATMUL, [q32, k32], s32, [q32, k32, s32]),
        stage("softmax", m.pre + m.mask_nodes + [m.sm] + m.guard, FUSED_SOFTMAX, [s32] + m.masks, p32, [s32, p32]),
        stage("v", m.v_side, FUSED_ELEMENTWISE, [m.v], v32, [v32]),
        stage("pv", [m.second], FUSED_MATMUL, [p32, v32], o32, [p32, v32, o32]),
        stage("out", m.out_side, FUSED_ELEMENTWISE, [o32], m.output, [o32]),
    ]


@optimization("attention", order=30)
def attention(graph: Graph) -> Graph:
    ix = GraphIndex(graph)
    runtime_fused = sdpa_groups(graph.nodes, ix.graph_inputs)
    groups = []
    taken: set[str] = set()
    for sm in graph.nodes:
        m = match(ix, sm) if _is(sm, "Softmax") else None
        if m is None or any(n.name in taken for n in m.members):
            continue
        if key_broadcast(ix, m):
            new = _math_stages(ix, m)
        elif sm.name in runtime_fused:
            continue  # the exporter's SDPA form: graph/runtime.py folds it into the same fused kernel
        else:
            ins: list[TensorInfo] = [m.q, m.k, m.v] + m.masks
            produced = {t.name for n in m.members for t in n.outputs}
            ins += [t for n in m.members for t in n.inputs
                    if t is not None and ix.is_static(t) and t.name not in produced]
            uniq = list({t.name: t for t in ins}.values())
            new = [fused_node(ix, m.members, FUSED_ATTENTION, {BACKEND: "flash"}, name=m.second.name,
                              inputs=uniq, outputs=[m.output])]
        taken.update(n.name for n in m.members)
        groups.append((m.members, new))
    return rewrite(ix, groups)
