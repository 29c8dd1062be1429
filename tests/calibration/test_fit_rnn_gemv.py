"""The L2 efficiency of batch-1 recurrent layers (class ``rnn_gemv``), from the training LSTM's GEMV kernels."""
import pytest
from onnx import helper

from calibration.fit.dataset import load_cases, load_kernels
from calibration.fit.fit import rnn_gemv_l2_efficiency, training_cases
from predictor.fitted import bundled_calibration
from predictor.graph.opclass import hidden_key, kernel_class
from predictor.machine.profile import load_profile
from tests.helpers import load_nodes, make_model


def test_gemv_efficiency_from_the_training_lstm_is_the_bundled_one():
    """fp32/tf32 only (16-bit steps are GEMM kernels); R of width 512 (4.19 MB, x 1.47 L2 requests) in ~3.1 us."""
    profile = load_profile("h200")
    eff = rnn_gemv_l2_efficiency(training_cases(load_cases()), load_kernels(), profile)
    assert set(eff) == {("rnn_gemv", "fp32"), ("rnn_gemv", "tf32")}
    cal = bundled_calibration(profile)
    for (cls, prec), e in eff.items():
        assert 0.15 < e < 0.35
        assert cal.params(cls, prec).eff_l2 == pytest.approx(e, rel=1e-12)
    assert cal.params("rnn_gemv", "fp16").eff_l2 == 1.0 and cal.params("rnn", "fp32").eff_l2 == 1.0


@pytest.mark.parametrize("shape,layout,key,cls", [
    ([6, 1, 4], 0, "LSTM:gemv", "rnn_gemv"),   # [S, B, I], B = 1
    ([6, 2, 4], 0, "LSTM", "rnn"),
    ([1, 6, 4], 1, "LSTM:gemv", "rnn_gemv"),   # [B, S, I]
    ([2, 6, 4], 1, "LSTM", "rnn"),
])
def test_batch_one_recurrent_layer_is_rnn_gemv(shape, layout, key, cls):
    model = make_model([helper.make_node("LSTM", ["x", "w", "r"], ["y"], hidden_size=8, layout=layout, name="l")],
                       [("x", "float32", shape), ("w", "float32", [1, 32, 4]), ("r", "float32", [1, 32, 8])],
                       [("y", "float32", None)])
    (node,) = load_nodes(model).nodes
    assert (hidden_key(node), kernel_class(node)) == (key, cls)
