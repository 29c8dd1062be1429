"""NVTX ranges: the module-range format the collector pushes, and ncu's rendering of a range stack.

The collector pushes one range per module call, ``mod|<qualified name>|<class>|<ONNX scope>``, e.g.
``mod|layer1.0.relu|ReLU|/layer1/layer1.0/relu_1`` for the second call of ``layer1.0.relu``.
The ONNX scope is the prefix that PyTorch's TorchScript ONNX exporter gives the nodes of that
call (``/layer1/layer1.0/relu_1/Relu``), computed by `ScopeTracker`. Ranges pushed by
``torch.autograd.profiler.emit_nvtx`` (one per aten op, e.g. ``aten::addmm, sizes = [...]``) sit
inside the module ranges; anything not starting with ``mod|`` is treated as such an op range.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

MODULE_TAG = "mod"
_SEP = "|"


@dataclass(frozen=True)
class ModuleRange:
    """One module call as recorded in its NVTX range."""

    qualname: str     # "" for the root module
    cls: str
    scope: str        # TorchScript-exporter node-name prefix, "" for the root

    def text(self) -> str:
        return _SEP.join((MODULE_TAG, self.qualname, self.cls, self.scope))


def parse_module_range(text: str) -> ModuleRange | None:
    """The `ModuleRange` of a range message, or None when it is not a module range."""
    parts = text.split(_SEP)
    if len(parts) != 4 or parts[0] != MODULE_TAG:
        return None
    return ModuleRange(parts[1], parts[2], parts[3])


def innermost_module(stack: tuple[str, ...]) -> tuple[int, ModuleRange] | None:
    """(index, range) of the innermost module range of an outer-to-inner stack, or None."""
    for i in range(len(stack) - 1, -1, -1):
        rng = parse_module_range(stack[i])
        if rng is not None:
            return i, rng
    return None


def unqualified_name(qualname: str) -> str:
    """The exporter's scope name of a module: its last name atom, reaching back past numeric
    atoms ('layer1.0.conv1' -> 'conv1', 'layer1.0' -> 'layer1.0', 'encoder.layer.0' -> 'layer.0')."""
    atoms = qualname.split(".")
    for i in range(len(atoms) - 1, -1, -1):
        if not atoms[i].isnumeric():
            return ".".join(atoms[i:])
    return qualname


class ScopeTracker:
    """Computes the TorchScript ONNX exporter's scope of each module call, in call order.

    The exporter names a node ``<scope>/<OpType>``: the scope joins the unqualified names of the
    modules on the call stack ('/layer1/layer1.0/conv1'), and a scope string seen before gets
    '_1', '_2', ... appended ('/layer1/layer1.0/relu_1' for the second call of that ReLU).
    NB: the exporter counts only scopes that own nodes; a module call that exports to no node
    (Dropout in eval) still takes a suffix here, so a later call of it may be off by one.
    """

    def __init__(self) -> None:
        self._stack: list[str] = []           # plain (unsuffixed) scopes of the open calls
        self._seen: dict[str, int] = {}

    def reset(self) -> None:
        self._stack.clear()
        self._seen.clear()

    def enter(self, qualname: str, cls: str) -> ModuleRange:
        if not self._stack and qualname == "":
            plain = ""
        else:
            parent = self._stack[-1] if self._stack else ""
            plain = f"{parent}/{unqualified_name(qualname)}"
        count = self._seen.get(plain)
        self._seen[plain] = 0 if count is None else count + 1
        scope = plain if count is None else f"{plain}_{count + 1}"
        self._stack.append(plain)
        return ModuleRange(qualname, cls, scope)

    def exit(self) -> None:
        if self._stack:
            self._stack.pop()

    @property
    def depth(self) -> int:
        return len(self._stack)


# ----------------------------------------------------------------------------- ncu's NVTX column
# ncu --nvtx prints a push/pop stack in one cell as the thread id followed by one quoted entry per
# range, outermost first:  1234  "<default domain>:layer1:none:none:none:none:none:none"  "..."
# Each entry is Domain:Message:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg.
_ENTRY = re.compile(r'"([^"]*)"')
_TRAILING_FIELDS = 6


def parse_ncu_stack(cell: str) -> tuple[str, ...]:
    """Range messages (outer to inner) from an ncu NVTX push/pop cell; () for an empty cell.

    The domain (up to the first ':') and the six trailing attribute fields are dropped; colons
    inside a message are kept. A cell without quoted entries is taken as one bare message.
    """
    cell = (cell or "").strip()
    if not cell:
        return ()
    entries = _ENTRY.findall(cell)
    if not entries:
        return (cell,)
    out = []
    for entry in entries:
        _domain, sep, rest = entry.partition(":")
        body = rest if sep else entry
        parts = body.rsplit(":", _TRAILING_FIELDS)
        out.append(parts[0] if len(parts) == _TRAILING_FIELDS + 1 else body)
    return tuple(out)
