import json
import math

import pytest

from predictor.machine.profile import load_profile, parse_profile
from predictor.types import MemLevel, Precision, PredictorError, Unit


@pytest.mark.parametrize("name", ["v100", "V100", "v100-sxm2-16gb", "a100", "h100", "H200", "h200-sxm"])
def test_bundled_profiles_load(name):
    p = load_profile(name)
    assert p.peak(Precision.FP32, Unit.CUDA) > 0
    assert set(p.bandwidth_Bps) == {MemLevel.L1, MemLevel.L2, MemLevel.HBM}
    # every number carries a source that exists
    for field, src in p.provenance.items():
        assert src in p.sources, field


def test_v100_published_ert_ceilings():
    p = load_profile("v100")
    assert p.bandwidth(MemLevel.HBM) == 828.8e9
    assert p.bandwidth(MemLevel.L2) == 2996.8e9
    assert p.bandwidth(MemLevel.L1) == 14336e9
    assert p.peak(Precision.FP16, Unit.TENSOR) == 106496e9
    assert p.launch_overhead_s == 4.2e-6
    assert p.source_kind("bandwidth_Bps.HBM") == "ert"
    assert not p.has_tensor(Precision.BF16)


def test_unknown_gpu_lists_known():
    with pytest.raises(PredictorError, match=r"unknown GPU 'k80' \(known: a10, a100, .*h100, .*h200, h200-datasheet, .*v100"):
        load_profile("k80")


def _doc():
    from importlib import resources

    return json.loads(resources.files("predictor.machine").joinpath("profiles", "v100.json").read_text())


def test_user_profile_file(tmp_path):
    doc = _doc()
    doc["name"] = "mygpu"
    path = tmp_path / "mygpu.json"
    path.write_text(json.dumps(doc))
    assert load_profile(str(path)).name == "mygpu"


@pytest.mark.parametrize("mutate,field", [
    (lambda d: d["bandwidth_Bps"]["HBM"].__setitem__("value", -1), "bandwidth_Bps.HBM"),
    (lambda d: d["bandwidth_Bps"]["L2"].__setitem__("value", "fast"), "bandwidth_Bps.L2"),
    (lambda d: d["bandwidth_Bps"].pop("L1"), "bandwidth_Bps.L1"),
    (lambda d: d["peak_flops_per_s"]["fp32"]["cuda"].__setitem__("source", "nowhere"), "peak_flops_per_s.fp32.cuda"),
    (lambda d: d["peak_flops_per_s"].__setitem__("fp7", {}), "peak_flops_per_s.fp7"),
    (lambda d: d.__setitem__("sm_count", {"value": 80.5, "source": "datasheet"}), "sm_count"),
    (lambda d: d.__setitem__("schema_version", 9), "schema_version"),
    (lambda d: d.__setitem__("name", 3), "name"),
])
def test_bad_profile_names_field(mutate, field):
    doc = _doc()
    mutate(doc)
    with pytest.raises(PredictorError, match=f"field '{field}'"):
        parse_profile(doc, "x.json")


def test_nan_rejected(tmp_path):
    text = json.dumps(_doc()).replace("828800000000.0", "NaN")
    path = tmp_path / "nan.json"
    path.write_text(text)
    with pytest.raises(PredictorError, match="not valid JSON|finite"):
        load_profile(str(path))


def test_not_json(tmp_path):
    path = tmp_path / "p.json"
    path.write_text("{not json")
    with pytest.raises(PredictorError, match="not valid JSON"):
        load_profile(str(path))
    assert math.isfinite(1.0)


def test_compute_capability_must_be_major_dot_minor():
    import json
    from pathlib import Path

    from predictor.machine.profile import parse_profile
    from predictor.types import PredictorError

    doc = json.loads((Path(__file__).resolve().parents[2] / "predictor/machine/profiles/t4.json").read_text())
    assert parse_profile(doc).compute_capability == "7.5"
    for bad in ("7", "7.5.1", 7.5, "sm_75", "٧.٥"):
        with pytest.raises(PredictorError, match="field 'compute_capability' must be a string 'major.minor'"):
            parse_profile({**doc, "compute_capability": bad})
