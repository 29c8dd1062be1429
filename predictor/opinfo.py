"""What the per-op table shows of a node besides its cost: output shape and parameter count.

``params`` counts the elements of a node's float initializer inputs (weights, biases, norm scales; integer
constants such as shapes and axes are not parameters). Computed from the loaded graph, never from weights.
"""
from __future__ import annotations


from .types import Node
from .frozen import frozen_dataclass

_FLOAT = ("float", "bfloat16")


@frozen_dataclass
class OpInfo:
    """Output shape and parameter count of a node."""

    output_shape: tuple[int, ...] | None   # the first output's shape (None when not inferred)
    params: int                            # elements of float initializer inputs


def op_info(node: Node) -> OpInfo:
    shape = node.outputs[0].shape if node.outputs else None
    params = 0
    for t in node.inputs:
        if t is not None and t.is_initializer and t.dtype.startswith(_FLOAT) and t.numel:
            params += t.numel
    return OpInfo(tuple(shape) if shape is not None else None, int(params))


def shape_text(shape: tuple[int, ...] | None) -> str:
    """(8, 64, 56, 56) -> '8x64x56x56'; a scalar '[]'; unknown '-'."""
    if shape is None:
        return "-"
    return "x".join(str(d) for d in shape) if shape else "[]"
