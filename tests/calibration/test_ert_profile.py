"""summarise() and the machine-profile writer on synthetic raw data (CPU only)."""
import copy
import json

import pytest

from predictor.measure.ert.profile_writer import (H200_DATASHEET, PRECISIONS, arch_name, build_profile,
                                            datasheet_from_profile, output_paths, write_profile)
from predictor.measure.ert.summary import summarise
from predictor.measure.ert.synthetic import SYNTHETIC_LEVELS_BPS, synthetic_raw

SRC = "ert-2026-01-01"


def check_profile_format(doc: dict) -> None:
    """The bundled profile format (schema_version 1), checked independently of the predictor."""
    assert doc["schema_version"] == 1
    for key in ("name", "full_name", "arch", "compute_capability"):
        assert isinstance(doc[key], str) and doc[key]
    assert isinstance(doc["aliases"], list)
    sources = doc["sources"]

    def value(e):
        assert set(e) == {"value", "source"}, e
        assert isinstance(e["value"], (int, float)) and e["value"] > 0
        assert e["source"] in sources, e
    for key in ("sm_count", "sm_clock_hz", "l2_bytes", "hbm_bytes", "launch_overhead_s",
                "kernel_gap_s"):
        value(doc[key])
    assert float(doc["sm_count"]["value"]).is_integer()
    for prec, units in doc["peak_flops_per_s"].items():
        assert prec in PRECISIONS
        for unit, e in units.items():
            assert unit in ("cuda", "tensor")
            value(e)
    assert set(doc["bandwidth_Bps"]) == {"L1", "L2", "HBM"}
    for e in doc["bandwidth_Bps"].values():
        value(e)
    for rec in sources.values():
        assert isinstance(rec, dict) and "kind" in rec
    json.dumps(doc, allow_nan=False)


def test_summarise_synthetic_levels_and_peaks():
    s = summarise(synthetic_raw())
    assert set(s["levels"]) == {"L1", "L2", "HBM"} and s["missing_levels"] == {}
    for name, want in SYNTHETIC_LEVELS_BPS.items():
        assert s["levels"][name]["bandwidth_Bps"] == pytest.approx(want, rel=0.05)
    assert s["levels"]["L1"]["series"] == "l1_read_fp32x4"
    assert s["levels"]["L2"]["series"] == "rmw_fp32"
    # per-SM range of the block-local sweep: aggregate / 132 SMs; L1 capacity there is 26 MB
    assert s["levels"]["L1"]["per_sm_max_bytes"] == s["levels"]["L1"]["max_bytes"] / 132
    assert s["levels"]["L1"]["max_bytes"] <= 26e6 * 1.1
    assert s["levels"]["HBM"]["max_bytes"] == pytest.approx(4096 * 1.1 ** 145)
    # tensor: the fastest library GEMM per precision; WMMA apart
    assert s["tensor_peaks"]["bf16"] == {"flops_per_s": 7.9e14, "case": "bf16_torch",
                                         "method": "synthetic"}
    assert s["tensor_peaks"]["fp16"]["flops_per_s"] == 7.8e14
    assert "fp8" not in s["tensor_peaks"]
    assert s["tensor_other"] == {"wmma_fp16": 5.6e14}
    assert s["compute_peaks"]["fp32"]["cuda"] == pytest.approx(6.6e13, rel=0.05)
    assert s["launch_overhead_s"] == 4.0e-6 and s["kernel_gap_s"] == 1.0e-6
    json.dumps(s, allow_nan=False)


def test_summarise_without_l1_sweep_reports_it_missing():
    raw = synthetic_raw()
    del raw["bandwidth"]["l1_read_fp32x4"]
    s = summarise(raw)
    assert set(s["levels"]) == {"L2", "HBM"}
    assert s["missing_levels"] == {"L1": "no L1 sweep in the data"}


def test_summarise_failed_canonical_series():
    raw = synthetic_raw()
    raw["bandwidth"]["rmw_fp32"] = {"error": "RuntimeError: boom"}
    s = summarise(raw)
    assert s["missing_levels"]["L2"] == "canonical series 'rmw_fp32' missing or failed"
    assert "L1" in s["levels"]  # the L1 kernel alone still gives L1


def test_profile_measured_values_and_datasheet_fallback():
    raw = synthetic_raw()
    prof = build_profile(raw, copy.deepcopy(H200_DATASHEET), name="h200", raw_data="h200_ert_raw.json")
    check_profile_format(prof)
    assert prof["name"] == "h200" and prof["arch"] == "hopper" and prof["compute_capability"] == "9.0"
    assert prof["sm_count"] == {"value": 132, "source": SRC}
    assert prof["l2_bytes"] == {"value": 62914560, "source": SRC}
    assert prof["sm_clock_hz"] == {"value": 1.98e9, "source": "datasheet"}
    assert prof["hbm_bytes"] == {"value": 1.41e11, "source": "datasheet"}
    assert prof["launch_overhead_s"] == {"value": 4.0e-6, "source": SRC}
    assert prof["kernel_gap_s"] == {"value": 1.0e-6, "source": SRC}
    assert prof["peak_flops_per_s"]["fp8"] == {"tensor": {"value": 1.979e15, "source": "datasheet"}}
    assert prof["peak_flops_per_s"]["int8"]["tensor"] == {"value": 1.2e15, "source": SRC}
    assert prof["peak_flops_per_s"]["fp16"]["tensor"] == {"value": 7.8e14, "source": SRC}
    assert prof["bandwidth_Bps"]["HBM"]["source"] == SRC
    assert prof["datasheet"]["bandwidth_Bps"] == {"HBM": 4.8e12}
    assert prof["datasheet"]["peak_flops_per_s"]["fp32"] == {"cuda": 6.7e13}
    ert = prof["sources"][SRC]
    assert ert["kind"] == "ert" and ert["raw_data"] == "h200_ert_raw.json"
    assert ert["date"] == "2026-01-01T00:00:00Z" and ert["driver"] == "0.0"
    assert "not used as the ceiling" in ert["notes"]
    assert prof["sources"]["datasheet"]["kind"] == "datasheet"


def test_profile_validates_with_the_predictor_loader():
    profile_mod = pytest.importorskip("predictor.machine.profile")
    prof = build_profile(synthetic_raw(), copy.deepcopy(H200_DATASHEET))
    m = profile_mod.parse_profile(json.loads(json.dumps(prof)), "test")
    assert m.sm_count == 132


def test_fallback_profile_fills_unmeasured_values_with_their_sources():
    raw = synthetic_raw()
    del raw["bandwidth"]["l1_read_fp32x4"]
    raw["launch"] = {"error": "RuntimeError: capture failed"}
    bundled = {
        "schema_version": 1, "name": "h200", "arch": "hopper",
        "launch_overhead_s": {"value": 4.2e-6, "source": "assumed-launch"},
        "kernel_gap_s": {"value": 1e-6, "source": "assumed-gap"},
        "bandwidth_Bps": {"L1": {"value": 3.3e13, "source": "derived-l1"},
                          "HBM": {"value": 4.8e12, "source": "datasheet"}},
        "peak_flops_per_s": {"fp8": {"tensor": {"value": 1.9789e15, "source": "datasheet"}}},
        "sources": {"datasheet": {"kind": "datasheet", "reference": "sheet"},
                    "derived-l1": {"kind": "derived", "reference": "128 B/clk/SM"},
                    "assumed-launch": {"kind": "assumed", "reference": "4.2 us"},
                    "assumed-gap": {"kind": "assumed", "reference": "1 us"}},
    }
    sheet = datasheet_from_profile(bundled)
    assert sheet == {"bandwidth_Bps": {"HBM": 4.8e12},
                     "peak_flops_per_s": {"fp8": {"tensor": 1.9789e15}},
                     "arch": "hopper", "reference": "sheet"}
    prof = build_profile(raw, sheet, fallback_profile=bundled)
    assert prof["bandwidth_Bps"]["L1"] == {"value": 3.3e13, "source": "derived-l1"}
    assert prof["launch_overhead_s"] == {"value": 4.2e-6, "source": "assumed-launch"}
    assert prof["peak_flops_per_s"]["fp8"]["tensor"] == {"value": 1.9789e15, "source": "datasheet"}
    assert prof["sources"]["derived-l1"] == {"kind": "derived", "reference": "128 B/clk/SM"}
    assert prof["sources"]["datasheet"] == {"kind": "datasheet", "reference": "sheet"}
    assert "L1 not measured: no L1 sweep in the data" in prof["sources"][SRC]["notes"]


def test_write_profile_puts_raw_data_beside_it(tmp_path):
    out = tmp_path / "h200" / "h200.json"
    raw = synthetic_raw()
    raw["compute"][0]["points"][0]["flops_per_s"] = float("nan")  # must not break strict JSON
    prof = write_profile(raw, out, copy.deepcopy(H200_DATASHEET))
    paths = output_paths(out)
    assert paths["raw"] == tmp_path / "h200" / "h200_ert_raw.json"
    assert paths["chart_prefix"] == tmp_path / "h200" / "h200_ert"
    on_disk = json.loads(out.read_text())
    assert on_disk == json.loads(json.dumps(prof))
    assert on_disk["sources"][SRC]["raw_data"] == "h200_ert_raw.json"
    raw_back = json.loads(paths["raw"].read_text())
    assert raw_back["compute"][0]["points"][0]["flops_per_s"] is None
    check_profile_format(on_disk)


@pytest.mark.parametrize("cc, arch", [("9.0", "hopper"), ("8.0", "ampere"), ("8.9", "ada"),
                                      ("7.5", "turing"), ("7.0", "volta"), ("x", None)])
def test_arch_name(cc, arch):
    assert arch_name(cc) == arch
