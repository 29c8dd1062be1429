"""Fused attention backward: 2.5x the forward's matrix FLOPs, the saved tensors, every BERT layer."""
from predictor.train.rules.attention import MATMUL_FACTOR
from predictor.types import Node, OpWork, TensorInfo, WorkKind, frozen_map
from predictor.train.rules.attention import attention
from tests.train.util import context

MM, VEC = WorkKind.MATMUL, WorkKind.VECTOR


def _sdpa(dtype="float32"):
    b, h, s, d = 2, 4, 16, 8
    q = TensorInfo("q", dtype, (b, h, s, d))
    k = TensorInfo("kt", dtype, (b, h, d, s))
    v = TensorInfo("v", dtype, (b, h, s, d))
    o = TensorInfo("o", dtype, (b, h, s, d))
    scores = b * h * s * s
    work = OpWork(flops=frozen_map({MM: 2.0 * scores * 2 * d, VEC: 10.0 * scores}), bytes_read=0.0,
                  bytes_written=0.0, kernels=1)
    return Node("attn", "MatMul", "", (q, k, v), (o,)), work, TensorInfo("grad::o", dtype, o.shape)


def test_flash_backward_flops_and_kernels():
    node, work, go = _sdpa()
    ctx = context(node, work, (True, True, True), (go,))
    ks = attention(ctx)
    assert [k.kind for k in ks] == ["bwd_pre", "bwd"]  # fp32: memory-efficient attention, no dq conversion
    main = ks[1]
    # scores 2*4*16*16 = 2048; forward 2 * 2048 * (8 + 8) = 65536 matrix FLOPs
    assert main.work.flops[MM] == MATMUL_FACTOR * work.flops[MM] == 2.5 * 65536
    assert main.work.flops[VEC] == 2 * work.flops[VEC]
    assert [t.name for t in main.writes] == ["grad::q", "grad::kt", "grad::v"]
    assert [t.name for t in ctx.saved] == ["q", "kt", "v", "o"]
    assert ctx.internals[0].shape == (2, 4, 16) and ctx.internals[0].dtype == "float32"  # log-sum-exp


def test_backward_main_kernel_is_timed_as_the_attention_class():
    """The main kernel is op type Attention (class ``attention``, as the forward kernel), with the forward's tiles and
    causal flag; the D = rowsum(dO * O) pass is a reduction."""
    from dataclasses import replace

    from predictor.graph.opclass import kernel_class

    node, work, go = _sdpa()
    work = replace(work, attention_tiles=(8, 16, 8, 16), attention_causal=True)
    pre, main = attention(context(node, work, (True, True, True), (go,)))
    assert main.op_type == "Attention" and kernel_class(main.node()) == "attention"
    assert main.work.attention_tiles == (8, 16, 8, 16) and main.work.attention_causal
    assert pre.op_type == "ReduceSum" and kernel_class(pre.node()) == "reduce"


def test_16_bit_backward_converts_the_fp32_dq_accumulator():
    node, work, go = _sdpa("float16")
    ks = attention(context(node, work, (True, True, True), (go,), precision="fp16"))
    assert [k.kind for k in ks] == ["bwd_pre", "bwd", "bwd_dq"]
    assert [t.name for t in ks[2].writes] == ["grad::q"]


def test_every_bert_layer_gets_an_attention_backward_and_every_parameter_a_gradient():
    from predictor.graph.loader import load
    from tests.train.util import plan

    p = plan(load("calibration/data/networks/onnx/bert_base.torchscript.onnx", batch=2), gpu="h200")
    att = [k for k in p.backward if k.kind == "bwd" and k.op_type == "Attention"]
    assert len(att) == 12
    written = {t.name for k in p.backward for t in k.writes}
    assert len(p.autograd.params) == 197 and all(f"grad::{n}" in written for n in p.autograd.params)
    assert sum(t.numel for t in p.autograd.params.values()) == 108891648  # torch's n_params (training.json)


def test_attention_dropout_of_a_training_export_runs_inside_the_fused_kernel():
    """Softmax -> Dropout -> MatMul: no dropout kernel forward or backward; the fused attention's backward runs."""
    import numpy as np
    from onnx import helper

    from tests.train.util import graph_of, kernels_of, plan

    nodes = [helper.make_node("MatMul", ["x", "wq"], ["q"], name="proj"),  # a weight upstream: gradients flow
             helper.make_node("Mul", ["q", "s"], ["qs"], name="mq"),
             helper.make_node("Mul", ["kt", "s"], ["ks"], name="mk"),
             helper.make_node("MatMul", ["qs", "ks"], ["scores"], name="mm1"),
             helper.make_node("Softmax", ["scores"], ["p"], axis=-1, name="sm"),
             helper.make_node("Dropout", ["p", "ratio", "train"], ["pd"], name="drop"),
             helper.make_node("MatMul", ["pd", "v"], ["o"], name="mm2")]
    inputs = [("x", "float32", [2, 4, 16, 8]), ("kt", "float32", [2, 4, 8, 16]), ("v", "float32", [2, 4, 16, 8])]
    inits = {"wq": np.ones((8, 8), np.float32), "s": np.array(0.5, np.float32), "ratio": np.array(0.1, np.float32),
             "train": np.array(True)}
    p = plan(graph_of(nodes, inputs, [("o", "float32", None)], inits))
    assert next(w for n, w, _ in p.forward if n.name == "drop").kernels == 0
    assert not kernels_of(p, "drop") and "bwd" in kernels_of(p, "mm2")
