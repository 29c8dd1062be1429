"""A faster ``__init__`` for the frozen slots dataclasses built once per node (predictor/types.py).

A frozen dataclass's generated ``__init__`` stores each field with ``object.__setattr__(self, name, value)``: a
generic attribute lookup per field. :func:`fast_init` replaces it by one with the same signature (defaults and
default factories included) that stores the fields of a slots class as plain attributes of a mutable twin of the
class (see ``_mutable_twin``) and of another class through ``object.__setattr__``.
The class stays frozen: assigning to a field outside ``__init__`` still raises. Declared with
``@dataclass(..., init=False)`` the class never gets the generated ``__init__`` at all (compiling it costs ~1.8M
instructions at import for a class of ten fields: start-up); the replacement has the same signature and
annotations either way.
"""
from __future__ import annotations

from dataclasses import MISSING, fields
from operator import attrgetter

class _HasFactory:
    """The default of a field with a default factory in the signature (shown as dataclasses shows it)."""

    def __repr__(self):
        return "<factory>"


_HAS_FACTORY = _HasFactory()


def fast_init(cls):
    """Replace the generated ``__init__`` of ``cls`` (a frozen dataclass) or give it one (a dataclass made with
    ``init=False``); returns ``cls``. With ``slots=True`` the fields are stored as plain attributes of the class's
    mutable twin, and the class gets ``_fast_new`` too: a function of ``__init__``'s parameters that returns a new
    instance (no type call: for the loops that make one per node); otherwise they are stored by
    ``object.__setattr__`` (what a frozen dataclass's own ``__init__`` calls). The functions are taken
    from ``predictor/_fast_inits.py`` when that module holds its source (no compile: its bytecode is cached as any
    module's), else compiled here."""
    src, ns = init_source(cls)
    factory = _precompiled().get(src)
    if factory is not None:
        made = factory(ns)
    else:
        exec(compile(src, f"<fast_init {cls.__name__}>", "exec"), ns)  # noqa: S102 - source built from field names
        made = (ns["__init__"], ns["_fast_new"]) if "_fast_new" in ns else ns["__init__"]
    init = made
    if type(made) is tuple:  # a slots class: its __init__ and its _fast_new
        init, new = made
        new.__qualname__ = f"{cls.__qualname__}._fast_new"
        new.__module__ = cls.__module__
        cls._fast_new = staticmethod(new)
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
    cls._fast_index = {name: k for k, name in enumerate(cls._fast_fields)}
    cls._fast_values = staticmethod(_values_getter(cls._fast_fields))
    return cls


def _values_getter(names: tuple[str, ...]):
    """``obj -> (obj.a, obj.b, ...)`` (always a tuple; one C call)."""
    if len(names) == 1:
        getter = attrgetter(names[0])
        return lambda obj: (getter(obj),)
    return attrgetter(*names) if names else (lambda obj: ())


def init_source(cls) -> tuple[str, dict]:
    """The source of :func:`fast_init`'s ``__init__`` for ``cls`` and the names it reads (slot setters, defaults,
    default factories)."""
    if hasattr(cls, "__post_init__"):
        raise TypeError(f"fast_init: {cls.__name__} has a __post_init__")
    ns: dict = {"_HAS_FACTORY": _HAS_FACTORY, "_object_setattr": object.__setattr__}
    params, body = [], []
    slotted = "__slots__" in cls.__dict__
    if slotted:  # the instance is the mutable twin's while its slots are filled (see _mutable_twin)
        ns["_Twin"], ns["_Cls"] = _mutable_twin(cls), cls
        body.append("    _object_setattr(self, '__class__', _Twin)")
    for f in fields(cls):
        if not f.init or f.kw_only:
            raise TypeError(f"fast_init: field {cls.__name__}.{f.name} is not a plain positional init field")
        if f.default is not MISSING:
            ns[f"_default_{f.name}"] = f.default
            params.append(f"{f.name}=_default_{f.name}")
        elif f.default_factory is not MISSING:
            ns[f"_factory_{f.name}"] = f.default_factory
            params.append(f"{f.name}=_HAS_FACTORY")
            body.append(f"    if {f.name} is _HAS_FACTORY:\n        {f.name} = _factory_{f.name}()")
        else:
            params.append(f.name)
        body.append(f"    self.{f.name} = {f.name}" if slotted else f"    _object_setattr(self, {f.name!r}, {f.name})")
    init = f"def __init__(self, {', '.join(params)}):\n" + "\n".join(body or ["    pass"]) + "\n"
    if not slotted:
        return init, ns
    # _fast_new: the same stores on a new twin, without the type call and the first change of class
    ns["_object_new"] = object.__new__
    made = "\n".join(["    self = _object_new(_Twin)"] + body[1:] + ["    self.__class__ = _Cls", "    return self"])
    init += "    self.__class__ = _Cls\n"
    return init + f"\n\ndef _fast_new({', '.join(params)}):\n" + made + "\n", ns


def _mutable_twin(cls):
    """A subclass of the slots class ``cls`` that adds no slot and assigns attributes as a plain object does.
    :func:`fast_init`'s ``__init__`` turns the new instance into one (same layout: ``__class__`` may change), stores
    each field as a plain attribute (about three times as fast as a call of the slot descriptor's ``__set__``) and
    turns it back into a ``cls``, frozen as before. ``cls`` then refuses subclasses (their instances would come out
    of ``__init__`` as a ``cls``)."""
    twin = cls.__dict__.get("_fast_twin")
    if twin is None:
        twin = type(cls.__name__, (cls,), {"__slots__": (), "__setattr__": object.__setattr__,
                                           "__delattr__": object.__delattr__,  # (both: the C slot, no lookup)
                                           "__module__": cls.__module__, "__qualname__": cls.__qualname__})
        cls._fast_twin = twin
        cls.__init_subclass__ = classmethod(_no_subclass)
    return twin


def _no_subclass(cls, **kwargs):
    raise TypeError(f"{cls.__mro__[1].__name__} is a fast_init slots class: it cannot be subclassed")


def factory_source(src: str, ns: dict, name: str) -> str:
    """``src`` as the body of a function ``name(ns)`` that binds the names it reads from ``ns`` and returns the
    ``__init__`` it defines (what scripts/gen_fast_inits.py writes into predictor/_fast_inits.py)."""
    lines = [f"def {name}(ns):"]
    lines += [f"    {k} = ns[{k!r}]" for k in sorted(ns) if k in src]
    lines += ["    " + line if line else line for line in src.rstrip("\n").split("\n")]
    lines.append("    return (__init__, _fast_new)" if "\ndef _fast_new(" in src else "    return __init__")
    return "\n".join(lines) + "\n"


_PRECOMPILED: dict | None = None


def _precompiled() -> dict:
    global _PRECOMPILED
    if _PRECOMPILED is None:
        try:
            from ._fast_inits import INITS
        except ImportError:  # (being regenerated)
            INITS = {}
        _PRECOMPILED = INITS
    return _PRECOMPILED


def fast_replace(obj, **changes):
    """``dataclasses.replace(obj, **changes)`` for an instance of a :func:`fast_init` class: the same object, built
    positionally from the field list :func:`fast_init` keeps on the class (the stdlib's walks every field's
    metadata on each call: a third of the runtime patterns' time on a 100k-node graph)."""
    cls = obj.__class__
    if not cls._fast_field_set.issuperset(changes):
        bad = next(k for k in changes if k not in cls._fast_field_set)
        raise TypeError(f"{cls.__name__}.__init__() got an unexpected keyword argument '{bad}'")
    values = list(cls._fast_values(obj))
    at = cls._fast_index
    for name, value in changes.items():
        values[at[name]] = value
    return getattr(cls, "_fast_new", cls)(*values)
