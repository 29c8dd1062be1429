"""A faster ``__init__`` for the frozen dataclasses built once per node (TensorInfo, Node, OpWork, OpCost,
OpPrediction): a 100k-node graph builds half a million of them.

The ``__init__`` dataclasses writes for a frozen class sets each field through ``object.__setattr__``; the one
:func:`fast_init` writes stores them in the instance's ``__dict__`` (~2.5x faster): same signature, defaults, default
factories and attribute order, still frozen (assignment raises as before). Only for dataclasses without
``__post_init__``, ``InitVar``, keyword-only fields or slots (checked at decoration). :func:`replace` is
``dataclasses.replace`` for such classes, without a call through ``__init__``.
"""
from __future__ import annotations

import dataclasses
from dataclasses import MISSING, fields


def fast_init(cls: type) -> type:
    """Replace the dataclass ``cls``'s generated ``__init__`` (decorate above ``@dataclass(frozen=True)``)."""
    fs = fields(cls)
    if (hasattr(cls, "__post_init__") or hasattr(cls, "__slots__") or len(fs) != len(cls.__dataclass_fields__)
            or any(f.kw_only or not f.init for f in fs)):
        raise TypeError(f"fast_init: {cls.__name__} is not a plain frozen dataclass")
    env: dict = {"_MISSING": object()}
    params, body = [], []
    for f in fs:
        if f.default is not MISSING:
            env[f"_d_{f.name}"] = f.default
            params.append(f"{f.name}=_d_{f.name}")
        elif f.default_factory is not MISSING:
            env[f"_f_{f.name}"] = f.default_factory
            params.append(f"{f.name}=_MISSING")
            body.append(f"    if {f.name} is _MISSING:\n        {f.name} = _f_{f.name}()\n")
        else:
            params.append(f.name)
    body.append("    d = self.__dict__\n")  # one item store a field keeps the dict's shared keys (update() would not)
    body += [f"    d[{f.name!r}] = {f.name}\n" for f in fs]
    src = f"def __init__(self, {', '.join(params)}):\n{''.join(body)}"
    exec(src, env)  # noqa: S102 - source built above from the class's own field names
    init = env["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__doc__ = cls.__init__.__doc__
    cls.__init__ = init
    cls.__fast_fields__ = tuple(f.name for f in fs)
    return cls


def replace(obj, **changes):
    """``dataclasses.replace(obj, **changes)`` for an instance of a :func:`fast_init` class: its fields copied (not
    the values its instance dict caches), then ``changes``; an unknown name raises TypeError as dataclasses does."""
    names = type(obj).__dict__.get("__fast_fields__")
    if names is None:  # not a fast_init class itself (a subclass): the dataclasses way
        return dataclasses.replace(obj, **changes)
    if not changes.keys() <= set(names):
        raise TypeError(f"{type(obj).__name__} has no field(s) {sorted(changes.keys() - set(names))}")
    src = obj.__dict__
    new = object.__new__(type(obj))
    d = new.__dict__
    for n in names:  # in field order, one item at a time (as fast_init's __init__)
        d[n] = changes[n] if n in changes else src[n]
    return new
