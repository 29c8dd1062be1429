"""Pooling backward: max-pool indices, global average pooling."""
from onnx import helper

from tests.train.util import graph_of, kernels_of, plan, rng_w


def test_max_pool_reads_its_indices_and_global_average_pool():
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv"),
             helper.make_node("MaxPool", ["c"], ["m"], kernel_shape=[2, 2], strides=[2, 2], name="pool"),
             helper.make_node("GlobalAveragePool", ["m"], ["y"], name="gap")]
    g = graph_of(nodes, [("x", "float32", [2, 3, 8, 8])], [("y", "float32", None)], {"w": rng_w(4, 3, 1, 1)})
    p = plan(g)
    mp = kernels_of(p, "pool")["bwd"]
    idx = p.internals["pool"][0]
    assert idx.dtype == "int64" and idx.shape == (2, 4, 4, 4)
    assert [t.name for t in mp.reads] == ["grad::m", "pool::indices"]
    assert mp.work.bytes_read == 128 * 4 + 128 * 8 and mp.work.bytes_written == 512 * 4
    gap = kernels_of(p, "gap")["bwd"]
    assert gap.work.bytes_read == 8 * 4 and gap.work.bytes_written == 128 * 4
