"""quant.py and ops/quant.py: QDQ int8 graphs, integer ops at int8, MatMulNBits' packed weights."""
import numpy as np
from onnx import TensorProto, helper, numpy_helper

from predictor.graph.loader import load_model_proto
from predictor.machine.profile import load_profile
from predictor.predict import predict_graph
from predictor.types import Precision, Unit, WorkKind
from tests.helpers import make_model, one_node

MM, VEC = WorkKind.MATMUL, WorkKind.VECTOR


def _qdq_matmul():
    # x [8, 16] fp32 -> Q -> DQ -> MatMul with DQ(w int8 [16, 32]) -> Q -> DQ -> y, as onnxruntime writes it
    inits = [numpy_helper.from_array(np.zeros((16, 32), np.int8), "w_q"),
             numpy_helper.from_array(np.array(0.1, np.float32), "s"),
             numpy_helper.from_array(np.array(0, np.int8), "zp")]
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "zp"], ["x_q"], name="qx"),
             helper.make_node("DequantizeLinear", ["x_q", "s", "zp"], ["x_dq"], name="dqx"),
             helper.make_node("DequantizeLinear", ["w_q", "s", "zp"], ["w_dq"], name="dqw"),
             helper.make_node("MatMul", ["x_dq", "w_dq"], ["y0"], name="mm"),
             helper.make_node("QuantizeLinear", ["y0", "s", "zp"], ["y_q"], name="qy"),
             helper.make_node("DequantizeLinear", ["y_q", "s", "zp"], ["y"], name="dqy")]
    graph = helper.make_graph(nodes, "qdq", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [8, 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], initializer=inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_qdq_matmul_runs_at_int8_with_fused_qdq():
    pred = predict_graph(load_model_proto(_qdq_matmul()), load_profile("h200"), "fp16")
    by = {o.cost.name: o for o in pred.ops}
    mm = by["mm"].cost
    assert {(f.precision, f.unit) for f in mm.flops} == {(Precision.INT8, Unit.TENSOR)}
    assert mm.total_flops == 2 * 8 * 16 * 32                    # 8192
    assert mm.work.bytes_read == 8 * 16 + 16 * 32               # int8 x and int8 w: 128 + 512
    assert mm.work.bytes_written == 8 * 32                      # int8 y (the fused QuantizeLinear)
    assert "dqx" not in by and "qy" not in by and "dqw" not in by
    assert "qx" in by and "dqy" in by                           # the graph's own entry and exit stay
    assert any("QDQ: 1 Conv/MatMul/Gemm run as int8 kernels, 3" in n for n in pred.notes)


def test_integer_ops_run_at_int8_whatever_the_precision():
    pred = predict_graph(load_model_proto(make_model(
        [helper.make_node("MatMulInteger", ["a", "b"], ["y"], name="mi")],
        [("a", "uint8", [4, 8]), ("b", "uint8", [8, 2])], [("y", "int32", None)],
        initializers={"b": np.zeros((8, 2), np.uint8)})), load_profile("h200"), "fp32")
    (op,) = pred.ops
    assert {(f.precision, f.unit) for f in op.cost.flops} == {(Precision.INT8, Unit.TENSOR)}
    assert op.cost.total_flops == 2 * 4 * 2 * 8


def test_plain_graph_is_untouched():
    m = make_model([helper.make_node("MatMul", ["a", "b"], ["y"], name="m")],
                   [("a", "float32", [4, 8]), ("b", "float32", [8, 2])], [("y", "float32", None)])
    pred = predict_graph(load_model_proto(m), load_profile("h200"), "fp16")
    assert {(f.precision, f.unit) for f in pred.ops[0].cost.flops} == {(Precision.FP16, Unit.TENSOR)}
    assert pred.notes == ()


def test_matmul_nbits_decode_reads_packed_weights():
    # A [1, 64] fp16, N 32, 4 bits, block 32: B [32, 2, 16] uint8 = 1024 B (32 x 64 / 2), scales [64] fp16
    ins = [("a", "float16", (1, 64)), ("b", "uint8", (32, 2, 16)), ("s", "float16", (64,))]
    c = one_node("MatMulNBits", ins, [("y", "float16", None)], attrs={"K": 64, "N": 32, "bits": 4, "block_size": 32},
                 domain="com.microsoft", precision="fp16")
    assert c.work.flops == {MM: 2 * 64 * 32, VEC: 2 * 32 * 64}  # 4096 each
    assert c.work.kernels == 1
    assert c.work.bytes_read == 128 + 1024 + 128                  # A + packed B + scales


def test_matmul_nbits_prefill_dequantises_first():
    ins = [("a", "float16", (16, 64)), ("b", "uint8", (32, 2, 16)), ("s", "float16", (64,))]
    c = one_node("MatMulNBits", ins, [("y", "float16", None)], attrs={"K": 64, "N": 32, "bits": 4, "block_size": 32},
                 domain="com.microsoft", precision="fp16")
    assert c.work.kernels == 2 and c.work.gemm == (1, 16, 32, 64)
    wide = 32 * 64 * 2                                            # dequantised B at fp16 = 4096 B
    assert c.work.bytes_written == wide + 16 * 32 * 2
