"""``@frozen_dataclass``: ``@dataclass(frozen=True)`` whose methods are made without compiling source per class.

A frozen dataclass gets six generated functions (``__init__``, ``__repr__``, ``__eq__``, ``__hash__``,
``__setattr__``, ``__delattr__``), each compiled from text when its class is created: ~0.1 ms apiece, a tenth of
a small model's whole run for the two dozen classes a prediction imports. Here the stdlib makes the class (fields,
defaults, slots, ``__match_args__``) without any of them; ``__init__`` is :func:`predictor.fastinit.fast_init`'s
(one compile, the same signature) and the five others are closures over the field names that do what the
stdlib's do: the repr ``Class(a=..., b=...)`` of the ``repr`` fields (``...`` on recursion), equality of the
tuples of the ``compare`` fields between instances of the same class (else ``NotImplemented``), the hash of that
tuple (of the ``hash`` fields where a field says so), ``FrozenInstanceError`` on assigning or deleting a field (any
attribute of the class itself), and with ``slots=True`` the ``__getstate__``/``__setstate__`` that let copy and
deepcopy rebuild an instance. ``__dataclass_params__`` reads as ``@dataclass(frozen=True)``'s. Fields must be plain
positional init fields and the class has no ``__post_init__`` (fast_init's terms). Keyword arguments other than
``frozen``, ``repr``, ``eq``, ``order`` and ``unsafe_hash`` pass through (``slots``, ``init``, ...).
"""
from __future__ import annotations

from dataclasses import FrozenInstanceError, dataclass, fields
from _thread import get_ident

from .fastinit import fast_init

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
        for name in ("__setattr__", "__delattr__"):
            if name in c.__dict__:
                raise TypeError(f"Cannot overwrite attribute {name} in class {c.__name__}")
        init = kwargs.pop("init", True)
        undocumented = not getattr(c, "__doc__")
        c = dataclass(c, frozen=False, repr=False, eq=False, init=False, **kwargs)
        if init:
            fast_init(c)
            if undocumented:  # the stdlib's docstring of a class with none: its name and signature
                import inspect

                c.__doc__ = c.__name__ + str(inspect.signature(c)).replace(" -> None", "")
        fs = fields(c)
        c.__repr__ = _repr_fn(c, tuple(f.name for f in fs if f.repr))
        compared = _values_fn(tuple(f.name for f in fs if f.compare))
        c.__eq__ = _eq_fn(c, compared)
        c.__hash__ = _hash_fn(c, _values_fn(tuple(f.name for f in fs if (f.compare if f.hash is None else f.hash))))
        names = frozenset(f.name for f in fs)
        c.__setattr__ = _frozen_fn(c, names, "__setattr__", "cannot assign to field")
        c.__delattr__ = _frozen_fn(c, names, "__delattr__", "cannot delete field")
        if "__slots__" in c.__dict__:
            c.__getstate__ = _getstate
            c.__setstate__ = _setstate
        params = c.__dataclass_params__
        params.init, params.repr, params.eq, params.frozen = init, True, True, True
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


def _frozen_fn(c, names: frozenset, name: str, what: str):
    if name == "__setattr__":
        def fn(self, attr, value):
            if type(self) is c or attr in names:
                raise FrozenInstanceError(f"{what} {attr!r}")
            super(c, self).__setattr__(attr, value)
    else:
        def fn(self, attr):
            if type(self) is c or attr in names:
                raise FrozenInstanceError(f"{what} {attr!r}")
            super(c, self).__delattr__(attr)
    return _name(c, fn, name)


def _getstate(self):
    return [getattr(self, f.name) for f in fields(self)]


def _setstate(self, state):
    for f, value in zip(fields(self), state):
        object.__setattr__(self, f.name, value)
