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


SHAPE_READERS = frozenset({"Shape", "Size"})  # read a tensor's metadata only, never its values


def ancestors(nodes: Sequence[Node], producer: dict[str, Node], names: Sequence[str],
              shape_reads_of: frozenset = frozenset()) -> list[Node]:
    """The nodes of ``nodes`` that tensors ``names`` are computed from, in graph order: a walk back through the
    producers that stops at shape reads (a Shape of an activation does not make it an ancestor), except reads of a
    tensor whose dtype is in ``shape_reads_of``."""
    seen: set[int] = set()
    todo = list(names)
    while todo:
        n = producer.get(todo.pop())
        if n is not None and id(n) not in seen:
            seen.add(id(n))
            shape_read = n.op_type in SHAPE_READERS
            todo.extend(t.name for t in n.inputs if t is not None and (not shape_read or t.dtype in shape_reads_of))
    return [n for n in nodes if id(n) in seen]
