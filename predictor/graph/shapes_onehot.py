"""Folding of OneHot on small tensors: PyTorch exports ``repeat_interleave`` / ``Tensor.repeat`` with a
computed count as ``OneHot(indices=[axis], depth=rank, values=[1, count])`` -> Reshape -> Tile, so the
Tile's repeats (and every shape after it) are known only when OneHot's value is.

Registered into graph/shapes.py's folding table when the loader imports this module.
"""
from __future__ import annotations

from . import shapes as _s


@_s._register(_s._FOLD, "OneHot")
def _f_one_hot(n, vals, ins):
    """ONNX OneHot: ``values`` = [off, on]; an index in [-depth, depth) (negative counts from the end) sets
    ``on`` at that position along ``axis`` (inserted into the indices' shape); any other index gives a row
    of ``off``."""
    if not _s._all(vals, 3):
        return None
    ind, depth_v, values = vals[0], vals[1], vals[2]
    if depth_v.size != 1 or values.size != 2:
        return None
    depth = int(depth_v.scalar())
    if depth < 0:
        return None
    rank = ind.ndim + 1
    ax = _s._attr(n, "axis", -1)
    if not -rank <= ax < rank:
        return None
    ax %= rank
    shape = ind.shape[:ax] + (depth,) + ind.shape[ax:]
    if not _s._small(shape):
        return None
    off, on = values.data
    outer = _s.numel_of(ind.shape[:ax])
    inner = _s.numel_of(ind.shape[ax:])
    idx = [int(i) + depth if i < 0 else int(i) for i in ind.data]
    data = [off] * (outer * depth * inner)
    for o in range(outer):
        for j in range(inner):
            i = idx[o * inner + j]
            if 0 <= i < depth:
                data[(o * depth + i) * inner + j] = on
    return [_s.Val(shape, data, values.dtype)]
