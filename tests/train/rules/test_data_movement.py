"""Embedding (Gather) backward, integer inputs without gradients, views and transposes."""
import numpy as np
from onnx import helper

from tests.train.util import graph_of, kernels_of, plan, rng_w


def embedding(tokens):
    nodes = [helper.make_node("Gather", ["emb", "ids"], ["e"], name="embed"),
             helper.make_node("Transpose", ["e"], ["t"], perm=[0, 2, 1], name="tr"),
             helper.make_node("Reshape", ["t", "shape"], ["y"], name="view")]
    inits = {"emb": rng_w(100, 16), "shape": np.array([-1, 16], np.int64)}
    return graph_of(nodes, [("ids", "int64", list(tokens))], [("y", "float32", None)], inits)


def test_embedding_zero_fill_and_scatter_add():
    p = plan(embedding((2, 8)))
    k = kernels_of(p, "embed")
    assert list(k) == ["zero", "scatter_add"]
    assert k["zero"].work.bytes_written == 100 * 16 * 4  # the whole table's gradient
    # scatter-add reads dY (16 rows) and the indices, and read-modify-writes the 16 touched rows
    assert k["scatter_add"].work.bytes_read == 16 * 16 * 4 + 16 * 8 + 16 * 16 * 4
    assert "ids" not in p.autograd.requires_grad  # token ids need no gradient
    assert list(p.autograd.params) == ["emb"]


def test_many_indices_take_the_sort_path():
    k = kernels_of(plan(embedding((4, 1024))), "embed")
    assert list(k) == ["zero", "sort", "scatter_add"] and k["sort"].work.kernels == 6


def test_transpose_copies_and_reshape_is_free():
    p = plan(embedding((2, 8)))
    assert list(kernels_of(p, "tr")) == ["bwd"]
    assert not kernels_of(p, "view") and p.grad_alias["grad::t"] == "grad::y"
