"""Quantised graphs: the precision each op really runs at, and the Q/DQ nodes a GPU runtime fuses away.

* QDQ (as onnxruntime's static quantiser and TensorRT's explicit quantisation write it): a Conv, MatMul or
  Gemm whose data input and weight input are both DequantizeLinear outputs runs as one int8 kernel. The
  DequantizeLinear nodes in front of it are fused into it (it reads their int8 inputs; a DQ of a weight is
  folded anyway), and a QuantizeLinear that is the sole consumer of its output is fused into its epilogue (it
  writes int8). The bias (the DQ of an int32 tensor) is read as int32. A DQ that also feeds other ops stays,
  as its own kernel, for them.
* QLinearConv, QLinearMatMul, ConvInteger, MatMulInteger run at int8 whatever ``--precision`` says.
* Weight-only MatMulNBits (com.microsoft) runs at the activations' precision (the given one): its packed
  weights are read as stored (graph/ops/quant.py).
Those nodes get the ``int8`` policy (INT8 tensor-core MATMUL, 1-byte float storage for the tensors they touch);
all others keep the given policy. The rewrite returns a new graph; predictions of graphs with no Q/DQ or
integer ops are unchanged (the pass does nothing). Ignores: per-channel scale reads (a few hundred bytes),
and runtimes that cannot fuse a pattern (they run the DQ/Q kernels: ``--precision`` without the pass is not
offered, the QDQ graph is assumed deployed to an int8 engine).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Mapping

from .graph.loader import Graph
from .precision import POLICIES, PrecisionPolicy
from .types import Node, frozen_map

INT8_OPS = frozenset({"QLinearConv", "QLinearMatMul", "ConvInteger", "MatMulInteger"})
QDQ_OPS = {"Conv": (0, 1, 2), "MatMul": (0, 1), "Gemm": (0, 1, 2)}   # data, weight (, bias) slots


@dataclass(frozen=True)
class QuantGraph:
    """A quantised graph with int8 node policies."""

    graph: Graph
    node_policy: Mapping[str, PrecisionPolicy]
    fused: int          # Q/DQ nodes fused into int8 kernels
    notes: tuple[str, ...] = ()


def has_quantisation(graph: Graph) -> bool:
    return any(n.op_type in INT8_OPS or n.op_type in ("DequantizeLinear", "QuantizeLinear") for n in graph.nodes)


def quantise(graph: Graph) -> QuantGraph:
    """Rewrite the QDQ patterns and give int8 nodes the int8 policy (see the module docstring)."""
    int8 = POLICIES["int8"]
    producer: dict[str, Node] = {}
    consumers: dict[str, list[str]] = {}
    for n in graph.nodes:
        for t in n.outputs:
            if t.name:
                producer[t.name] = n
        for t in n.inputs:
            if t is not None:
                consumers.setdefault(t.name, []).append(n.name)
    outputs = {t.name for t in graph.outputs}
    policies: dict[str, PrecisionPolicy] = {n.name: int8 for n in graph.nodes if n.op_type in INT8_OPS}
    rewired: dict[str, Node] = {}
    dropped: set[str] = set()
    dq_users: dict[str, int] = {}      # DQ node -> how many of its consumers were fused
    for n in graph.nodes:
        slots = QDQ_OPS.get(n.op_type)
        if slots is None or n.domain not in ("", "ai.onnx"):
            continue
        srcs = [producer.get(n.inputs[i].name) if i < len(n.inputs) and n.inputs[i] is not None else None
                for i in slots]
        if not all(s is not None and s.op_type == "DequantizeLinear" for s in srcs[:2]):
            continue
        ins = list(n.inputs)
        for i, src in zip(slots, srcs):
            if src is not None and src.op_type == "DequantizeLinear":
                ins[i] = src.inputs[0]
                dq_users[src.name] = dq_users.get(src.name, 0) + 1
        outs = list(n.outputs)
        users = consumers.get(n.outputs[0].name, [])
        if len(users) == 1 and n.outputs[0].name not in outputs:
            q = next(m for m in graph.nodes if m.name == users[0])
            if q.op_type == "QuantizeLinear":
                outs[0] = q.outputs[0]
                dropped.add(q.name)
        rewired[n.name] = replace(n, inputs=tuple(ins), outputs=tuple(outs))
        policies[n.name] = int8
    for name, used in dq_users.items():
        dq = next(m for m in graph.nodes if m.name == name)
        if used == len(consumers.get(dq.outputs[0].name, [])) and dq.outputs[0].name not in outputs:
            dropped.add(name)
    nodes = tuple(rewired.get(n.name, n) for n in graph.nodes if n.name not in dropped)
    notes = ()
    if rewired:
        notes = (f"QDQ: {len(rewired)} Conv/MatMul/Gemm run as int8 kernels, {len(dropped)} Quantize/DequantizeLinear "
                 "nodes fused into them",)
    return QuantGraph(replace(graph, nodes=nodes), frozen_map(policies), len(dropped), notes)
