"""``@frozen_dataclass``: ``@dataclass(frozen=True)`` whose ``__repr__``, ``__eq__`` and ``__hash__`` are closures
over the field names instead of source text compiled for each class at import.

A frozen dataclass gets six generated functions (``__init__``, ``__repr__``, ``__eq__``, ``__hash__``,
``__setattr__``, ``__delattr__``), each compiled from text when its class is created: ~0.1 ms apiece, a tenth of
a small model's whole run for the two dozen classes a prediction imports. Here the stdlib makes the class with
``repr=False, eq=False`` (it still makes ``__init__`` and the frozen ``__setattr__``/``__delattr__``) and the
three others are added as the stdlib writes them: the repr ``Class(a=..., b=...)`` of the ``repr`` fields
(``...`` on recursion), equality of the tuples of the ``compare`` fields between instances of the same class
(else ``NotImplemented``), the hash of that tuple (of the ``hash`` fields where a field says so). The class's
``__dataclass_params__`` reads as ``@dataclass(frozen=True)``'s, so subclasses and introspection see no
difference. Keyword arguments other than ``frozen``, ``repr``, ``eq``, ``order`` and ``unsafe_hash`` pass through
(``slots``, ``init``, ...).
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from _thread import get_ident

_OWN = ("__repr__", "__eq__", "__hash__")


def frozen_dataclass(cls=None, /, **kwargs):
    """``@dataclass(frozen=True, **kwargs)`` (see the module docstring); usable bare or with arguments."""
    for k in ("frozen", "repr", "eq", "order", "unsafe_hash"):
        if k in kwargs:
            raise TypeError(f"frozen_dataclass does not take {k}=")

    def wrap(c):
        for name in _OWN:
            if name in c.__dict__:
                raise TypeError(f"frozen_dataclass: {c.__name__} defines {name}; use @dataclass")
        c = dataclass(c, frozen=True, repr=False, eq=False, **kwargs)
        fs = fields(c)
        c.__repr__ = _repr_fn(c, tuple(f.name for f in fs if f.repr))
        compared = _values_fn(tuple(f.name for f in fs if f.compare))
        c.__eq__ = _eq_fn(c, compared)
        c.__hash__ = _hash_fn(c, _values_fn(tuple(f.name for f in fs if (f.compare if f.hash is None else f.hash))))
        params = c.__dataclass_params__
        params.repr = params.eq = True
        return c

    return wrap if cls is None else wrap(cls)


def _values_fn(names: tuple[str, ...]):
    """``self -> (self.a, self.b, ...)`` (always a tuple)."""
    if not names:
        return lambda self: ()
    if len(names) == 1:
        (name,) = names
        return lambda self: (getattr(self, name),)
    from operator import attrgetter

    return attrgetter(*names)


def _name(c, fn, name: str):
    fn.__name__ = name
    fn.__qualname__ = f"{c.__qualname__}.{name}"
    fn.__module__ = c.__module__
    return fn


def _repr_fn(c, names: tuple[str, ...]):
    running: set = set()

    def __repr__(self):
        key = id(self), get_ident()
        if key in running:
            return "..."
        running.add(key)
        try:
            return self.__class__.__qualname__ + "(" + ", ".join([f"{n}={getattr(self, n)!r}" for n in names]) + ")"
        finally:
            running.discard(key)

    return _name(c, __repr__, "__repr__")


def _eq_fn(c, values):
    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return values(self) == values(other)
        return NotImplemented

    return _name(c, __eq__, "__eq__")


def _hash_fn(c, values):
    def __hash__(self):
        return hash(values(self))

    return _name(c, __hash__, "__hash__")
