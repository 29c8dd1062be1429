"""Registry of graph optimisation passes: ``@optimization("name", order=N)`` and :func:`apply_passes`.

A pass is a function ``Graph -> Graph`` (pure: the input graph is frozen and never changed). Passes run in
their registered ``order`` whatever order they are named in, so ``bn_fold,elementwise`` and
``elementwise,bn_fold`` give the same graph. ``all`` names the passes registered with ``in_all=True``:
the set that approximates TorchInductor's default mode (see predictor/optimize/__init__.py).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable

from ..graph.loader import Graph
from ..types import PredictorError

Pass = Callable[[Graph], Graph]
ALL = "all"


@dataclass(frozen=True)
class _Entry:
    """A registered optimisation pass."""

    name: str
    fn: Pass
    order: int
    in_all: bool


_PASSES: dict[str, _Entry] = {}


def optimization(name: str, order: int, in_all: bool = True) -> Callable[[Pass], Pass]:
    """Register ``fn`` as the pass ``name``; ``order`` places it in every pipeline; ``in_all``: part of ``all``."""

    def deco(fn: Pass) -> Pass:
        if name in _PASSES or name == ALL:
            raise ValueError(f"optimization pass {name!r} registered twice")
        _PASSES[name] = _Entry(name, fn, order, in_all)
        return fn

    return deco


def _load() -> None:
    from . import attention, bn_fold, conv_bias_act, elementwise, layout  # noqa: F401  (register the passes)


def known_passes() -> tuple[str, ...]:
    """Every pass name in pipeline order."""
    _load()
    return tuple(e.name for e in sorted(_PASSES.values(), key=lambda e: e.order))


def all_passes() -> tuple[str, ...]:
    """The passes ``all`` stands for, in pipeline order."""
    _load()
    return tuple(e.name for e in sorted(_PASSES.values(), key=lambda e: e.order) if e.in_all)


def resolve(names: str | Iterable[str] | None) -> tuple[str, ...]:
    """Pass names (a comma list or a sequence; ``all`` expands) in pipeline order; unknown names are an error."""
    if not names:
        return ()
    _load()
    items = names.split(",") if isinstance(names, str) else list(names)
    wanted: set[str] = set()
    for raw in items:
        name = str(raw).strip().lower()
        if not name or name == "none":
            continue
        if name == ALL:
            wanted.update(all_passes())
        elif name in _PASSES:
            wanted.add(name)
        else:
            known = ", ".join(known_passes() + (ALL,))
            raise PredictorError(f"unknown optimization pass '{str(raw).strip()[:60]}' (known: {known})")
    return tuple(n for n in known_passes() if n in wanted)


def apply_passes(graph: Graph, names: str | Iterable[str] | None) -> Graph:
    """``graph`` with the named passes applied in pipeline order (see :func:`resolve`)."""
    for name in resolve(names):
        graph = _PASSES[name].fn(graph)
    return graph
