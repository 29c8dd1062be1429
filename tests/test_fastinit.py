"""predictor/fastinit.py: the replaced __init__ behaves as the dataclass's own."""
import inspect
from dataclasses import FrozenInstanceError, dataclass, field, replace

import pytest

from predictor.fastinit import fast_init
from predictor.types import FlopCount, Node, OpCost, OpPrediction, OpWork, TensorInfo


def _pair():
    def make():
        @dataclass(frozen=True, slots=True)
        class P:
            a: int
            b: tuple = ()
            c: list = field(default_factory=list)
        return P
    return make(), fast_init(make())


def test_same_signature_defaults_and_frozen():
    plain, fast = _pair()
    sp, sf = inspect.signature(plain).parameters, inspect.signature(fast).parameters
    assert list(sp) == list(sf) and sp["b"].default == sf["b"].default == ()
    assert [p.default is inspect.Parameter.empty for p in sp.values()] == \
        [p.default is inspect.Parameter.empty for p in sf.values()]
    x, y = plain(1), fast(1)
    assert (x.a, x.b, x.c) == (y.a, y.b, y.c) == (1, (), [])
    assert fast(1).c is not fast(1).c  # a fresh default per instance, as default_factory gives
    assert fast(2, (3,), [4]) == fast(a=2, b=(3,), c=[4])
    assert replace(fast(1), b=(5,)).b == (5,)
    with pytest.raises(FrozenInstanceError):
        y.a = 3
    with pytest.raises(TypeError):
        fast()


def test_types_keep_their_signatures():
    for cls in (TensorInfo, Node, OpWork, FlopCount, OpCost, OpPrediction):
        assert list(inspect.signature(cls).parameters) == [f for f in cls.__dataclass_fields__]


def test_op_cost_total_flops():
    from predictor.types import Precision, Unit, set_total_flops

    f = (FlopCount(Precision.FP32, Unit.CUDA, 2.0), FlopCount(Precision.FP16, Unit.TENSOR, 3.0))
    c = OpCost("n", "MatMul", f, {}, 1, OpWork({}, 0.0, 0.0, 1))
    assert c.total_flops == 5.0
    d = OpCost("n", "MatMul", f, {}, 1, OpWork({}, 0.0, 0.0, 1))
    set_total_flops(d, 5.0)
    assert d.total_flops == 5.0 and d == c and repr(d) == repr(c)
    assert replace(c, flops=f[:1]).total_flops == 2.0


def test_fast_replace_is_dataclasses_replace():
    from predictor.fastinit import fast_replace

    w = OpWork({}, 1.0, 2.0, 1, notes=("a",), gemm=(1, 2, 3, 4))
    assert fast_replace(w, kernels=0, notes=()) == replace(w, kernels=0, notes=())
    assert fast_replace(w) == w and fast_replace(w) is not w
    with pytest.raises(TypeError, match="unexpected keyword argument 'nope'"):
        fast_replace(w, nope=1)


def test_the_prediction_path_takes_its_inits_precompiled():
    # predictor/_fast_inits.py holds the __init__ of every fast_init class a prediction imports (else each compiles
    # at import): regenerate it with scripts/gen_fast_inits.py after changing a frozen dataclass's fields
    import sys

    import predictor.cli  # noqa: F401
    import predictor.predict  # noqa: F401
    import predictor.report  # noqa: F401
    from predictor._fast_inits import INITS
    from predictor.fastinit import init_source

    classes = [obj for name, mod in list(sys.modules.items()) if name.startswith("predictor.") and mod is not None
               for obj in vars(mod).values() if isinstance(obj, type) and "_fast_fields" in obj.__dict__]
    assert len(classes) >= 20
    stale = sorted(c.__qualname__ for c in classes if init_source(c)[0] not in INITS)
    assert not stale, f"run python scripts/gen_fast_inits.py ({', '.join(stale)} changed)"
    assert TensorInfo.__init__.__code__.co_filename.endswith("_fast_inits.py")


def test_a_class_missing_from_the_generated_module_is_compiled():
    @fast_init
    @dataclass(frozen=True, slots=True)
    class Odd:
        zz_only_here: int
        b: list = field(default_factory=list)

    assert Odd.__init__.__code__.co_filename == "<fast_init Odd>"
    assert Odd(1).zz_only_here == 1 and Odd(1).b == []
