import json

import pytest

from predictor.fitted import bundled_calibration, parse_calibration, wave_efficiency
from predictor.machine.profile import load_profile
from predictor.types import PredictorError


def test_bundled_fit_for_h200_and_transfer():
    own = bundled_calibration(load_profile("h200"))
    assert own is not None and own.transferred_from is None and own.name == "fitted:h200"
    moved = bundled_calibration(load_profile("v100"))
    assert moved.transferred_from == "h200" and "transferred" in moved.name


@pytest.mark.parametrize("tiles,sms,k,eff", [
    (132, 132, 0, 1.0),        # one full wave
    (133, 132, 0, 133 / 264),  # a second wave with one tile
    (6, 132, 768, 6 / 132),    # 6 tiles, K = 768: one slice of 512 at most, no split
    (6, 132, 2048, 24 / 132),  # 6 tiles, K split in 4 slices of 512
    (6, 132, 0, 6 / 132),
])
def test_wave_efficiency(tiles, sms, k, eff):
    assert wave_efficiency(tiles, sms, k) == pytest.approx(eff)


@pytest.mark.parametrize("doc,field", [
    ({"schema_version": 2}, "schema_version"),
    ({"schema_version": 1, "gpu": "x", "kernel_gap_s": 1e-6}, "classes"),
    ({"schema_version": 1, "gpu": "x", "kernel_gap_s": 1e-6, "classes": {"conv": {}}}, "classes"),
    ({"schema_version": 1, "gpu": "x", "kernel_gap_s": -1,
      "classes": {"default": {"*": {"t0_s": 1e-6, "eff_compute": 0.5, "eff_memory": 0.5}}}}, "kernel_gap_s"),
    ({"schema_version": 1, "gpu": "x", "kernel_gap_s": 1e-6,
      "classes": {"default": {"*": {"t0_s": 1e-6, "eff_compute": float("nan"), "eff_memory": 0.5}}}},
     "classes.default.*.eff_compute"),
])
def test_bad_calibration_names_field(doc, field):
    with pytest.raises(PredictorError, match=f"field '{field}"):
        parse_calibration(json.loads(json.dumps(doc)), "c.json")
