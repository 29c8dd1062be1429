"""Runtime patterns: exporter decompositions folded back into the kernels PyTorch eager launches."""
import numpy as np
import pytest
from onnx import helper

from predictor.graph.cost import cost_graph
from predictor.graph.loader import load_model_proto
from predictor.graph.runtime import GROUP_NORM, SAFE_SOFTMAX, WELFORD
from predictor.precision import policy
from tests.helpers import make_model


def _cost(nodes, inputs, outputs, inits, patterns=True):
    g = load_model_proto(make_model(nodes, inputs, outputs, inits), batch=None)
    gc = cost_graph(g.nodes, policy("fp16"), 17, graph_inputs=frozenset(t.name for t in g.inputs),
                    runtime_patterns=patterns)
    return {c.name: c for c in gc.costs}


def _sdpa_graph():
    # q, k^T, v: (1, 2, 4, 8) / (1, 2, 8, 4); both scaled by sqrt(scale) as the TorchScript exporter writes SDPA
    nodes = [
        helper.make_node("Mul", ["q", "s"], ["qs"], name="mq"),
        helper.make_node("Mul", ["kt", "s"], ["ks"], name="mk"),
        helper.make_node("MatMul", ["qs", "ks"], ["scores"], name="mm1"),
        helper.make_node("Softmax", ["scores"], ["p"], axis=-1, name="sm"),
        helper.make_node("MatMul", ["p", "v"], ["o"], name="mm2"),
    ]
    inputs = [("q", "float32", [1, 2, 4, 8]), ("kt", "float32", [1, 2, 8, 4]), ("v", "float32", [1, 2, 4, 8])]
    return nodes, inputs, [("o", "float32", None)], {"s": np.array(0.5, np.float32)}


def test_sdpa_fused_into_one_kernel():
    costs = _cost(*_sdpa_graph())
    assert sum(c.kernels for c in costs.values()) == 1
    fused = costs["mm2"]
    # q, k, v read once at fp16: 3 * 64 elements * 2 bytes = 384; output 64 * 2 = 128 written
    assert fused.work.bytes_read == 384 and fused.work.bytes_written == 128
    # both matmuls' FLOPs kept: 2 * (2*4*4*8) * 2 = 1024 matmul FLOPs
    assert fused.work.flops[next(k for k in fused.work.flops if k.value == "matmul")] == 1024


def test_explicit_attention_stays_unfused():
    nodes, inputs, outputs, inits = _sdpa_graph()
    nodes[1] = helper.make_node("Identity", ["kt"], ["ks"], name="mk")  # only q scaled: explicit attention
    costs = _cost(nodes, inputs, outputs, inits)
    assert costs["mm1"].kernels == 1 and costs["sm"].kernels == 1 and costs["mm2"].kernels == 1


def test_linear_bias_in_epilogue():
    nodes = [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm"),
             helper.make_node("Add", ["b", "y"], ["z"], name="add")]
    inits = {"w": np.ones((16, 32), np.float32), "b": np.ones((32,), np.float32)}
    costs = _cost(nodes, [("x", "float32", [4, 16]), ("w", "float32", [16, 32]), ("b", "float32", [32])],
                  [("z", "float32", None)], inits)
    assert costs["add"].kernels == 0 and costs["mm"].kernels == 1
    # x 4*16 + w 16*32 + bias 32 elements at 2 bytes = (64 + 512 + 32) * 2 = 1216
    assert costs["mm"].work.bytes_read == 1216


def test_gelu_erf_chain_is_one_kernel():
    nodes = [helper.make_node("Div", ["x", "r2"], ["d"], name="div"),
             helper.make_node("Erf", ["d"], ["e"], name="erf"),
             helper.make_node("Add", ["e", "one"], ["a"], name="add"),
             helper.make_node("Mul", ["x", "a"], ["m"], name="mul"),
             helper.make_node("Mul", ["m", "half"], ["y"], name="mul2")]
    inits = {"r2": np.array(1.4142135, np.float32), "one": np.array(1.0, np.float32),
             "half": np.array(0.5, np.float32)}
    costs = _cost(nodes, [("x", "float32", [8, 64])], [("y", "float32", None)], inits)
    assert sum(c.kernels for c in costs.values()) == 1
    assert costs["mul2"].work.bytes_read == 8 * 64 * 2 and costs["mul2"].work.bytes_written == 8 * 64 * 2


def test_silu_and_patterns_off():
    nodes = [helper.make_node("Sigmoid", ["x"], ["s"], name="sig"), helper.make_node("Mul", ["x", "s"], ["y"], name="mul")]
    inputs, outputs = [("x", "float32", [2, 8])], [("y", "float32", None)]
    assert sum(c.kernels for c in _cost(nodes, inputs, outputs, {}).values()) == 1
    assert sum(c.kernels for c in _cost(nodes, inputs, outputs, {}, patterns=False).values()) == 2


def test_arithmetic_on_constants_launches_nothing():
    nodes = [helper.make_node("Sqrt", ["c"], ["r"], name="sqrt"), helper.make_node("Mul", ["x", "r"], ["y"], name="mul")]
    costs = _cost(nodes, [("x", "float32", [2, 8])], [("y", "float32", None)], {"c": np.array(4.0, np.float32)})
    assert costs["sqrt"].kernels == 0 and costs["mul"].kernels == 1


def _positions_graph(length: int):
    """A rotary-style table built every forward from the input's shape: cos(arange(float(x.shape[1]))) scaling x."""
    n = helper.make_node
    nodes = [n("Shape", ["x"], ["shp"], name="shape"), n("Gather", ["shp", "one"], ["len"], axis=0, name="len"),
             n("Cast", ["len"], ["lenf"], to=1, name="cast"), n("Range", ["zero", "lenf", "step"], ["pos"], name="arange"),
             n("Cos", ["pos"], ["cos"], name="cos"), n("Mul", ["x", "cos"], ["y"], name="mul")]
    inits = {"one": np.array(1, np.int64), "zero": np.array(0.0, np.float32), "step": np.array(1.0, np.float32)}
    return _cost(nodes, [("x", "float32", [2, length])], [("y", "float32", None)], inits)


def test_a_table_built_from_shapes_runs_its_kernels_every_forward():
    # torch.arange(n, device=...) and what follows it are device kernels in eager (the H200/H100 kernel tables of
    # MViTv2, DiT and the serving benchmark's LLaMA show aten::arange, cos, sin per forward): 16 positions
    costs = _positions_graph(16)
    assert [costs[k].kernels for k in ("arange", "cos", "mul")] == [1, 1, 1]
    # shape arithmetic: Python numbers
    assert costs["shape"].kernels == 0 and costs["len"].kernels == 0 and costs["cast"].kernels == 0


def test_a_value_of_a_shape_vector_size_from_shapes_is_a_python_value():
    costs = _positions_graph(8)  # 8 elements or fewer: scalars and shape vectors stay on the host
    assert [costs[k].kernels for k in ("arange", "cast", "cos", "mul")] == [0, 0, 0, 1]


def test_stacked_rnn_layers_overlap():
    """The second of two stacked LSTM layers (fed through Squeeze, as exporters write it) overlaps the first."""
    h = 4
    nodes = [
        helper.make_node("LSTM", ["x", "w1", "r1"], ["y1"], hidden_size=h, name="l1"),
        helper.make_node("Squeeze", ["y1", "ax"], ["y1s"], name="sq"),
        helper.make_node("LSTM", ["y1s", "w2", "r2"], ["y2"], hidden_size=h, name="l2"),
    ]
    inits = {"w1": np.zeros((1, 4 * h, 3), np.float32), "r1": np.zeros((1, 4 * h, h), np.float32),
             "w2": np.zeros((1, 4 * h, h), np.float32), "r2": np.zeros((1, 4 * h, h), np.float32),
             "ax": np.array([1], np.int64)}
    inputs = [("x", "float32", [5, 1, 3])] + [(k, "float32", list(v.shape)) for k, v in inits.items() if k != "ax"]
    costs = _cost(nodes, inputs, [("y2", "float32", None)], inits)
    assert not costs["l1"].work.overlaps_producer and costs["l2"].work.overlaps_producer
    assert costs["l2"].kernels == 1 + 2 * 5
    assert not _cost(nodes, inputs, [("y2", "float32", None)], inits, patterns=False)["l2"].work.overlaps_producer


def test_fused_attention_takes_the_attention_class():
    """The runtime's fused SDPA kernel is costed as attention (class and hidden kernels), not as its last MatMul."""
    from predictor.graph.fused import runtime_op
    from predictor.graph.opclass import kernel_class

    nodes, inputs, outputs, inits = _sdpa_graph()
    g = load_model_proto(make_model(nodes, inputs, outputs, inits), batch=None)
    gc = cost_graph(g.nodes, policy("fp16"), 17, graph_inputs=frozenset(t.name for t in g.inputs))
    by = {n.name: n for n in g.nodes}
    fused = next(c for c in gc.costs if c.name == "mm2")
    assert fused.work.runtime_kernel == "Attention" and runtime_op(by["mm2"], fused.work) == "Attention"
    assert kernel_class(by["mm2"], "Attention") == "attention"
    plain = cost_graph(g.nodes, policy("fp16"), 17, graph_inputs=frozenset(t.name for t in g.inputs),
                       runtime_patterns=False)
    mm2 = next(c for c in plain.costs if c.name == "mm2")
    assert mm2.work.runtime_kernel == "" and runtime_op(by["mm2"], mm2.work) == "MatMul"


def test_sdpa_takes_the_attention_dropout_of_a_training_export():
    """Softmax -> Dropout -> MatMul (a train-mode export) is still one fused attention kernel."""
    nodes, inputs, outputs, inits = _sdpa_graph()
    nodes = nodes[:4] + [helper.make_node("Dropout", ["p", "ratio", "train"], ["pd", "mask"], name="drop"),
                         helper.make_node("MatMul", ["pd", "v"], ["o"], name="mm2")]
    inits = {**inits, "ratio": np.array(0.1, np.float32), "train": np.array(True)}
    costs = _cost(nodes, inputs, outputs, inits)
    assert sum(c.kernels for c in costs.values()) == 1 and costs["mm2"].work.runtime_kernel == "Attention"
    assert costs["drop"].kernels == 0


def _masked_sdpa(mask_nodes, mask_inputs=(), mask_inits=None):
    """The SDPA graph with an additive mask ``m`` (built by ``mask_nodes``) between the scores and the softmax."""
    nodes, inputs, outputs, inits = _sdpa_graph()
    nodes = nodes[:3] + mask_nodes + [helper.make_node("Add", ["scores", "m"], ["sm_in"], name="add_mask"),
                                      helper.make_node("Softmax", ["sm_in"], ["p"], axis=-1, name="sm"), nodes[4]]
    return nodes, inputs + list(mask_inputs), outputs, {**inits, **(mask_inits or {})}


def test_sdpa_with_trilu_mask_is_causal():
    """torch's is_causal exported: the mask is Trilu(ConstantOfShape(...)) above the diagonal."""
    nodes = [helper.make_node("Trilu", ["neg", "one"], ["m"], upper=1, name="tri")]
    inits = {"neg": np.full((4, 4), -1e4, np.float32), "one": np.array(1, np.int64)}
    costs = _cost(*_masked_sdpa(nodes, mask_inits=inits))
    assert costs["mm2"].work.runtime_kernel == "Attention" and costs["mm2"].work.attention_causal
    assert costs["mm2"].work.attention_tiles == (2, 4, 8, 4)


def test_sdpa_with_position_comparison_mask_is_causal():
    """The transformers library's mask: Where(k_pos <= q_pos, 0, -inf) over two Ranges."""
    nodes = [helper.make_node("Range", ["zero", "four", "step"], ["pos"], name="rng"),
             helper.make_node("Unsqueeze", ["pos", "ax0"], ["kpos"], name="uk"),
             helper.make_node("Unsqueeze", ["pos", "ax1"], ["qpos"], name="uq"),
             helper.make_node("LessOrEqual", ["kpos", "qpos"], ["keep"], name="le"),
             helper.make_node("Where", ["keep", "zero_f", "neg_f"], ["m"], name="wh")]
    inits = {"zero": np.array(0, np.int64), "four": np.array(4, np.int64), "step": np.array(1, np.int64),
             "ax0": np.array([0], np.int64), "ax1": np.array([1], np.int64),
             "zero_f": np.array(0.0, np.float32), "neg_f": np.array(-1e4, np.float32)}
    costs = _cost(*_masked_sdpa(nodes, mask_inits=inits))
    assert costs["mm2"].work.runtime_kernel == "Attention" and costs["mm2"].work.attention_causal


def test_sdpa_with_a_padding_mask_is_not_causal():
    costs = _cost(*_masked_sdpa([], mask_inputs=[("m", "float32", [1, 1, 4, 4])]))
    assert costs["mm2"].work.runtime_kernel == "Attention" and not costs["mm2"].work.attention_causal


def _gelu_tanh_nodes(pow_form: bool = False):
    """F.gelu(x, approximate="tanh") as the TorchScript exporter writes it (or, with ``pow_form``, the same formula
    written with torch.pow, as GPT-2's NewGELU does)."""
    cube = [helper.make_node("Pow", ["x", "three"], ["cube"], name="cube")] if pow_form else [
        helper.make_node("Mul", ["x", "x"], ["sq"], name="sq"), helper.make_node("Mul", ["x", "sq"], ["cube"], name="cube")]
    return cube + [
        helper.make_node("Mul", ["kappa", "cube"], ["kc"], name="km"),
        helper.make_node("Add", ["x", "kc"], ["s"], name="add"),
        helper.make_node("Mul", ["beta", "s"], ["inner"], name="inner"),
        helper.make_node("Tanh", ["inner"], ["t"], name="tanh"),
        helper.make_node("Add", ["one", "t"], ["a1"], name="one"),
        helper.make_node("Mul", ["x", "a1"], ["xm"], name="mx"),
        helper.make_node("Mul", ["half", "xm"], ["y"], name="half")]


def test_exporter_gelu_tanh_is_one_kernel():
    inits = {k: np.array(v, np.float32) for k, v in (("kappa", 0.044715), ("beta", 0.7978845608), ("one", 1.0),
                                                     ("half", 0.5), ("three", 3.0))}
    costs = _cost(_gelu_tanh_nodes(), [("x", "float32", [4, 256])], [("y", "float32", None)], inits)
    assert sum(c.kernels for c in costs.values()) == 1 and costs["half"].kernels == 1
    # x read once, y written once at fp16: 1024 elements x 2 bytes each way
    assert costs["half"].work.bytes_read == 2048 and costs["half"].work.bytes_written == 2048
    written_out = _cost(_gelu_tanh_nodes(pow_form=True), [("x", "float32", [4, 256])], [("y", "float32", None)], inits)
    assert sum(c.kernels for c in written_out.values()) == 8


def test_multi_query_expand_is_a_view_of_sdpa():
    """K and V of one head broadcast to two by Unsqueeze -> Expand -> Reshape: SDPA reads the views, no copy."""
    nodes, inputs, outputs, inits = _sdpa_graph()
    kv = [helper.make_node("Unsqueeze", ["k1", "ax"], ["k1u"], name="uk"),
          helper.make_node("Expand", ["k1u", "kshape"], ["kx"], name="ek"),
          helper.make_node("Reshape", ["kx", "kt_shape"], ["kt"], name="rk"),
          helper.make_node("Unsqueeze", ["v1", "ax"], ["v1u"], name="uv"),
          helper.make_node("Expand", ["v1u", "vshape"], ["vx"], name="ev"),
          helper.make_node("Reshape", ["vx", "v_shape"], ["v"], name="rv")]
    inits = {**inits, "ax": np.array([2], np.int64), "kshape": np.array([1, 1, 2, 8, 4], np.int64),
             "kt_shape": np.array([1, 2, 8, 4], np.int64), "vshape": np.array([1, 1, 2, 4, 8], np.int64),
             "v_shape": np.array([1, 2, 4, 8], np.int64)}
    inputs = [inputs[0], ("k1", "float32", [1, 1, 8, 4]), ("v1", "float32", [1, 1, 4, 8])]
    costs = _cost(kv + nodes, inputs, outputs, inits)
    assert costs["mm2"].work.runtime_kernel == "Attention" and sum(c.kernels for c in costs.values()) == 1


def _packed_qkv_graph(extra_consumer: bool = False):
    # a packed projection (3, 1, 4, 2, 8) (3 x batch x seq x heads x head dim) split by constant scalar-index Gathers
    # into q, k, v, each transposed to heads first (k to k^T) before the exporter's SDPA pattern: the shape of
    # nn.MultiheadAttention's export
    nodes = [helper.make_node("Gather", ["qkv", "i0"], ["q0"], axis=0, name="gq"),
             helper.make_node("Gather", ["qkv", "i1"], ["k0"], axis=0, name="gk"),
             helper.make_node("Gather", ["qkv", "i2"], ["v0"], axis=0, name="gv"),
             helper.make_node("Transpose", ["q0"], ["q"], perm=[0, 2, 1, 3], name="tq"),
             helper.make_node("Transpose", ["k0"], ["kt"], perm=[0, 2, 3, 1], name="tk"),
             helper.make_node("Shape", ["kt"], ["kt_shape"], name="shape_k"),
             helper.make_node("Transpose", ["v0"], ["v"], perm=[0, 2, 1, 3], name="tv")]
    sdpa, _, outputs, inits = _sdpa_graph()
    inits = dict(inits, i0=np.array(0, np.int64), i1=np.array(1, np.int64), i2=np.array(2, np.int64))
    outputs = outputs + [("kt_shape", "int64", None)]
    if extra_consumer:  # v's transposed copy also feeds another op: it must be materialised
        nodes.append(helper.make_node("Relu", ["v"], ["rv"], name="relu_v"))
        outputs = outputs + [("rv", "float32", None)]
    return nodes + sdpa, [("qkv", "float32", [3, 1, 4, 2, 8])], outputs, inits


def test_packed_qkv_split_and_head_transposes_are_views_of_sdpa():
    costs = _cost(*_packed_qkv_graph())
    assert sum(c.kernels for c in costs.values()) == 1 and costs["mm2"].kernels == 1
    for name in ("gq", "gk", "gv", "tq", "tk", "tv"):
        assert costs[name].kernels == 0, name


def test_a_view_with_another_consumer_stays_a_copy():
    costs = _cost(*_packed_qkv_graph(extra_consumer=True))
    # v's transpose also feeds a Relu (another consumer than the call): it stays a kernel (the one copy of the chain;
    # the Gather of one index before it is a select, a view either way)
    assert costs["tv"].kernels == 1 and costs["gv"].kernels == 0
    assert costs["tq"].kernels == 0 and costs["gk"].kernels == 0


def packed_split_attention(returned_k: bool = True):
    """GPT-2's ``qkv.split(...)`` of a packed projection ``qkv`` [1, 4, 48] into q, k, v, each reshaped to 2 heads of 8
    and transposed (k once more to k^T), the exporter's SDPA, and the output's head transpose (read by a Shape too)
    and reshape to ``y`` [1, 4, 16]; with ``returned_k`` k is also returned (a prefill's present keys). Returns
    (nodes, initializers, outputs)."""
    nodes = [helper.make_node("Split", ["qkv", "sizes"], ["q0", "k0", "v0"], axis=-1, name="split"),
             helper.make_node("Reshape", ["q0", "heads"], ["q1"], name="rq"),
             helper.make_node("Reshape", ["k0", "heads"], ["k1"], name="rk"),
             helper.make_node("Reshape", ["v0", "heads"], ["v1"], name="rv"),
             helper.make_node("Transpose", ["q1"], ["q"], perm=[0, 2, 1, 3], name="tq"),
             helper.make_node("Transpose", ["k1"], ["kt"], perm=[0, 2, 3, 1], name="tk"),
             helper.make_node("Transpose", ["v1"], ["v"], perm=[0, 2, 1, 3], name="tv")]
    if returned_k:
        nodes.append(helper.make_node("Transpose", ["k1"], ["present_k"], perm=[0, 2, 1, 3], name="tk_out"))
    sdpa, _, _, inits = _sdpa_graph()
    tail = [helper.make_node("Shape", ["o"], ["o_shape"], name="shape_o"),
            helper.make_node("Transpose", ["o"], ["ot"], perm=[0, 2, 1, 3], name="to"),
            helper.make_node("Reshape", ["ot", "flat"], ["y"], name="ro")]
    inits = dict(inits, sizes=np.array([16, 16, 16], np.int64), heads=np.array([1, 4, 2, 8], np.int64),
                 flat=np.array([1, 4, 16], np.int64))
    outputs = [("y", "float32", None), ("o_shape", "int64", None)] + \
        ([("present_k", "float32", None), ("v", "float32", None)] if returned_k else [])
    return nodes + sdpa + tail, inits, outputs


def test_packed_projection_split_and_returned_keys_are_views_of_sdpa():
    """The split, the head transposes, the returned keys and the output transpose are views: one kernel runs."""
    nodes, inits, outputs = packed_split_attention()
    costs = _cost(nodes, [("qkv", "float32", [1, 4, 48])], outputs, inits)
    assert sum(c.kernels for c in costs.values()) == 1 and costs["mm2"].work.runtime_kernel == "Attention"
    for name in ("split", "tq", "tk", "tk_out", "tv", "to"):
        assert costs[name].kernels == 0, name


@pytest.mark.parametrize("kt_shape, v_shape", [
    ([1, 1, 8, 4], [1, 1, 4, 8]),  # one K/V head broadcast over two query heads (not expanded): multi-query
    ([1, 2, 8, 4], [1, 2, 4, 8]),  # q below is 5-D: blocked attention
])
def test_shapes_the_fused_kernels_refuse_run_the_math_path(kt_shape, v_shape):
    nodes, inputs, outputs, inits = _sdpa_graph()
    q_shape = [1, 2, 4, 8] if kt_shape[1] == 1 else [1, 1, 2, 4, 8]
    if len(q_shape) == 5:
        kt_shape, v_shape = [1, 1] + kt_shape[1:], [1, 1] + v_shape[1:]
    inputs = [("q", "float32", q_shape), ("kt", "float32", kt_shape), ("v", "float32", v_shape)]
    costs = _cost(nodes, inputs, outputs, inits)
    # PyTorch's flash and memory-efficient kernels take 4-D q, k, v of equal batch and heads only
    assert costs["mm1"].kernels == 1 and costs["mm2"].kernels == 1
    assert costs["mm2"].work.runtime_kernel == ""
    # the math path's _safe_softmax: softmax, isneginf, all() over each row, where: 4 kernels. Scores: 32 elements
    # in 8 rows of 4 at fp16 (64 bytes): softmax reads 64, writes 64; isneginf reads 64, writes 32 flags; all() reads
    # 32, writes 8; where reads 64 + 8, writes 64
    sm = costs["sm"].work
    assert sm.kernels == 4 and SAFE_SOFTMAX in sm.notes
    assert sm.bytes_read == 64 + 64 + 32 + 64 + 8 and sm.bytes_written == 64 + 32 + 8 + 64


def _windows_graph(second_reader: bool = False):
    # x (1, 8, 6): three windows of 4 steps (step 2) along axis 1, each Slice -> Transpose -> Unsqueeze, then Concat on
    # a new axis 1 -> (1, 3, 6, 4): Tensor.unfold(1, 4, 2).transpose(-1, -2) as the TorchScript exporter writes it
    nodes, cat_in = [], []
    for i in range(3):
        nodes += [helper.make_node("Slice", ["x", f"st{i}", f"en{i}", "ax"], [f"s{i}"], name=f"slice{i}"),
                  helper.make_node("Transpose", [f"s{i}"], [f"t{i}"], perm=[0, 2, 1], name=f"tr{i}"),
                  helper.make_node("Unsqueeze", [f"t{i}", "one"], [f"u{i}"], name=f"unsq{i}")]
        cat_in.append(f"u{i}")
    nodes.append(helper.make_node("Concat", cat_in, ["y"], axis=1, name="cat"))
    outputs = [("y", "float32", None)]
    if second_reader:  # another kernel reads the first window: it is a real copy then
        nodes.append(helper.make_node("Relu", ["s0"], ["r"], name="relu"))
        outputs.append(("r", "float32", None))
    inits = {"ax": np.array([1], np.int64), "one": np.array([1], np.int64)}
    for i in range(3):
        inits[f"st{i}"] = np.array([2 * i], np.int64)
        inits[f"en{i}"] = np.array([2 * i + 4], np.int64)
    return nodes, [("x", "float32", [1, 8, 6])], outputs, inits


def test_unfold_windows_are_views_of_one_cat_kernel():
    costs = _cost(*_windows_graph())
    assert [costs[f"slice{i}"].kernels for i in range(3)] == [0, 0, 0]
    assert [costs[f"tr{i}"].kernels for i in range(3)] == [0, 0, 0]
    cat = costs["cat"]
    # the one copy: 3 windows x 4 x 6 elements at fp16 read and written = 144 bytes each way
    assert cat.kernels == 1 and cat.work.bytes_written == 144
    assert all("unfold window" in " ".join(costs[f"slice{i}"].work.notes) for i in range(3))


def test_a_window_read_elsewhere_keeps_the_slices_as_copies():
    costs = _cost(*_windows_graph(second_reader=True))
    assert costs["slice0"].kernels == 1 and costs["slice1"].kernels == 1


def test_a_cat_of_slices_of_two_tensors_is_not_a_roll():
    nodes = [helper.make_node("Slice", ["x", "a", "b", "ax"], ["p"], name="sa"),
             helper.make_node("Slice", ["z", "a", "b", "ax"], ["q"], name="sb"),
             helper.make_node("Concat", ["p", "q"], ["y"], axis=1, name="cat")]
    inits = {"a": np.array([0], np.int64), "b": np.array([2], np.int64), "ax": np.array([1], np.int64)}
    costs = _cost(nodes, [("x", "float32", [1, 4]), ("z", "float32", [1, 4])], [("y", "float32", None)], inits)
    assert costs["sa"].kernels == 1 and costs["sb"].kernels == 1


def _var_nodes(x="x", extra_reader=False, correction=True, user_scale=False):
    """torch.std(x, -1, keepdim=True) as the TorchScript exporter writes it (opset 17)."""
    n = helper.make_node
    nodes = [n("ReduceMean", [x], ["mu"], name="mean", axes=[-1], keepdims=1),
             n("Sub", [x, "mu"], ["d"], name="sub"),
             n("Mul", ["d", "d"], ["sq"], name="square"),
             n("ReduceMean", ["sq"], ["v"], name="var", axes=[-1], keepdims=1)]
    last = "v"
    if correction:
        nodes += [n("Mul", ["v", "cnt"], ["vn"], name="corr_mul"), n("Div", ["vn", "cnt1"], ["vc"], name="corr_div")]
        last = "vc"
    nodes.append(n("Sqrt", [last], ["s"], name="sqrt"))
    if user_scale:
        nodes.append(n("Mul", ["s", "two"], ["s2"], name="scale"))
    if extra_reader:
        nodes.append(n("Mul", ["d", "s"], ["y"], name="centred_use"))
    inits = {"cnt": np.array(64.0, np.float32), "cnt1": np.array(63.0, np.float32), "two": np.array(2.0, np.float32)}
    return nodes, inits


def test_std_is_one_welford_reduction_reading_x():
    nodes, inits = _var_nodes(user_scale=True)
    costs = _cost(nodes, [("x", "float32", [8, 64])], [("s2", "float32", None)], inits)
    assert [k for k, c in costs.items() if c.kernels] == ["var", "scale"]  # the caller's scale is its own kernel
    var = costs["var"].work
    assert var.bytes_read == 8 * 64 * 2 and var.bytes_written == 8 * 2 and dict(var.input_bytes) == {"x": 8 * 64 * 2}
    assert WELFORD in var.notes and sum(var.flops.values()) == 8 * 64 + 8  # a mean's: a sum per element, a divide per row


def test_a_centred_x_read_elsewhere_stays_a_kernel():
    nodes, inits = _var_nodes(extra_reader=True, correction=False)
    costs = _cost(nodes, [("x", "float32", [8, 64])], [("y", "float32", None)], inits)
    assert [k for k, c in costs.items() if c.kernels] == ["mean", "sub", "var", "centred_use"]


def test_variance_of_constants_is_left_costed():
    # weight standardisation (BiT, NFNet): the exporter's batch_norm over a weight tensor, not torch.var
    nodes, inits = _var_nodes(x="w", correction=False)
    inits["w"] = np.ones((16, 64), np.float32)
    costs = _cost(nodes, [("x", "float32", [2])], [("s", "float32", None)], inits)
    assert all(WELFORD not in c.work.notes for c in costs.values())


def test_a_welford_variance_loops_two_values_per_iteration():
    # EvoNorm's group std at batch 1: 32 groups of 2 x 56 x 56 = 6,272 elements; reduce_kernel gives each group one warp
    # (196 values per lane < 256: no split over warps), two blocks of 16 warps, two values per load: 98 iterations
    n = helper.make_node
    nodes = [n("ReduceMean", ["x"], ["mu"], name="mean", axes=[2, 3, 4], keepdims=1),
             n("Sub", ["x", "mu"], ["d"], name="sub"),
             n("Mul", ["d", "d"], ["sq"], name="square"),
             n("ReduceMean", ["sq"], ["v"], name="var", axes=[2, 3, 4], keepdims=1)]
    costs = _cost(nodes, [("x", "float32", [1, 32, 2, 56, 56])], [("v", "float32", None)], {})
    assert costs["var"].work.thread_loop == (98, 2 * 512, 2048, 32 * 2 * 56 * 56 * 2)  # x's fp16 bytes


def _chunk_graph(reader_h: str, reader_g: str = "Sigmoid"):
    """h, g = x.chunk(2, -1) as two Slices of x [4, 16]; h read by ``reader_h`` (with a [8, 8] weight when a MatMul),
    g by ``reader_g``."""
    n = helper.make_node
    inits = {"s0": np.array([0], np.int64), "s1": np.array([8], np.int64), "s2": np.array([16], np.int64),
             "ax": np.array([-1], np.int64), "w": np.ones((8, 8), np.float32), "sh": np.array([32], np.int64)}
    second = {"MatMul": ["h", "w"], "Reshape": ["h", "sh"], "Mul": ["h", "h"]}[reader_h]
    nodes = [n("Slice", ["x", "s0", "s1", "ax"], ["h"], name="take_h"),
             n("Slice", ["x", "s1", "s2", "ax"], ["g"], name="take_g"),
             n(reader_h, second, ["hy"], name="read_h"),
             n(reader_g, ["g"], ["gy"], name="read_g")]
    return _cost(nodes, [("x", "float32", [4, 16])], [("hy", "float32", None), ("gy", "float32", None)], inits)


def test_slices_read_by_elementwise_kernels_are_views():
    from predictor.graph.runtime import SLICE_VIEW

    costs = _chunk_graph("Mul")
    for name in ("take_h", "take_g"):
        assert costs[name].kernels == 0 and SLICE_VIEW in costs[name].work.notes
    assert costs["read_h"].kernels == 1 and costs["read_h"].work.bytes_read == 4 * 8 * 2 * 2  # h twice, fp16
    assert costs["read_g"].kernels == 1


def test_a_slice_of_a_slice_is_a_view_of_a_view():
    # mask[0:2][:, 0:4] read by a relu: neither slice copies (the relu reads the strided view)
    from predictor.graph.runtime import SLICE_VIEW

    n = helper.make_node
    nodes = [n("Slice", ["x", "s0", "e2", "ax0"], ["rows"], name="rows"),
             n("Slice", ["rows", "s0", "e4", "ax1"], ["block"], name="block"), n("Relu", ["block"], ["y"], name="relu")]
    inits = {"s0": np.array([0], np.int64), "e2": np.array([2], np.int64), "e4": np.array([4], np.int64),
             "ax0": np.array([0], np.int64), "ax1": np.array([1], np.int64)}
    costs = _cost(nodes, [("x", "float32", [4, 8])], [("y", "float32", None)], inits)
    assert costs["rows"].kernels == 0 and costs["block"].kernels == 0 and SLICE_VIEW in costs["rows"].work.notes
    assert costs["relu"].kernels == 1


@pytest.mark.parametrize("reader", ["MatMul", "Reshape"])
def test_a_slice_a_gemm_or_a_reshape_reads_stays_a_copy(reader):
    costs = _chunk_graph(reader)
    assert costs["take_h"].kernels == 1  # read by a GEMM or a reshape: copied
    assert costs["take_g"].kernels == 0  # read by a sigmoid: a view


def test_a_split_read_by_activations_is_a_view_and_one_a_graph_output_is_not():
    n = helper.make_node
    nodes = [n("Split", ["x", "sizes"], ["a", "b"], axis=1, name="split"), n("Sigmoid", ["a"], ["sa"], name="sig"),
             n("Mul", ["b", "sa"], ["y"], name="glu")]
    inits = {"sizes": np.array([8, 8], np.int64)}
    costs = _cost(nodes, [("x", "float32", [4, 16])], [("y", "float32", None)], inits)
    assert costs["split"].kernels == 0
    costs = _cost(nodes, [("x", "float32", [4, 16])], [("y", "float32", None), ("a", "float32", None)], inits)
    assert costs["split"].kernels == 0  # a is also read by the sigmoid: returned as the view it is
    nodes[2] = n("Mul", ["sa", "sa"], ["y"], name="glu")  # b read by nothing (a graph output only): copied
    costs = _cost(nodes, [("x", "float32", [4, 16])], [("y", "float32", None), ("b", "float32", None)], inits)
    assert costs["split"].kernels == 1


def _group_norm_graph(affine: bool = True, direct: bool = False):
    """F.group_norm(x [2, 8, 4, 4], 4 groups, weight, bias) as the TorchScript exporter writes it (``direct``: an
    instance norm of x itself, no reshapes); fp16 costing."""
    n = helper.make_node
    inits = {"g3": np.array([2, 4, -1], np.int64), "ones": np.ones(4, np.float32), "zeros": np.zeros(4, np.float32),
             "back": np.array([2, 8, 4, 4], np.int64), "w": np.ones((8, 1, 1), np.float32),
             "b": np.zeros((8, 1, 1), np.float32), "ones8": np.ones(8, np.float32), "zeros8": np.zeros(8, np.float32)}
    if direct:
        nodes = [n("InstanceNormalization", ["x", "ones8", "zeros8"], ["y"], name="inorm")]
    else:
        nodes = [n("Reshape", ["x", "g3"], ["xg"], name="r1"),
                 n("InstanceNormalization", ["xg", "ones", "zeros"], ["yg"], name="inorm"),
                 n("Reshape", ["yg", "back"], ["y0" if affine else "y"], name="r2")]
        if affine:
            nodes += [n("Mul", ["y0", "w"], ["y1"], name="scale"), n("Add", ["y1", "b"], ["y"], name="shift")]
    return _cost(nodes, [("x", "float32", [2, 8, 4, 4])], [("y", "float32", None)], inits)


def test_exported_group_norm_is_native_group_norm():
    costs = _group_norm_graph()
    assert [k for k, c in costs.items() if c.kernels] == ["inorm"]
    w = costs["inorm"].work
    x_b = 2 * 8 * 4 * 4 * 2  # fp16
    # moments (reads x), fused parameters (reads weight and bias), apply (reads x, writes y)
    assert w.kernels == 3 and GROUP_NORM in w.notes
    assert w.bytes_read == 2 * x_b + 2 * 8 * 2 and w.bytes_written == x_b
    assert dict(w.input_bytes) == {"xg": 2 * x_b, "w": 16, "b": 16}
    # 2 x 4 rows of 2 x 16 = 32 elements: under 512, a warp each (32 blocks of 32 a SM), one iteration
    assert w.thread_loop == (1, 8 * 32, 32 * 32, x_b)
    assert all(costs[k].kernels == 0 for k in ("r1", "r2", "scale", "shift"))


def test_group_norm_without_affine_is_two_kernels():
    w = _group_norm_graph(affine=False)["inorm"].work
    assert w.kernels == 2 and w.bytes_read == 2 * 512 and w.bytes_written == 512


def test_an_instance_norm_of_its_own_stays_costed():
    w = _group_norm_graph(direct=True)["inorm"].work
    assert w.kernels == 4 and GROUP_NORM not in w.notes and w.thread_loop is None


def _rms_nodes(weight: bool = True, extra_reader: bool = False, pow_square: bool = False):
    """aten::rms_norm as calibration/networks/export.py writes it, over x [4, 6, 32]."""
    n = helper.make_node
    square = n("Pow", ["x", "p2"], ["sq"], name="square") if pow_square else n("Mul", ["x", "x"], ["sq"], name="square")
    nodes = [square,
             n("ReduceMean", ["sq"], ["ms"], name="mean", axes=[-1], keepdims=1),
             n("Add", ["ms", "eps"], ["mse"], name="add_eps"),
             n("Sqrt", ["mse"], ["r"], name="sqrt"),
             n("Div", ["x", "r"], ["xn"], name="div")]
    out = "xn"
    if weight:
        nodes.append(n("Mul", ["xn", "w"], ["y"], name="scale"))
        out = "y"
    if extra_reader:
        nodes.append(n("Mul", ["r", "r"], ["r2"], name="rms_use"))
    inits = {"eps": np.array(1e-6, np.float32), "w": np.ones((32,), np.float32), "p2": np.array(2.0, np.float32)}
    outputs = [(out, "float32", None)] + ([("r2", "float32", None)] if extra_reader else [])
    return _cost(nodes, [("x", "float32", [4, 6, 32])], outputs, inits), nodes


def test_rms_norm_is_one_layer_norm_kernel_reading_x_once():
    from predictor.graph.fused import runtime_op
    from predictor.graph.opclass import kernel_class
    from predictor.graph.runtime import RMS_NORM
    costs, nodes = _rms_nodes()
    assert [k for k, c in costs.items() if c.kernels] == ["div"]
    w = costs["div"].work
    # x 4*6*32 = 768 elements and the weight's 32 at fp16 read once; y 768 elements written
    assert w.bytes_read == (768 + 32) * 2 and w.bytes_written == 768 * 2 and dict(w.input_bytes) == {"x": 1536, "w": 64}
    assert w.rows == 24 and sum(w.flops.values()) == 4 * 768 and RMS_NORM in w.notes
    div = load_model_proto(make_model(nodes[4:5], [("x", "float32", [4, 6, 32]), ("r", "float32", [4, 6, 1])],
                                      [("xn", "float32", None)]), batch=None).nodes[0]
    assert w.runtime_kernel == "RMSNormalization" and kernel_class(div, runtime_op(div, w)) == "layernorm"


def test_rms_norm_without_weight_writes_the_div():
    costs, _ = _rms_nodes(weight=False)
    w = costs["div"].work
    assert [k for k, c in costs.items() if c.kernels] == ["div"]
    assert w.bytes_read == 768 * 2 and w.bytes_written == 768 * 2 and sum(w.flops.values()) == 3 * 768


def test_rms_norm_left_costed_when_read_elsewhere_or_hand_written():
    for costs, _ in (_rms_nodes(extra_reader=True), _rms_nodes(pow_square=True)):
        assert all(c.work.runtime_kernel == "" and c.kernels == 1 for c in costs.values())


def test_rms_normalization_op_is_a_layer_norm_kernel_per_row():
    from predictor.graph.opclass import kernel_class
    nodes = [helper.make_node("RMSNormalization", ["x", "w"], ["y"], name="rms", axis=-1)]
    g = load_model_proto(make_model(nodes, [("x", "float32", [4, 6, 32])], [("y", "float32", None)],
                                    {"w": np.ones((32,), np.float32)}, opset=23), batch=None)
    gc = cost_graph(g.nodes, policy("fp16"), 23, graph_inputs=frozenset(t.name for t in g.inputs))
    (c,) = gc.costs
    assert c.work.rows == 24 and sum(c.work.flops.values()) == 4 * 768 and kernel_class(g.nodes[0]) == "layernorm"
