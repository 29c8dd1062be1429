"""Decorator registry of per-op cost formulas (one module per op family under ``ops/``) and of each op's traits.

A formula sees one node's shapes through an :class:`OpContext` and returns an :class:`OpWork`.
Registering the same op type twice raises. Ops with no formula are reported, never counted as zero.

An op's traits are declared where its formula is registered, once (:class:`OpTraits`): its class (``cls``, one
of OP_CLASSES: which kind of GPU kernel runs it, for calibration and charts), how ``torch.autocast`` treats it
(``autocast``), whether it is a view (``view``) and whether it is a recurrent layer (``recurrent``). Every table
that groups op types by a trait (graph/opclass, amp, graph/runtime, graph/traffic, optimize/, train/) is derived
here (:func:`op_traits`, :func:`ops_with`). A family whose ops differ in a trait stacks two registrations of one
formula. Traits are per op type, whatever the domain (an op registered in two domains declares the same traits).
"""
from __future__ import annotations

from collections.abc import Callable  # (typing.Callable compiles its string arguments at import)

from ..types import OpWork
from ..frozen import frozen_dataclass

Formula = Callable[["OpContext"], OpWork]  # noqa: F821 (OpContext lives in context.py)

# op classes, in the order of the charts' colours (plots/data.CLASS_COLORS)
OP_CLASSES = ("conv", "gemm", "attention", "rnn", "norm", "softmax", "reduce", "pool", "resize", "copy",
              "elementwise")
# torch.autocast on CUDA (predictor/amp.py): "low" ops compute in the 16-bit type (inputs cast to it), "fp32" ops in
# float32 (16-bit inputs cast up), "follow" ops in the widest float type of their activation inputs
AUTOCAST = ("follow", "low", "fp32")
# views: no kernel of their own in PyTorch eager. "reshape": Reshape/Flatten/Squeeze/Unsqueeze (same element order);
# "alias": Identity; "transpose": a strided view (permuted order); "dropout": the identity of an inference forward
VIEWS = ("reshape", "alias", "transpose", "dropout")
# the view kinds that are views of their input's storage in PyTorch (Tensor.view/permute...): looked through
STORAGE_VIEWS = ("reshape", "alias", "transpose")


@frozen_dataclass
class OpTraits:
    """What the code outside an op's formula may ask about its op type (see the module docstring)."""

    cls: str
    autocast: str = "follow"
    view: str | None = None
    recurrent: bool = False


# the traits of an op type with no formula (never costed; graph/opclass.op_class answers its class for charts)
UNREGISTERED = OpTraits(cls="elementwise")

_FORMULAS: dict[tuple[str, str], Formula] = {}
_TRAITS: dict[str, OpTraits] = {}
_DERIVED: dict[tuple, frozenset[str]] = {}

# domains whose ops are looked up as if they were in the default ONNX domain
_DEFAULT_DOMAINS = ("", "ai.onnx")


def _key(op_type: str, domain: str) -> tuple[str, str]:
    return (("" if domain in _DEFAULT_DOMAINS else domain), op_type)


def _check_traits(t: OpTraits) -> None:
    if t.cls not in OP_CLASSES:
        raise ValueError(f"op class {t.cls!r} is not one of {', '.join(OP_CLASSES)}")
    if t.autocast not in AUTOCAST:
        raise ValueError(f"autocast {t.autocast!r} is not one of {', '.join(AUTOCAST)}")
    if t.view is not None and t.view not in VIEWS:
        raise ValueError(f"view {t.view!r} is not one of {', '.join(VIEWS)}")


def declare(*op_types: str, cls: str, autocast: str = "follow", view: str | None = None,
            recurrent: bool = False) -> OpTraits:
    """Declare the traits of ``op_types`` (done by :func:`register`; alone for an op with no cost formula)."""
    t = OpTraits(cls=cls, autocast=autocast, view=view, recurrent=recurrent)
    _check_traits(t)
    for op in op_types:
        old = _TRAITS.get(op)
        if old is not None and old != t:
            raise ValueError(f"op {op!r} declared twice with different traits ({old} vs {t})")
        _TRAITS[op] = t
    _DERIVED.clear()
    return t


def register(*op_types: str, cls: str, domain: str = "", autocast: str = "follow", view: str | None = None,
             recurrent: bool = False) -> Callable[[Formula], Formula]:
    """Register ``fn`` as the cost formula of each op type in ``op_types``, which have the traits given."""

    def deco(fn: Formula) -> Formula:
        for op in op_types:
            key = _key(op, domain)
            if key in _FORMULAS:
                raise ValueError(f"cost formula for {op!r} (domain {domain!r}) registered twice")
        declare(*op_types, cls=cls, autocast=autocast, view=view, recurrent=recurrent)
        for op in op_types:
            _FORMULAS[_key(op, domain)] = fn
        return fn

    return deco


def lookup(op_type: str, domain: str = "") -> Formula | None:
    _load_ops()
    return _FORMULAS.get(_key(op_type, domain))


def registered_ops() -> list[str]:
    """Op types with a formula; those of another domain as ``domain.OpType`` (com.microsoft.Attention)."""
    _load_ops()
    return sorted(f"{dom}.{op}" if dom else op for (dom, op) in _FORMULAS)


def op_traits(op_type: str) -> OpTraits:
    """The declared traits of an op type (UNREGISTERED for one with no formula)."""
    _load_ops()
    return _TRAITS.get(op_type, UNREGISTERED)


def declared(op_type: str) -> bool:
    """Whether ``op_type`` declared its traits (it has a formula, or a declaration of its own)."""
    _load_ops()
    return op_type in _TRAITS


def ops_with(*, cls: str | None = None, autocast: str | None = None, view: tuple[str, ...] | None = None,
             recurrent: bool | None = None) -> frozenset[str]:
    """The op types whose traits match every criterion given (``view``: any of these view kinds)."""
    _load_ops()
    key = (cls, autocast, view, recurrent)
    found = _DERIVED.get(key)
    if found is None:
        found = frozenset(op for op, t in _TRAITS.items()
                          if (cls is None or t.cls == cls) and (autocast is None or t.autocast == autocast)
                          and (view is None or t.view in view) and (recurrent is None or t.recurrent == recurrent))
        _DERIVED[key] = found
    return found


_loaded = False


def _load_ops() -> None:
    global _loaded
    if not _loaded:
        _loaded = True
        from . import ops  # noqa: F401  (importing the package registers every family)
