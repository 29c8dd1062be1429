"""Decorator registry of per-op cost formulas (one module per op family under ``ops/``).

A formula sees one node's shapes through an :class:`OpContext` and returns an :class:`OpWork`.
Registering the same op type twice raises. Ops with no formula are reported, never counted as zero.
"""
from __future__ import annotations

from typing import Callable

from ..types import OpWork

Formula = Callable[["OpContext"], OpWork]  # noqa: F821 (OpContext lives in context.py)

_FORMULAS: dict[tuple[str, str], Formula] = {}

# domains whose ops are looked up as if they were in the default ONNX domain
_DEFAULT_DOMAINS = ("", "ai.onnx")


def _key(op_type: str, domain: str) -> tuple[str, str]:
    return (("" if domain in _DEFAULT_DOMAINS else domain), op_type)


def register(*op_types: str, domain: str = "") -> Callable[[Formula], Formula]:
    """Register ``fn`` as the cost formula of each op type in ``op_types``."""

    def deco(fn: Formula) -> Formula:
        for op in op_types:
            key = _key(op, domain)
            if key in _FORMULAS:
                raise ValueError(f"cost formula for {op!r} (domain {domain!r}) registered twice")
            _FORMULAS[key] = fn
        return fn

    return deco


def lookup(op_type: str, domain: str = "") -> Formula | None:
    _load_ops()
    return _FORMULAS.get(_key(op_type, domain))


def registered_ops() -> list[str]:
    """Op types with a formula; those of another domain as ``domain.OpType`` (com.microsoft.Attention)."""
    _load_ops()
    return sorted(f"{dom}.{op}" if dom else op for (dom, op) in _FORMULAS)


_loaded = False


def _load_ops() -> None:
    global _loaded
    if not _loaded:
        _loaded = True
        from . import ops  # noqa: F401  (importing the package registers every family)
