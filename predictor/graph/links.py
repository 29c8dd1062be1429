"""The producer and the consumers of each tensor of a node sequence (by tensor name)."""
from __future__ import annotations

from typing import Sequence

from ..types import Node


def links(nodes: Sequence[Node]) -> tuple[dict[str, Node], dict[str, list[Node]]]:
    """(producer by tensor name: the last node that writes it; consumers by tensor name, in node order)."""
    producer: dict[str, Node] = {}
    consumers: dict[str, list[Node]] = {}
    for n in nodes:
        for t in n.inputs:
            if t is not None:
                consumers.setdefault(t.name, []).append(n)
        for t in n.outputs:
            producer[t.name] = n
    return producer, consumers
