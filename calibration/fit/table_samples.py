"""Kernel-level samples for the main fit from the training networks' own kernel tables (CPU only).

The broadcasting binary arithmetic kernels of the measured networks (aten add/sub/mul/div whose operands differ in
shape, 1 M+ output elements: the rows of calibration/evaluate/broadcast_kernels.py) are rebuilt as one ONNX node
each from the profiler's input shapes and priced by the same kernel time model as a network's node. Kernels of one
case with the same op and shapes are one sample: their median duration, weighted like a scope sample by the square
root of their summed share of the case's kernel time. A scope sample mixes such a kernel with the reductions, softmax
and GEMMs around it; these pin the class ``elementwise_broadcast`` to what its kernels ran at (the H200's: 1.3-1.5
TB/s at 16-bit, 2.5 at fp32, whatever the layout). Ignores: scalar operands and outer-product broadcasts (not in the
rows), the kernel's hidden layout copies (none: a single kernel).
"""
from __future__ import annotations

import math
import statistics
from collections import defaultdict

from predictor.graph.cost import cost_graph
from predictor.graph.opclass import kernel_class
from predictor.graph.traffic import traffic_for
from predictor.precision import policy
from predictor.types import DEFAULT_OPSET, Node, TensorInfo, frozen_map

from ..evaluate.broadcast_kernels import broadcast_shape, kernel_rows

ONNX_OP = {"aten::add": "Add", "aten::sub": "Sub", "aten::mul": "Mul", "aten::div": "Div"}
MIN_ELEMENTS = 1_000_000
TABLE_CLASS = "elementwise_broadcast"


def broadcast_node(op: str, a: tuple[int, ...], b: tuple[int, ...]) -> Node:
    """The ONNX node of aten ``op`` (aten::mul ...) on operands of shapes ``a`` and ``b`` (both activations)."""
    out = broadcast_shape(list(a), list(b))
    if out is None:
        raise ValueError(f"shapes {a} and {b} do not broadcast")
    t = lambda name, s: TensorInfo(name, "float32", tuple(int(d) for d in s))  # noqa: E731
    return Node(name="op", op_type=ONNX_OP[op], domain="", inputs=(t("a", a), t("b", b)), outputs=(t("y", out),),
                attrs=frozen_map({}))


def table_samples(case_keys: set[tuple[str, str, int]], profile, gpu: str = "h200",
                  min_elements: int = MIN_ELEMENTS) -> list[tuple[tuple[str, str, int], Node, object, float, float]]:
    """(case key, node, cost, median duration s, summed duration s) per (case, op, shapes) of the cases in
    ``case_keys`` whose node costs to one kernel of class ``elementwise_broadcast``."""
    groups: dict[tuple, list[float]] = defaultdict(list)
    for r in kernel_rows(gpu, min_elements):
        key = (r["network"], r["precision"], r["batch"])
        if key in case_keys and r["op"] in ONNX_OP:
            groups[(key, r["op"], r["shapes"])].append(r["duration_s"])
    traffic = traffic_for(profile)
    out = []
    for (key, op, (a, b)), durations in sorted(groups.items()):
        node = broadcast_node(op, a, b)
        gc = cost_graph([node], policy(key[1]), DEFAULT_OPSET, traffic, frozenset({"a", "b"}))
        c = gc.costs[0] if gc.costs else None
        if c is None or c.kernels != 1 or kernel_class(node) != TABLE_CLASS:
            continue
        out.append((key, node, c, statistics.median(durations), math.fsum(durations)))
    return out
