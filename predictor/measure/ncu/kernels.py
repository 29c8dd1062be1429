"""Attribution of profiled kernels to ONNX nodes (the kernels' classes by name: categories.py).

Attribution (`map_kernels`), three explainable rules:

1. module: a kernel belongs to the innermost module NVTX range around it (see `nvtx`). The nodes of
   that module are those whose TorchScript-style name starts with the range's ONNX scope
   (``/layer1/layer1.0/conv1/Conv``), or whose module path, supplied by the caller (dynamo
   exports: ``pkg.torch.onnx.name_scopes``), equals the range's qualified module name.
2. class: among them, only nodes whose op type `OP_TYPES_BY_CATEGORY[category]` allows can take it.
3. order: the j-th op call (innermost aten NVTX range; each kernel on its own without aten ranges)
   of that class in that module goes to the j-th such node in graph order, the last node taking
   any extra calls.

Kernels that fail a rule (layout transforms in a Conv module, split-K reductions, casts, kernels
outside every module range) are unattributed, grouped by category, because they are real time.
"""
from __future__ import annotations

import ast
import re
from collections import abc
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Iterable, Sequence

from ...graph.registry import ops_with
from .categories import CATEGORY_RULES, KernelCategory, classify  # noqa: F401  (named here too)
from .nvtx import innermost_module

_C = KernelCategory

_ELEMENTWISE_OPS = frozenset(
    "Relu Add Sub Mul Div Sigmoid Tanh Clip Erf Gelu Pow Sqrt Reciprocal Neg Exp Log Where Equal Less "
    "Greater LessOrEqual GreaterOrEqual Not And Or Xor Min Max Sum Mean HardSigmoid HardSwish LeakyRelu "
    "PRelu Elu Selu Celu Softplus Softsign Mish Abs Floor Ceil Round Sin Cos Sign IsNaN IsInf Mod "
    "ThresholdedRelu BitShift Dropout Swish".split())
_RNN_OPS = ops_with(recurrent=True)  # LSTM, GRU, RNN (declared at registration, graph/ops)
_ATTENTION_OPS = frozenset({"Attention", "MultiHeadAttention", "GroupQueryAttention"})

# Which ONNX op types may own a kernel of each category. Data: extend it rather than code around it.
OP_TYPES_BY_CATEGORY: dict[KernelCategory, frozenset[str]] = {
    _C.GEMM: frozenset({"Conv", "ConvTranspose", "MatMul", "Gemm", "MatMulInteger", "ConvInteger",
                        "QLinearConv", "QLinearMatMul", "Einsum"}) | _RNN_OPS | _ATTENTION_OPS,
    _C.ATTENTION: _ATTENTION_OPS | {"MatMul", "Softmax"},
    _C.RNN: _RNN_OPS,
    _C.LAYOUT: frozenset({"Transpose"}),
    _C.NORM: frozenset({"BatchNormalization", "LayerNormalization", "GroupNormalization",
                        "InstanceNormalization", "SimplifiedLayerNormalization", "RMSNormalization",
                        "SkipLayerNormalization"}),
    _C.SOFTMAX: frozenset({"Softmax", "LogSoftmax"}),
    _C.POOLING: frozenset({"MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool", "LpPool"}),
    _C.UPSAMPLE: frozenset({"Resize", "Upsample"}),
    _C.CAT: frozenset({"Concat"}),
    _C.INDEX: frozenset({"Gather", "GatherElements", "GatherND", "ScatterND", "ScatterElements"}),
    _C.REDUCE: frozenset({"ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
                          "ReduceL2", "ReduceSumSquare", "ReduceLogSumExp", "GlobalAveragePool",
                          "GlobalMaxPool", "ArgMax", "ArgMin", "CumSum"}),
    _C.FILL: frozenset({"ConstantOfShape", "Expand", "Range"}),
    _C.COPY: frozenset({"Cast", "Identity", "Expand", "Tile", "Transpose", "Reshape", "Flatten"}),
    _C.ELEMENTWISE: _ELEMENTWISE_OPS | _RNN_OPS,
    _C.MEMSET: frozenset(),
    _C.OTHER: frozenset(),
}


# ----------------------------------------------------------------------------- graph nodes
@dataclass(frozen=True)
class GraphNode:
    """An ONNX node as the mapping sees it."""

    name: str
    op_type: str
    scope: str | None     # TorchScript exporter prefix ('/layer1/layer1.0/conv1'), None if not such a name
    module: str | None    # qualified module path supplied by the caller (dynamo name_scopes)


_TS_NAME = re.compile(r"^(?P<scope>(?:/[^/]+)*)/(?P<op>[A-Za-z][A-Za-z0-9]*?)(?:_\d+)?$")
_DYNAMO_NAME = re.compile(r"^node_(?P<op>[A-Za-z][A-Za-z0-9]*?)(?:_\d+)?$")


def op_type_from_name(name: str) -> str | None:
    """'/layer1/layer1.0/conv1/Conv' -> 'Conv', '/MatMul_1' -> 'MatMul', 'node_Conv_12' -> 'Conv'."""
    m = _TS_NAME.match(name) or _DYNAMO_NAME.match(name)
    return m.group("op") if m else None


def scope_from_name(name: str) -> str | None:
    """TorchScript-exporter scope of a node name ('/a/b/Conv' -> '/a/b', '/Conv' -> ''), else None."""
    m = _TS_NAME.match(name)
    return m.group("scope") if m else None


def _normal_module(path: str) -> str:
    return re.sub(r"@\d+$", "", path.strip())


def graph_nodes(names: Sequence[str], node_modules: abc.Mapping[str, str] | None = None,
                node_op_types: abc.Mapping[str, str] | None = None) -> tuple[GraphNode, ...]:
    """GraphNodes in the given (graph) order. Op types come from `node_op_types`, else the name;
    module paths from `node_modules` (a trailing '@N' call index is dropped)."""
    node_modules = node_modules or {}
    node_op_types = node_op_types or {}
    out = []
    for name in names:
        op = node_op_types.get(name) or op_type_from_name(name) or ""
        module = node_modules.get(name)
        out.append(GraphNode(name, op, scope_from_name(name),
                             _normal_module(module) if module is not None else None))
    return tuple(out)


def onnx_graph_nodes(model: Any) -> tuple[GraphNode, ...]:
    """GraphNodes of an onnx.ModelProto: op types from the proto, module paths from the dynamo
    exporter's ``pkg.torch.onnx.name_scopes`` metadata (the entry before the node's own name)."""
    names, modules, ops = [], {}, {}
    for node in model.graph.node:
        names.append(node.name)
        ops[node.name] = node.op_type
        meta = {p.key: p.value for p in node.metadata_props}
        scopes = meta.get("pkg.torch.onnx.name_scopes")
        if scopes:
            try:
                parsed = ast.literal_eval(scopes)
            except (ValueError, SyntaxError):
                parsed = None
            if isinstance(parsed, (list, tuple)) and len(parsed) >= 2:
                modules[node.name] = str(parsed[-2])
    return graph_nodes(names, modules, ops)


# ----------------------------------------------------------------------------- mapping result
@dataclass(frozen=True)
class Assignment:
    """Where one kernel went, and why."""

    kernel_id: int
    category: str
    node: str | None
    reason: str       # 'matched', 'no module range', 'no node in module', 'no <category> node in module'


@dataclass(frozen=True)
class CategoryTotal:
    count: int
    time_s: float


@dataclass(frozen=True)
class MappingSummary:
    kernels: int
    time_s: float
    attributed: int
    attributed_time_s: float
    unattributed: abc.Mapping[str, CategoryTotal]            # by kernel category
    unattributed_by_reason: abc.Mapping[str, CategoryTotal]
    nodes_with_kernels: int
    nodes_without_kernels: int


@dataclass(frozen=True)
class Mapping:
    """Kernels per node (every node, graph order; empty tuple when none) and unattributed kernels
    per category; `assignments` lists each kernel's fate in launch order."""

    by_node: abc.Mapping[str, tuple[Any, ...]]
    unattributed: abc.Mapping[str, tuple[Any, ...]]
    assignments: tuple[Assignment, ...]
    summary: MappingSummary


def _totals(groups: abc.Mapping[str, list[Any]]) -> abc.Mapping[str, CategoryTotal]:
    return MappingProxyType({k: CategoryTotal(len(v), sum(s.time_s for s in v)) for k, v in groups.items()})


def map_kernels(samples: Iterable[Any], nodes: Sequence[GraphNode]) -> Mapping:
    """Attribute kernel samples (anything with id, name, nvtx, time_s) to `nodes`; see module doc."""
    ordered = sorted(samples, key=lambda s: s.id)
    by_scope: dict[str, list[GraphNode]] = {}
    by_module: dict[str, list[GraphNode]] = {}
    for node in nodes:
        if node.scope is not None:
            by_scope.setdefault(node.scope, []).append(node)
        if node.module is not None:
            by_module.setdefault(node.module, []).append(node)

    by_node: dict[str, list[Any]] = {n.name: [] for n in nodes}
    unattributed: dict[str, list[Any]] = {}
    by_reason: dict[str, list[Any]] = {}
    assignments: list[Assignment] = []
    calls_seen: dict[tuple[str, ...], dict[Any, int]] = {}   # compatible-node group -> op call -> j
    call = -1
    prev_stack: tuple[str, ...] | None = None

    for s in ordered:
        category = classify(s.name)
        found = innermost_module(s.nvtx)
        has_op_range = found is not None and found[0] < len(s.nvtx) - 1
        if not (has_op_range and s.nvtx == prev_stack):
            call += 1                      # a new op call: new stack, or no aten ranges to tell
        prev_stack = s.nvtx
        node, reason = None, "no module range"
        if found is not None:
            rng = found[1]
            members = by_scope.get(rng.scope, []) + [n for n in by_module.get(rng.qualname, [])
                                                      if n.scope != rng.scope]
            allowed = OP_TYPES_BY_CATEGORY[category]
            compatible = [n for n in members if n.op_type in allowed]
            if not members:
                reason = "no node in module"
            elif not compatible:
                reason = f"no {category.value} node in module"
            else:
                group = tuple(n.name for n in compatible)
                seen = calls_seen.setdefault(group, {})
                j = seen.setdefault(call, len(seen))
                node, reason = compatible[min(j, len(compatible) - 1)], "matched"
        if node is not None:
            by_node[node.name].append(s)
        else:
            unattributed.setdefault(category.value, []).append(s)
            by_reason.setdefault(reason, []).append(s)
        assignments.append(Assignment(s.id, category.value, node.name if node else None, reason))

    attributed = [s for v in by_node.values() for s in v]
    summary = MappingSummary(
        kernels=len(ordered),
        time_s=sum(s.time_s for s in ordered),
        attributed=len(attributed),
        attributed_time_s=sum(s.time_s for s in attributed),
        unattributed=_totals(unattributed),
        unattributed_by_reason=_totals(by_reason),
        nodes_with_kernels=sum(1 for v in by_node.values() if v),
        nodes_without_kernels=sum(1 for v in by_node.values() if not v),
    )
    return Mapping(
        by_node=MappingProxyType({k: tuple(v) for k, v in by_node.items()}),
        unattributed=MappingProxyType({k: tuple(v) for k, v in unattributed.items()}),
        assignments=tuple(assignments),
        summary=summary,
    )


def summary_lines(result: Mapping) -> list[str]:
    """A short text report of a mapping: totals, then unattributed time by category."""
    s = result.summary
    lines = [f"{s.kernels} kernels, {s.time_s * 1e3:.3f} ms; attributed {s.attributed} "
             f"({s.attributed_time_s * 1e3:.3f} ms) to {s.nodes_with_kernels} nodes; "
             f"{s.nodes_without_kernels} nodes without kernels"]
    for category, total in sorted(s.unattributed.items(), key=lambda kv: -kv[1].time_s):
        lines.append(f"  unattributed {category:12s} {total.count:5d} kernels {total.time_s * 1e3:9.3f} ms")
    for reason, total in sorted(s.unattributed_by_reason.items(), key=lambda kv: -kv[1].time_s):
        lines.append(f"  reason {reason:30s} {total.count:5d} kernels {total.time_s * 1e3:9.3f} ms")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    """``python3 -m predictor.measure.ncu.kernels CASE.csv [MODEL.onnx]``: kernel classes, and with a model
    the attribution summary."""
    import argparse
    from collections import Counter

    from .parse import NcuParseError, parse_file

    p = argparse.ArgumentParser(prog="python3 -m predictor.measure.ncu.kernels")
    p.add_argument("csv")
    p.add_argument("onnx", nargs="?")
    args = p.parse_args(argv)
    try:
        samples = parse_file(args.csv)
    except NcuParseError as e:
        print(f"error: {e}")
        return 1
    times: Counter = Counter()
    counts: Counter = Counter()
    for s in samples:
        c = classify(s.name).value
        times[c] += s.time_s
        counts[c] += 1
    for c, t in times.most_common():
        print(f"{c:12s} {counts[c]:5d} kernels {t * 1e3:9.3f} ms")
    if args.onnx:
        import onnx

        model = onnx.load(args.onnx, load_external_data=False)
        for line in summary_lines(map_kernels(samples, onnx_graph_nodes(model))):
            print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
