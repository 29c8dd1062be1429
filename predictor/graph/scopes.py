"""Module scope of an ONNX node: the qualified name of the PyTorch module that produced it.

PyTorch's exporters name nodes after the module path: the TorchScript exporter as
``/layer1/layer1.0/conv1/Conv`` (attribute names; ModuleList children carry their parent's name, as
``layer1.0`` or ``layer.0``), the dynamo exporter in the node's ``pkg.torch.onnx.name_scopes`` metadata.
Both become ``layer1.0.conv1``, the name ``model.named_modules()`` gives, so measured kernels (NVTX or
profiler ranges per module) can be matched to nodes. Graphs not exported from PyTorch get ''.
"""
from __future__ import annotations

import ast
import re
from functools import lru_cache

NAME_SCOPES_KEY = "pkg.torch.onnx.name_scopes"
CLASS_HIERARCHY_KEY = "pkg.torch.onnx.class_hierarchy"
_OP_LAST = re.compile(r"'(?:aten|prims|torch\.ops)\.[^']*'\]$")  # a class hierarchy whose last entry is an op


def qualify(components: list[str]) -> str:
    """Join scope components into a dotted module path, folding repeated parent prefixes."""
    state = ("", "")
    for c in components:
        state = _fold(state, c)
    return state[0]


def _fold(state: tuple[str, str], c: str) -> tuple[str, str]:
    """qualify's (path so far, last component) after one more component ``c``."""
    qual, last = state
    if not c:
        return state
    if "." not in c:  # (most components: neither prefix below can start it)
        return (f"{qual}.{c}" if qual else c), c
    if qual and c.startswith(qual + "."):
        qual = c
    elif last and c.startswith(last + "."):
        qual = qual[: len(qual) - len(last)] + c
    else:
        qual = f"{qual}.{c}" if qual else c
    return qual, c


def scope_of_head(head: str, states: dict) -> str:
    """``scope_from_name`` of the node names whose text up to their last '/' is ``head``. ``states`` ({head:
    qualify's state}, shared by the calls of one graph) holds every module path met, so each is folded once, from
    its parent's (a graph's nodes share most of their path)."""
    if not head.startswith("/"):
        return ""
    st = states.get(head) if head != "/" else ("", "")
    if st is not None:
        return st[0]
    cut = head.rfind("/", 0, len(head) - 1)
    parent = head[:cut + 1]
    st = states.get(parent) if parent != "/" else ("", "")
    if st is not None:  # (most heads: their parent path was met before)
        st = states[head] = _fold(st, head[cut + 1:-1])
        return st[0]
    pending = []  # (head, its last component), innermost first, up to a path already folded
    h = head
    while st is None:
        cut = h.rfind("/", 0, len(h) - 1)
        pending.append((h, h[cut + 1:-1]))
        h = h[:cut + 1]
        st = states.get(h) if h != "/" else ("", "")
    for h, c in reversed(pending):
        st = states[h] = _fold(st, c)
    return st[0]


def scope_from_name(node_name: str) -> str:
    """``/layer1/layer1.0/conv1/Conv`` -> ``layer1.0.conv1``; names without '/' give ''."""
    if not node_name.startswith("/"):
        return ""
    parts = node_name.split("/")[1:-1]  # drop the leading '' and the op name
    return qualify(parts)


_QUOTED = r"'([^'\\]*)'"  # (compiled on first use by re's cache: only dynamo exports have metadata)


@lru_cache(maxsize=8192)
def scope_from_metadata(value: str, drop_last: bool = False) -> str:
    """The dynamo exporter's name_scopes metadata (a Python-literal list of names) -> dotted path; ``drop_last``:
    the last name is the node's own (its FX node: ``addmm``, ``col2im``), not a module.

    Nodes of one module share the string (cached). The common form, ``['', 'encoder', 'layer.0']``, is read
    with a regular expression when writing its items back gives the same text (so the result is
    ``ast.literal_eval``'s); anything else goes through ``ast.literal_eval`` (~0.2 ms a call)."""
    items: list | tuple | None = None
    if value.startswith("[") and value.endswith("]"):
        found = re.findall(_QUOTED, value)
        if "[" + ", ".join(f"'{i}'" for i in found) + "]" == value:
            items = found
    if items is None:
        try:
            items = ast.literal_eval(value)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return ""
        if not isinstance(items, (list, tuple)) or not all(isinstance(i, str) for i in items):
            return ""
    items = list(items)
    return qualify(items[:-1] if drop_last and len(items) > 1 else items)


def node_scope(node_name: str, metadata: dict[str, str] | None = None) -> str:
    """The module path of a node: from the dynamo exporter's name_scopes (without the node's own name where the
    class hierarchy ends in an op, as the exporter writes every node), else from the TorchScript exporter's name."""
    if metadata and NAME_SCOPES_KEY in metadata:
        own = _OP_LAST.search(metadata.get(CLASS_HIERARCHY_KEY, "")) is not None
        s = scope_from_metadata(metadata[NAME_SCOPES_KEY], own)
        if s:
            return s
    return scope_from_name(node_name)
