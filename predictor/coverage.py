"""Whether a prediction covers the graph. When most of the ops that launch kernels could not be costed
because their shapes stayed unknown (an input bound to a shape the graph's reshapes do not accept, a static
export run at another size), the total leaves most of the work out and must not look like a prediction:
``predict`` then fails with a one-line error unless ``--allow-partial`` asks for the partial result (printed
with the unknown-shape ops listed under ``unsupported``, as always). "Most": more unknown-shape ops than
costed ops, and than ops with no formula (those are reported by name and explain unknown shapes after them)."""
from __future__ import annotations

from .types import PredictorError

UNKNOWN_SHAPE_SUFFIX = " (unknown shape)"


def unknown_shape_ops(pred) -> int:
    return int(sum(v for k, v in pred.unsupported.items() if k.endswith(UNKNOWN_SHAPE_SUFFIX)))


def costed_ops(pred) -> int:
    return sum(1 for o in pred.ops if o.cost.kernels > 0)


def require_coverage(pred, allow_partial: bool) -> None:
    """A PredictorError when more ops have unknown shapes than have a cost, and than ops without a formula
    (those are reported by name and explain the unknown shapes after them), unless ``allow_partial``."""
    unknown = unknown_shape_ops(pred)
    if allow_partial or unknown == 0:  # (no pass over the ops)
        return
    costed = costed_ops(pred)
    no_formula = int(sum(pred.unsupported.values())) - unknown
    if unknown <= costed or unknown <= no_formula:
        return
    kinds = sorted(((v, k[:-len(UNKNOWN_SHAPE_SUFFIX)]) for k, v in pred.unsupported.items()
                    if k.endswith(UNKNOWN_SHAPE_SUFFIX)), reverse=True)
    listing = ", ".join(f"{k} x{v}" for v, k in kinds[:5]) + (", ..." if len(kinds) > 5 else "")
    raise PredictorError(f"{unknown} ops have unknown shapes and only {costed} could be costed ({listing}): the "
                         "prediction would leave most of the work out; check the input shapes (--shape, --batch) or "
                         "pass --allow-partial for the partial result")
