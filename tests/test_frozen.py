"""predictor/frozen.py: @frozen_dataclass behaves as @dataclass(frozen=True), its repr, equality and hash made
without compiling source."""
import copy
import math
from dataclasses import FrozenInstanceError, dataclass, field, fields, replace

import pytest

from predictor.frozen import frozen_dataclass


def _pair(**kwargs):
    def body():
        class P:
            a: int
            b: float = 0.0
            c: tuple = field(default=(), repr=False)
            d: list = field(default_factory=list, compare=False)
            e: str = field(default="", hash=False)
        return P
    return dataclass(body(), frozen=True, **kwargs), frozen_dataclass(**kwargs)(body())


@pytest.mark.parametrize("slots", [False, True])
def test_same_behaviour_as_the_stdlib(slots):
    plain, fast = _pair(slots=slots)
    for args in [(1,), (2, 1.5, (3,), [4], "x"), (1, math.nan)]:
        x, y = plain(*args), fast(*args)
        assert repr(x).replace(plain.__qualname__, "Q") == repr(y).replace(fast.__qualname__, "Q")
        assert hash(x) == hash(y)
        assert (x == plain(*args)) == (y == fast(*args))
        nan = y.b
        assert (fast(1, nan) == fast(1, nan)) is True  # (the same NaN object: tuple equality, as the stdlib's)
    assert fast(1, d=[1]) == fast(1, d=[2]) and fast(1, e="a") != fast(1, e="b")
    assert hash(fast(1, e="a")) == hash(fast(1, e="b"))
    assert fast(1).__eq__(plain(1)) is NotImplemented and fast(1) != (1, 0.0, (), [], "")
    y = fast(1)
    with pytest.raises(FrozenInstanceError, match="cannot assign to field 'a'"):
        y.a = 2
    with pytest.raises(FrozenInstanceError, match="cannot delete field 'a'"):
        del y.a
    assert replace(y, a=5) == fast(5) and [f.name for f in fields(fast)] == list("abcde")
    assert copy.deepcopy(fast(3, d=[1])) == fast(3) and fast.__match_args__ == plain.__match_args__
    p, q = plain.__dataclass_params__, fast.__dataclass_params__
    assert (p.init, p.repr, p.eq, p.order, p.unsafe_hash, p.frozen) == (q.init, q.repr, q.eq, q.order,
                                                                       q.unsafe_hash, q.frozen)
    for name in ("__repr__", "__eq__", "__hash__"):
        assert getattr(fast, name).__qualname__ == f"{fast.__qualname__}.{name}"


def test_recursive_repr_and_subclass():
    @frozen_dataclass
    class Box:
        items: list

    b = Box([])
    b.items.append(b)
    assert repr(b) == "test_recursive_repr_and_subclass.<locals>.Box(items=[...])"

    @dataclass(frozen=True)
    class Sub(Box):  # a frozen dataclass may inherit from it, as from any frozen dataclass
        n: int = 0

    assert Sub([], 1) == Sub([], 1) and Sub([], 1) != Sub([], 2)


def test_refuses_what_it_cannot_mirror():
    with pytest.raises(TypeError):
        frozen_dataclass(eq=False)
    with pytest.raises(TypeError):
        @frozen_dataclass
        class R:
            a: int

            def __repr__(self):
                return "r"


def test_init_setattr_and_docstring_as_the_stdlibs():
    def body():
        class D:
            a: int
            b: list = field(default_factory=list)
        return D
    plain, fast = dataclass(body(), frozen=True), frozen_dataclass(body())
    assert fast.__doc__ == plain.__doc__ == "D(a: int, b: list = <factory>)"
    import inspect
    assert str(inspect.signature(fast)) == str(inspect.signature(plain))
    assert fast(1).b is not fast(1).b and fast(1, [2]).b == [2]
    with pytest.raises(FrozenInstanceError, match="cannot assign to field 'other'"):
        fast(1).other = 3  # (any attribute of the class itself, as the stdlib's)
    with pytest.raises(TypeError):
        fast()
    with pytest.raises(TypeError):
        frozen_dataclass(type("P", (), {"__annotations__": {"a": "int"}, "__post_init__": lambda self: None}))
