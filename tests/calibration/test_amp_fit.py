"""calibration/fit/amp_fit.py: the autocast-only classes come back from the training networks' autocast kernel tables."""
import pytest

from calibration.fit.amp_fit import fit_elementwise_mixed, fit_norm_amp, norm_amp_samples, scope_samples
from predictor.fitted import bundled_calibration
from predictor.machine.profile import load_profile


@pytest.fixture(scope="module")
def cal():
    return bundled_calibration(load_profile("h200"))


def test_norm_amp_is_reproducible_from_the_autocast_kernel_tables(cal):
    """norm_amp from the batch-norm scopes of resnet18, resnet50 and mobilenet_v3_large under autocast (batch 1 and 32:
    119 scopes each), per precision; at fp16 (cuDNN's plane-walking kernel) each wave of planes costs tens of ns."""
    doc = dict(cal.doc)
    samples = norm_amp_samples(doc)
    assert set(samples) == {"fp16", "bf16"} and all(len(v) == 238 for v in samples.values())
    fitted = fit_norm_amp(doc, log=lambda *_: None)
    assert set(fitted) == {"fp16", "bf16", "*"}
    for p, v in fitted.items():
        for k in ("t0_s", "eff_memory", "row_s", "block_s"):
            assert v[k] == pytest.approx(getattr(cal.params("norm_amp", p), k), rel=1e-3)
    assert 1e-8 < fitted["fp16"]["block_s"] < 1e-6


def test_elementwise_mixed_is_reproducible_from_bert_residual_adds(cal):
    """elementwise_mixed from BERT's residual adds under autocast (24 per case, 4 cases); its fixed cost is well above
    the one-dtype elementwise kernels' (PyTorch's casting kernel)."""
    doc = dict(cal.doc)
    samples = scope_samples(doc, "elementwise_mixed")
    assert len(samples) == 96 and {s["case"].split()[0] for s in samples} == {"bert_base"}
    fitted = fit_elementwise_mixed(doc, log=lambda *_: None)
    assert set(fitted) == {"fp32", "*"}
    for k in ("t0_s", "eff_memory"):
        assert fitted["fp32"][k] == pytest.approx(getattr(cal.params("elementwise_mixed", "fp32"), k), rel=1e-3)
    assert fitted["fp32"]["t0_s"] > 2 * cal.params("elementwise", "fp32").t0_s
