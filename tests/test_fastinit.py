"""predictor/fastinit.py: the generated __init__ and replace behave as dataclasses' own."""
import dataclasses
from dataclasses import dataclass, field

import pytest

from predictor.fastinit import fast_init, replace
from predictor.types import OpCost, OpWork, TensorInfo, frozen_map


@fast_init
@dataclass(frozen=True)
class _Point:
    x: int
    y: int = 2
    tags: dict = field(default_factory=dict)


def test_init_keeps_defaults_factories_order_and_frozenness():
    p = _Point(1)
    assert (p.x, p.y, p.tags) == (1, 2, {}) and list(vars(p)) == ["x", "y", "tags"]
    assert _Point(1).tags is not _Point(1).tags  # a fresh default per instance
    assert _Point(3, 4, {"a": 1}) == _Point(x=3, y=4, tags={"a": 1})
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.x = 5
    with pytest.raises(TypeError):
        _Point()


def test_replace_copies_fields_only():
    w = OpWork(frozen_map({}), 1.0, 2.0, 1, notes=("a",))
    assert replace(w, kernels=3) == dataclasses.replace(w, kernels=3)
    c = OpCost("n", "Relu", (), frozen_map(), 1, w)
    assert c.total_flops == 0.0  # cached in the instance
    assert "total_flops" not in vars(replace(c, name="m"))
    with pytest.raises(TypeError):
        replace(w, nope=1)


def test_refuses_classes_it_cannot_speed_up():
    @dataclass(frozen=True)
    class Post:
        x: int

        def __post_init__(self):
            pass

    with pytest.raises(TypeError):
        fast_init(Post)
    assert TensorInfo("t", "float32", (1,)).numel == 1
