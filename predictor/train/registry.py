"""Decorator registry of backward rules, keyed by op type (and domain), like the forward cost formulas.

A rule sees one forward op through a :class:`~predictor.train.context.BackwardContext` and returns the
backward kernels it launches (``ctx.kernel(...)``), declaring what it keeps from the forward pass
(``ctx.save``), which input gradients are the output gradient itself (``ctx.passthrough``), and small
tensors its forward kernel writes for it (``ctx.internal``: batch-norm statistics, attention log-sum-exp,
max-pool indices). It returns None when it cannot cost this configuration (reported like an op without a
rule, never counted as zero). ``diff`` lists the differentiable input slots (None: every floating-point
input): gradients flow only through those (a Gather's indices, a batch norm's running statistics never).

Keys besides ONNX op types: ``View`` (a forward op that launches nothing: reshape, identity, no-op slices),
``FusedAttention``, ``FusedElementwise`` and ``FusedVar`` (groups that graph/runtime.py folds into one kernel).
Registering the same key twice raises.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

Rule = Callable[["BackwardContext"], "list | None"]  # noqa: F821 (context.py)

_DEFAULT_DOMAINS = ("", "ai.onnx")


@dataclass(frozen=True)
class RuleSpec:
    fn: Rule
    diff: tuple[int, ...] | None = None  # differentiable input slots; None = every float input


_RULES: dict[tuple[str, str], RuleSpec] = {}


def _key(op_type: str, domain: str) -> tuple[str, str]:
    return ("" if domain in _DEFAULT_DOMAINS else domain, op_type)


def backward(*op_types: str, domain: str = "", diff: tuple[int, ...] | None = None) -> Callable[[Rule], Rule]:
    """Register ``fn`` as the backward rule of each op type in ``op_types``."""

    def deco(fn: Rule) -> Rule:
        for op in op_types:
            key = _key(op, domain)
            if key in _RULES:
                raise ValueError(f"backward rule for {op!r} (domain {domain!r}) registered twice")
            _RULES[key] = RuleSpec(fn, diff)
        return fn

    return deco


def lookup(op_type: str, domain: str = "") -> RuleSpec | None:
    _load_rules()
    return _RULES.get(_key(op_type, domain))


def registered() -> list[str]:
    _load_rules()
    return sorted(op for (_, op) in _RULES)


_loaded = False


def _load_rules() -> None:
    global _loaded
    if not _loaded:
        _loaded = True
        from . import rules  # noqa: F401  (importing the package registers every family)
