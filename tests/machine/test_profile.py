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


def test_hbm_read_ceiling_prices_reads_and_writes_apart():
    doc = _doc()
    copy = doc["bandwidth_Bps"]["HBM"]["value"]
    assert parse_profile(doc, "x.json").hbm_time_s(3e9, 1e9) == 3e9 / copy  # no read figure: every byte at copy
    doc["hbm_read_bandwidth_Bps"] = {"value": 1.25 * copy, "source": doc["bandwidth_Bps"]["HBM"]["source"]}
    p = parse_profile(doc, "x.json")
    assert p.hbm_read_bandwidth_Bps == 1.25 * copy
    # a copy (as many reads as writes) runs at the copy figure; reads alone at the read figure; writes at
    # 1 / (2 / copy - 1 / read) = copy / 1.2 here
    assert math.isclose(p.hbm_time_s(2e9, 1e9), 2e9 / copy, rel_tol=1e-12)
    assert math.isclose(p.hbm_time_s(1e9, 0.0), 1e9 / (1.25 * copy), rel_tol=1e-12)
    assert math.isclose(p.hbm_time_s(1e9, 1e9), 1.2e9 / copy, rel_tol=1e-12)
    assert p.hbm_time_s(1e9, 5e9) == p.hbm_time_s(1e9, 1e9)  # writes counted at most as the bytes


@pytest.mark.parametrize("factor", [0.9, 2.0])
def test_hbm_read_ceiling_must_lie_between_copy_and_twice_it(factor):
    doc = _doc()
    doc["hbm_read_bandwidth_Bps"] = {"value": factor * doc["bandwidth_Bps"]["HBM"]["value"],
                                     "source": doc["bandwidth_Bps"]["HBM"]["source"]}
    with pytest.raises(PredictorError, match="field 'hbm_read_bandwidth_Bps'"):
        parse_profile(doc, "x.json")


def test_h200_read_ceiling_is_its_ert_read_sweep():
    p = load_profile("h200")
    assert p.hbm_read_bandwidth_Bps == 4636165011778.266  # HBM plateau of read_fp32x4 (calibration/data/h200/ert)
    assert p.bandwidth(MemLevel.HBM) == 3952090131751.126  # of copy_fp32x4
