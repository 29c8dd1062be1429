"""attention: matmul-softmax-matmul -> one flash-attention kernel, or SDPA's math path for key-broadcast masks."""
import numpy as np
from onnx import helper

from predictor.graph.fused import BACKEND, FUSED_ATTENTION, FUSED_MATMUL, STAGE
from predictor.optimize import apply_passes
from predictor.types import WorkKind
from tests.optimize import costs, flops, fused, kernels, load

F = "float32"
QKV = [("q", F, [1, 2, 4, 8]), ("kt", F, [1, 2, 8, 4]), ("v", F, [1, 2, 4, 8])]
MM = 2 * (2 * 2 * 4 * 4 * 8)  # QK^T + PV = 4 * B * H * S * S * D = 1024


def _explicit(mask=None):
    """scores = q @ k^T / c [+ mask] -> softmax -> @ v: what attention code writes by hand (eager: 4-5 kernels)."""
    nodes = [helper.make_node("MatMul", ["q", "kt"], ["s"], name="mm1"),
             helper.make_node("Div", ["s", "c"], ["sd"], name="div")]
    last = "sd"
    if mask is not None:
        nodes.append(helper.make_node("Add", ["sd", "mask"], ["sm_in"], name="add"))
        last = "sm_in"
    nodes += [helper.make_node("Softmax", [last], ["p"], axis=-1, name="sm"),
              helper.make_node("MatMul", ["p", "v"], ["o"], name="mm2")]
    inits = {"c": np.array(2.0, np.float32)}
    inputs = QKV + [("c", F, [])]
    if mask is not None:
        inits["mask"] = mask
        inputs.append(("mask", F, list(mask.shape)))
    return load(nodes, inputs, [("o", F, None)], inits)


def test_explicit_attention_becomes_one_kernel():
    g = _explicit()
    before = costs(g)
    assert kernels(before) == 4
    after_g = apply_passes(g, "attention")
    (node,) = fused(after_g)
    assert node.op_type == FUSED_ATTENTION and node.attrs[BACKEND] == "flash" and node.name == "mm2"
    c = costs(after_g)["mm2"]
    assert c.kernels == 1
    # q, k, v read once (3 x 64 elements x 2 B) + the scalar (2 B); the output written once (128 B)
    assert c.work.bytes_read == 386 and c.work.bytes_written == 128
    # FLOPs: 4*B*H*S*S*D = 1024 MATMUL, scale 32 + softmax 8 * 32 VECTOR: kept exactly
    assert c.work.flops[WorkKind.MATMUL] == MM and c.work.flops[WorkKind.VECTOR] == 32 + 256
    assert flops(before) == flops(costs(after_g))


def test_additive_bias_is_read_by_the_kernel():
    bias = np.zeros((1, 2, 4, 4), np.float32)  # e.g. Swin's relative-position bias
    g = _explicit(bias)
    after = costs(apply_passes(g, "attention"))
    assert kernels(after) == 1
    assert after["mm2"].work.bytes_read == 386 + 32 * 2


def _sdpa_form(key_broadcast: bool):
    """The TorchScript exporter's SDPA (q and k both scaled) with a boolean mask made additive by Where."""
    src = [1, 1, 4, 1] if key_broadcast else [1, 1, 4, 4]
    nodes = [helper.make_node("Expand", ["mraw", "mshape"], ["mask"], name="expand"),
             helper.make_node("Mul", ["q", "s"], ["qs"], name="mq"),
             helper.make_node("Mul", ["kt", "s"], ["ks"], name="mk"),
             helper.make_node("MatMul", ["qs", "ks"], ["sc"], name="mm1"),
             helper.make_node("Where", ["mask", "zero", "ninf"], ["madd"], name="where"),
             helper.make_node("Add", ["sc", "madd"], ["sa"], name="add"),
             helper.make_node("Softmax", ["sa"], ["p"], axis=-1, name="sm"),
             helper.make_node("MatMul", ["p", "v"], ["o"], name="mm2")]
    inits = {"s": np.array(0.5, np.float32), "zero": np.array(0, np.float32), "ninf": np.array(-1e4, np.float32),
             "mshape": np.array([1, 1, 4, 4], np.int64)}
    inputs = QKV + [("mraw", "bool", src), ("s", F, []), ("zero", F, []), ("ninf", F, []), ("mshape", "int64", [4])]
    return load(nodes, inputs, [("o", F, None)], inits)


def test_exporter_sdpa_is_left_to_the_runtime_fold():
    g = _sdpa_form(key_broadcast=False)
    assert apply_passes(g, "attention") is g
    c = costs(g)  # graph/runtime.py folds it into one attention kernel (the Expand is an identity here)
    assert kernels(c) == 1 and c["mm2"].kernels == 1


def test_key_broadcast_mask_takes_the_math_path():
    g = _sdpa_form(key_broadcast=True)
    after_g = apply_passes(g, "attention")
    stages = fused(after_g)
    assert [n.attrs[STAGE] for n in stages] == ["q", "k", "qk", "softmax", "v", "pv", "out"]
    assert all(n.attrs[BACKEND] == "math" for n in stages)
    c16 = costs(after_g, "fp16")
    # fp16: q and k scaled + cast, QK^T, masked softmax, cast of v, PV, cast back; plus the mask's Expand
    assert kernels(c16) == 8
    qk = c16["mm2::qk"]
    # fp32 operands and scores (4 B per element): reads 2 x 64 x 4, writes 32 x 4; on CUDA cores
    assert qk.work.bytes_read == 512 and qk.work.bytes_written == 128
    assert qk.work.flops == {WorkKind.VECTOR: MM / 2}
    assert flops(c16) == flops(costs(g, "fp16"))
    c32 = costs(after_g, "fp32")
    assert kernels(c32) == 6  # no casts at fp32: q, k scaling, QK^T, softmax, PV, + Expand
    assert costs(after_g, "fp32")["mm2::qk"].work.flops == {WorkKind.MATMUL: MM / 2}
    ops = {n.name: n.op_type for n in stages}
    assert ops["mm2::qk"] == ops["mm2::pv"] == FUSED_MATMUL


def test_pattern_with_a_reader_outside_stays():
    nodes = [helper.make_node("MatMul", ["q", "kt"], ["s"], name="mm1"),
             helper.make_node("Softmax", ["s"], ["p"], axis=-1, name="sm"),
             helper.make_node("MatMul", ["p", "v"], ["o"], name="mm2"),
             helper.make_node("Relu", ["p"], ["r"], name="probe")]  # the probabilities are an output too
    g = load(nodes, QKV, [("o", F, None), ("r", F, None)])
    assert apply_passes(g, "attention") is g
