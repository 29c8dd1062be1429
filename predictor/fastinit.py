"""A faster ``__init__`` for the frozen slots dataclasses built once per node (predictor/types.py).

A frozen dataclass's generated ``__init__`` stores each field with ``object.__setattr__(self, name, value)``: a
generic attribute lookup per field. :func:`fast_init` replaces it by one with the same signature (defaults and
default factories included) that stores through the class's slot descriptors directly, about twice as fast.
The class stays frozen: assigning to a field outside ``__init__`` still raises. Declared with
``@dataclass(..., init=False)`` the class never gets the generated ``__init__`` at all (compiling it costs ~1.8M
instructions at import for a class of ten fields: start-up); the replacement has the same signature and
annotations either way.
"""
from __future__ import annotations

from dataclasses import MISSING, fields

class _HasFactory:
    """The default of a field with a default factory in the signature (shown as dataclasses shows it)."""

    def __repr__(self):
        return "<factory>"


_HAS_FACTORY = _HasFactory()


def fast_init(cls):
    """Replace the generated ``__init__`` of ``cls`` (a frozen dataclass) or give it one (a dataclass made with
    ``init=False``); returns ``cls``. With ``slots=True`` the fields are stored through the slot descriptors,
    otherwise by ``object.__setattr__`` (what a frozen dataclass's own ``__init__`` calls)."""
    if hasattr(cls, "__post_init__"):
        raise TypeError(f"fast_init: {cls.__name__} has a __post_init__")
    ns: dict = {"_HAS_FACTORY": _HAS_FACTORY, "_object_setattr": object.__setattr__}
    params, body = [], []
    for f in fields(cls):
        if not f.init or f.kw_only:
            raise TypeError(f"fast_init: field {cls.__name__}.{f.name} is not a plain positional init field")
        slotted = "__slots__" in cls.__dict__
        if slotted:
            ns[f"_set_{f.name}"] = cls.__dict__[f.name].__set__  # the slot's member descriptor
        if f.default is not MISSING:
            ns[f"_default_{f.name}"] = f.default
            params.append(f"{f.name}=_default_{f.name}")
        elif f.default_factory is not MISSING:
            ns[f"_factory_{f.name}"] = f.default_factory
            params.append(f"{f.name}=_HAS_FACTORY")
            body.append(f"    if {f.name} is _HAS_FACTORY:\n        {f.name} = _factory_{f.name}()")
        else:
            params.append(f.name)
        body.append(f"    _set_{f.name}(self, {f.name})" if slotted else
                    f"    _object_setattr(self, {f.name!r}, {f.name})")
    src = f"def __init__(self, {', '.join(params)}):\n" + "\n".join(body or ["    pass"]) + "\n"
    exec(compile(src, f"<fast_init {cls.__name__}>", "exec"), ns)  # noqa: S102 - source built from field names
    init = ns["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    generated = cls.__dict__.get("__init__")
    if generated is not None:
        init.__doc__ = generated.__doc__
        init.__annotations__ = dict(generated.__annotations__)
    else:  # (init=False) the annotations dataclasses gives its generated __init__
        init.__annotations__ = {**{f.name: f.type for f in fields(cls)}, "return": None}
    cls.__init__ = init
    cls._fast_fields = tuple(f.name for f in fields(cls))  # (fast_replace's field order)
    cls._fast_field_set = frozenset(cls._fast_fields)
    return cls


def fast_replace(obj, **changes):
    """``dataclasses.replace(obj, **changes)`` for an instance of a :func:`fast_init` class: the same object, built
    positionally from the field list :func:`fast_init` keeps on the class (the stdlib's walks every field's
    metadata on each call: a third of the runtime patterns' time on a 100k-node graph)."""
    cls = obj.__class__
    if not cls._fast_field_set.issuperset(changes):
        bad = next(k for k in changes if k not in cls._fast_field_set)
        raise TypeError(f"{cls.__name__}.__init__() got an unexpected keyword argument '{bad}'")
    return cls(*[changes[n] if n in changes else getattr(obj, n) for n in cls._fast_fields])
