"""Kernel-level samples for the main fit: op microbenchmark rows rebuilt as one ONNX node each (CPU only).

Each measured call of calibration/networks/microbench.py becomes one node (``NODE_BUILDERS``, by the row's op),
costed by the predictor like a network's node and priced by the same kernel time model, its measured time
(CUDA-graph replays of back-to-back calls, so each call includes the inter-kernel gap; or events around calls of
100 us and more) a sample of its own. ``conv_sweep`` (the time-based-roofline study's sweep) is kept out: it is the
benchmark of calibration/evaluate/kernel_sweeps.py. Families of the microbenchmark classes (calibration/fit/micro_fit.py:
grouped convolutions, unaligned batched GEMMs) and recurrent layers stay with their own fits.
Ignores: the L2 residency of a repeated call's operands (every call re-reads them; small ones stay in L2).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

from predictor.graph.cost import cost_graph
from predictor.graph.opclass import kernel_class
from predictor.graph.traffic import traffic_for
from predictor.precision import policy
from predictor.types import DEFAULT_OPSET, Node, TensorInfo, frozen_map

from .micro_fit import MICROBENCH, bmm_node, conv_node, microbench_rows, row_params, softmax_node

FIT_FAMILIES = ("conv_resnet50", "conv_broad", "conv_transpose", "conv_depthwise", "gemm", "gemm_broad", "bmm",
                "elementwise", "norm", "layer_norm_rows", "softmax", "softmax_rows", "pool", "transpose",
                "conv1d", "conv3d", "conv_large", "pool_broad", "data", "sdpa_broad", "sdpa_long", "reduce_shapes",
                "group_norm_shapes", "loop_kernels", "conv_depthwise_taps")
# families measured on another GPU only, read from its microbenchmark folder and priced on its transferred profile
# with the same parameters (the device's card that session): reduce_kernel's shapes (h100/microbench/run12),
# native_group_norm's (run13), torch.cumsum's scans (run14)
OTHER_GPU_FAMILIES: dict[str, tuple[str, ...]] = {"h100": ("reduce_shapes", "group_norm_shapes", "loop_kernels",
                                                               "conv_depthwise_taps")}
# the ops a family gives the fit where it measured more: loop_kernels' conv1d calls (padding 63) ran other cuDNN
# kernels than the networks' padding-64 positional convolution of the same size (SpeechT5's H100 kernel table, fp16
# batch 32: implicit_convolve_sgemm at 4.9 TFLOP/s where the call ran at 11.8), so they do not stand for it; its
# grid_sample calls have no node builder, and its stack calls (a builder, as for short_rows' sums, stacks and cats)
# wait for a model of short-run copies (the traffic model prices them as contiguous ones: 37-67% too fast)
FAMILY_OPS: dict[str, tuple[str, ...]] = {"loop_kernels": ("cumsum",)}
BENCHMARK_FAMILIES = ("conv_sweep",)
SKIP_CLASSES = ("grouped", "gemm_unaligned", "rnn", "rnn_gemv")


def _t(name: str, shape, init: bool = False) -> TensorInfo:
    return TensorInfo(name, "float32", tuple(int(d) for d in shape), is_initializer=init)


def _node(op: str, inputs, outputs, **attrs) -> Node:
    return Node(name="op", op_type=op, domain="", inputs=tuple(inputs), outputs=tuple(outputs),
                attrs=frozen_map(attrs))


def conv_dilated_node(p: dict) -> Node:
    """F.conv2d with dilation (conv_broad); without a ``dilation`` key, micro_fit's conv_node; rows with run 7's
    parameter names (``spatial``, conv_large) as conv_nd_node."""
    if "spatial" in p:
        return conv_nd_node(p)
    node = conv_node(p)
    d = int(p.get("dilation", 1))
    return node if d == 1 else Node(name=node.name, op_type="Conv", domain="", inputs=node.inputs,
                                    outputs=node.outputs, attrs=frozen_map({**dict(node.attrs), "dilations": (d, d)}))


def conv_transpose_node(p: dict) -> Node:
    n, c, h, k, r, s, pad = p["N"], p["C"], p["H"], p["K"], p["R"], p["stride"], p["pad"]
    return _node("ConvTranspose", [_t("x", (n, c, h, h)), _t("w", (c, k, r, r), True)],
                 [_t("y", (n, k, p["Ho"], p["Wo"]))], strides=(s, s), pads=(pad,) * 4, kernel_shape=(r, r),
                 group=1, dilations=(1, 1))


def gemm_node(p: dict) -> Node:
    """torch.matmul(a [M, K], b [K, N]) of two activations (gemm family)."""
    return _node("MatMul", [_t("x", (p["M"], p["K"])), _t("x2", (p["K"], p["N"]))], [_t("y", (p["M"], p["N"]))])


def linear_node(p: dict) -> Node:
    """F.linear(x [M, K], W [N, K]): a MatMul with a weight (gemm_broad), as exporters write a Linear layer."""
    return _node("MatMul", [_t("x", (p["M"], p["K"])), _t("w", (p["K"], p["N"]), True)], [_t("y", (p["M"], p["N"]))])


def _elementwise(op: str, binary: bool) -> Callable[[dict], Node]:
    def build(p: dict) -> Node:
        n = p["n"]
        ins = [_t("x", (n,))] + ([_t("x2", (n,))] if binary else [])
        return _node(op, ins, [_t("y", (n,))])
    return build


def layer_norm_node(p: dict) -> Node:
    rows, d = p["tokens"], p["D"]
    return _node("LayerNormalization", [_t("x", (rows, d)), _t("g", (d,), True), _t("b", (d,), True)],
                 [_t("y", (rows, d))], axis=-1, epsilon=1e-5)


def _nchw(p: dict) -> tuple[int, int, int, int]:
    return p["N"], p["C"], p["H"], p.get("W", p["H"])


def batch_norm_node(p: dict) -> Node:
    n, c, h, w = _nchw(p)
    return _node("BatchNormalization", [_t("x", (n, c, h, w))] + [_t(f"p{i}", (c,), True) for i in range(4)],
                 [_t("y", (n, c, h, w))], epsilon=1e-5)


def group_norm_node(p: dict) -> Node:
    n, c, h, w = _nchw(p)
    return _node("GroupNormalization", [_t("x", (n, c, h, w)), _t("g", (c,), True), _t("b", (c,), True)],
                 [_t("y", (n, c, h, w))], num_groups=p["groups"], epsilon=1e-5)


def global_avg_pool_node(p: dict) -> Node:
    n, c, h, w = _nchw(p)
    return _node("GlobalAveragePool", [_t("x", (n, c, h, w))], [_t("y", (n, c, 1, 1))])


def _pool_node(op: str) -> Callable[[dict], Node]:
    """F.max_pool2d / F.avg_pool2d (count_include_pad=False) with the row's ``pad`` (default k // 2)."""
    def build(p: dict) -> Node:
        n, c, h, w = _nchw(p)
        k, s = p["k"], p["stride"]
        pad = p.get("pad", k // 2)
        ho, wo = (h + 2 * pad - k) // s + 1, (w + 2 * pad - k) // s + 1
        extra = {} if op == "MaxPool" else {"count_include_pad": 0}
        return _node(op, [_t("x", (n, c, h, w))], [_t("y", (n, c, ho, wo))], kernel_shape=(k, k),
                     strides=(s, s), pads=(pad,) * 4, **extra)
    return build


max_pool_node = _pool_node("MaxPool")


def conv_nd_node(p: dict) -> Node:
    """F.conv1d / conv2d / conv3d of run 7 (``spatial``, ``kernel``, ``stride``, ``dilation``, ``pads``, ``out``), with
    a bias input where the row has one (``bias``: run 17's depthwise calls)."""
    n, c, k, g = p["N"], p["C"], p["K"], p.get("groups", 1)
    kernel = tuple(p["kernel"])
    bias = [_t("b", (k,), True)] if p.get("bias") else []
    return _node("Conv", [_t("x", (n, c, *p["spatial"])), _t("w", (k, c // g, *kernel), True)] + bias,
                 [_t("y", (n, k, *p["out"]))], strides=tuple(p["stride"]), pads=tuple(p["pads"]) * 2,
                 kernel_shape=kernel, dilations=tuple(p["dilation"]), group=g)


def channel_bias_node(p: dict) -> Node:
    """x [N, C, H, H] + b [1, C, 1, 1] (a broadcast over the spatial axes)."""
    n, c, h = p["N"], p["C"], p["H"]
    return _node("Add", [_t("x", (n, c, h, h)), _t("b", (1, c, 1, 1), True)], [_t("y", (n, c, h, h))])


def lastdim_scale_node(p: dict) -> Node:
    """x [rows, D] * g [D] (a broadcast over rows)."""
    return _node("Mul", [_t("x", (p["rows"], p["D"])), _t("g", (p["D"],), True)], [_t("y", (p["rows"], p["D"]))])


def gelu_tanh_node(p: dict) -> Node:
    n = p["n"]
    return _node("Gelu", [_t("x", (n,))], [_t("y", (n,))], approximate="tanh")


def concat_node(p: dict) -> Node:
    """torch.cat of two [n / 2 / 4096, 4096] halves along rows (data); short_rows' torch.cat of ``parts`` [rows, run]
    tensors at dim -1."""
    if "run" in p:
        rows, run, parts = p["rows"], p["run"], p["parts"]
        return _node("Concat", [_t(f"x{i}", (rows, run)) for i in range(parts)], [_t("y", (rows, parts * run))],
                     axis=1)
    half = max(1, p["n"] // 2 // 4096)
    return _node("Concat", [_t("a", (half, 4096)), _t("b", (half, 4096))], [_t("y", (2 * half, 4096))], axis=0)


def stack_node(p: dict) -> Node:
    """torch.stack at dim -2 as the exporter writes it, a Concat of the parts unsqueezed there (views): short_rows'
    ``parts`` [rows, run] tensors -> [rows, parts, run]; loop_kernels' ``parts`` [N, C, Q, P] -> [N, C, Q, parts, P]."""
    parts = p["parts"]
    lead, run = ((p["rows"],), p["run"]) if "run" in p else ((p["N"], p["C"], p["Q"]), p["P"])
    return _node("Concat", [_t(f"x{i}", (*lead, 1, run)) for i in range(parts)], [_t("y", (*lead, parts, run))],
                 axis=len(lead))


def reduce_sum_node(p: dict) -> Node:
    """torch.sum over the last dim of [outputs, R] (layout inner) or dim 0 of [R, outputs] (layout outer)."""
    outs, red = p["outputs"], p["R"]
    shape, axis = ((red, outs), 0) if p.get("layout") == "outer" else ((outs, red), 1)
    return Node(name="op", op_type="ReduceSum", domain="", inputs=(_t("x", shape), _t("axes", (1,), True)),
                outputs=(_t("y", (outs,)),), attrs=frozen_map({"keepdims": 0}),
                const_inputs=frozen_map({"axes": (axis,)}))


def pad_node(p: dict) -> Node:
    """F.pad(x [N, C, H, H], (1, 1, 1, 1)) with zeros."""
    n, c, h = p["N"], p["C"], p["H"]
    pads = TensorInfo("pads", "int64", (8,), is_initializer=True)
    return _node("Pad", [_t("x", (n, c, h, h)), pads], [_t("y", (n, c, h + 2, h + 2))], mode="constant")


def embedding_node(p: dict) -> Node:
    """F.embedding(idx [tokens], table [vocab, D]): a Gather of rows."""
    idx = TensorInfo("idx", "int64", (p["tokens"],))
    return _node("Gather", [_t("table", (p["vocab"], p["D"]), True), idx], [_t("y", (p["tokens"], p["D"]))], axis=0)


def group_norm_1d_node(p: dict) -> Node:
    """F.group_norm(x [N, C, L], groups) (run 8: one group per channel, wav2vec 2.0's first feature layer)."""
    n, c, length = p["N"], p["C"], p["L"]
    return _node("GroupNormalization", [_t("x", (n, c, length)), _t("g", (c,), True), _t("b", (c,), True)],
                 [_t("y", (n, c, length))], num_groups=p["groups"], epsilon=1e-5)


def sdpa_node(p: dict) -> Node:
    """F.scaled_dot_product_attention(q, k, v [B, H, S, D]) as one ONNX Attention node (opset 23, 4-D inputs)."""
    shape = (p["B"], p["H"], p["S"], p["D"])
    return _node("Attention", [_t("q", shape), _t("k", shape), _t("v", shape)], [_t("y", shape)],
                 is_causal=int(bool(p["causal"])))


def sdpa_kv_node(p: dict) -> Node:
    """F.scaled_dot_product_attention(q [B, H, Sq, D], k, v [B, KVH, Skv, D]) (run 10's decode attention: one query
    token against a cache; KVH < H is grouped-query attention) as one ONNX Attention node."""
    q = (p["B"], p["H"], p["Sq"], p["D"])
    kv = (p["B"], p["KVH"], p["Skv"], p["D"])
    return _node("Attention", [_t("q", q), _t("k", kv), _t("v", kv)], [_t("y", q)])


def transpose_node(p: dict) -> Node:
    shape, perm = tuple(p["shape"]), tuple(p["perm"])
    return _node("Transpose", [_t("x", shape)], [_t("y", tuple(shape[i] for i in perm))], perm=perm)


def reduce_mean_node(p: dict) -> Node:
    """torch.mean over the last dim of [outputs, R] (layout inner) or dim 0 of [R, outputs] (layout outer): one
    ReduceMean (opset 18+: the axes a constant input)."""
    outs, red = p["outputs"], p["R"]
    shape, axis = ((red, outs), 0) if p.get("layout") == "outer" else ((outs, red), 1)
    return Node(name="op", op_type="ReduceMean", domain="", inputs=(_t("x", shape), _t("axes", (1,), True)),
                outputs=(_t("y", (outs,)),), attrs=frozen_map({"keepdims": 0}),
                const_inputs=frozen_map({"axes": (axis,)}))


def reduce_var_nodes(p: dict) -> tuple[Node, ...]:
    """torch.var(x [outputs, R], dim=-1, unbiased=False) as the TorchScript exporter writes it: ReduceMean, Sub,
    Mul(d, d), ReduceMean (runtime pattern var_welford: one Welford kernel)."""
    outs, red = p["outputs"], p["R"]
    axes = frozen_map({"axes": (1,)})
    x, ax = _t("x", (outs, red)), _t("axes", (1,), True)
    mu, d, sq, y = _t("mu", (outs, 1)), _t("d", (outs, red)), _t("sq", (outs, red)), _t("y", (outs,))
    return (Node("mean", "ReduceMean", "", (x, ax), (mu,), frozen_map({"keepdims": 1}), axes),
            Node("sub", "Sub", "", (x, mu), (d,)),
            Node("square", "Mul", "", (d, d), (sq,)),
            Node("var", "ReduceMean", "", (sq, ax), (y,), frozen_map({"keepdims": 0}), axes))


def cumsum_node(p: dict) -> Node:
    """torch.cumsum(x [rows, cols], dim) (loop_kernels, h100/microbench/run14) as one CumSum node."""
    return Node(name="op", op_type="CumSum", domain="", inputs=(_t("x", (p["rows"], p["cols"])), _t("axis", (), True)),
                outputs=(_t("y", (p["rows"], p["cols"])),), attrs=frozen_map({}),
                const_inputs=frozen_map({"axis": (int(p["dim"]),)}))


NODE_BUILDERS: dict[str, Callable[[dict], Node | tuple[Node, ...]]] = {
    "conv2d": conv_dilated_node, "conv_transpose2d": conv_transpose_node, "matmul": gemm_node, "linear": linear_node,
    "bmm": bmm_node, "add": _elementwise("Add", True), "mul": _elementwise("Mul", True),
    "relu": _elementwise("Relu", False), "layer_norm": layer_norm_node, "softmax": softmax_node,
    "batch_norm": batch_norm_node, "group_norm": group_norm_node, "global_avg_pool": global_avg_pool_node,
    "max_pool2d": max_pool_node, "permute_contiguous": transpose_node,
    # run 7 (calibration/data/h200/microbench/run7)
    "avg_pool2d": _pool_node("AveragePool"), "conv1d": conv_nd_node, "conv3d": conv_nd_node,
    "add_channel_bias": channel_bias_node, "mul_lastdim": lastdim_scale_node, "tanh": _elementwise("Tanh", False),
    "sigmoid": _elementwise("Sigmoid", False), "hardswish": _elementwise("HardSwish", False),
    "gelu_tanh": gelu_tanh_node, "cat": concat_node, "pad": pad_node, "embedding": embedding_node, "sdpa": sdpa_node,
    # run 8
    "group_norm_1d": group_norm_1d_node,
    # run 10
    "sdpa_kv": sdpa_kv_node,
    # h100 run 12
    "mean": reduce_mean_node, "var": reduce_var_nodes,
    # h100 run 14
    "cumsum": cumsum_node, "stack": stack_node,
    # short_rows
    "sum": reduce_sum_node,
}


def micro_costs(families: tuple[str, ...], profile, root: Path = MICROBENCH,
                keep: Callable[[dict], bool] | None = None) -> list[tuple[dict, Node, object]]:
    """(row, node, cost) of every error-free microbenchmark row of ``families`` (those ``keep`` accepts, if given)
    whose op has a node builder and whose node costs to at least one kernel of a main-fit class. A builder of several
    nodes (an exporter's decomposition the runtime patterns fold) gives the one node left with kernels."""
    out = []
    traffic = traffic_for(profile)
    for r in microbench_rows(families, root):
        if keep is not None and not keep(r):
            continue
        build = NODE_BUILDERS.get(r["op"])
        if r["op"] not in FAMILY_OPS.get(r["family"], (r["op"],)):
            continue
        if build is None or r["precision"] not in ("fp32", "tf32", "fp16", "bf16"):
            continue
        try:
            built = build(row_params(r))
        except (KeyError, TypeError, ValueError):
            continue
        nodes = built if isinstance(built, tuple) else (built,)
        produced = {t.name for n in nodes for t in n.outputs}
        gc = cost_graph(list(nodes), policy(r["precision"]), DEFAULT_OPSET, traffic,
                        frozenset(t.name for n in nodes for t in n.inputs
                                  if t is not None and not t.is_initializer and t.name not in produced))
        by_name = {c.name: c for c in gc.costs}
        launched = [(n, by_name[n.name]) for n in nodes if n.name in by_name and by_name[n.name].kernels > 0]
        if len(launched) != 1:
            continue
        node, c = launched[0]
        if kernel_class(node) in SKIP_CLASSES:
            continue
        out.append((r, node, c))
    return out


def row_label(r: dict) -> str:
    return f"{r['family']} {r['op']} {r['precision']} {json.dumps(row_params(r), sort_keys=True)}"
