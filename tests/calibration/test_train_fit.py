"""calibration/fit/train_fit.py: the depthwise_grad class comes back from the committed training steps."""
import pytest

from calibration.fit.train_fit import depthwise_grad_samples, fit_depthwise_grad
from predictor.fitted import bundled_calibration
from predictor.machine.profile import load_profile


def test_depthwise_grad_is_reproducible_from_the_training_steps():
    """Fitted on mobilenet_v3_large's graph backward phases only (the one training-split network with depthwise
    convolutions), one parameter set for every precision, far below the forward's depthwise efficiency."""
    cal = bundled_calibration(load_profile("h200"))
    doc = {k: v for k, v in cal.doc.items()}
    samples = depthwise_grad_samples(doc)
    assert {s["case"].split()[0] for s in samples} == {"mobilenet_v3_large"} and len(samples) == 4
    fitted = fit_depthwise_grad(doc, log=lambda *_: None)
    assert set(fitted) == {"fp32", "tf32", "*"}
    for p, v in fitted.items():
        for k in ("t0_s", "eff_compute", "eff_memory"):
            assert v[k] == pytest.approx(getattr(cal.params("depthwise_grad", p), k), rel=1e-6)
    assert fitted["*"]["eff_compute"] < cal.params("depthwise", "fp32").eff_compute
