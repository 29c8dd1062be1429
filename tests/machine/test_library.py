"""The GPU profile library: every shipped profile loads, names resolve, precisions follow the generation."""
import json
from importlib import resources

import pytest

from predictor.machine.arch import ARCHS
from predictor.machine.profile import bundled_names, load_profile, normalise_name, parse_profile
from predictor.types import MemLevel, Precision, PredictorError, Unit

FILES = sorted(e.name for e in resources.files("predictor.machine").joinpath("profiles").iterdir()
               if e.name.endswith(".json"))
LISTED = ["v100", "v100-sxm2-32gb", "v100-pcie-16gb", "v100-pcie-32gb", "t4", "a100", "a100-sxm4-40gb",
          "a100-pcie-40gb", "a100-pcie-80gb", "a10", "a30", "l4", "l40s", "rtx4090", "h100", "h100-pcie",
          "h100-nvl", "h200", "gh200", "b200", "gb200", "p100-sxm2-16gb", "p100-pcie-16gb", "p4"]


def _doc(name):
    return json.loads(resources.files("predictor.machine").joinpath("profiles", name).read_text())


@pytest.mark.parametrize("fname", FILES)
def test_every_shipped_profile_loads_and_every_number_has_a_source(fname):
    p = load_profile(fname[:-5])
    assert set(p.bandwidth_Bps) == {MemLevel.L1, MemLevel.L2, MemLevel.HBM}
    assert p.arch in ARCHS and p.tensor_core_generation is not None
    for field, src in p.provenance.items():
        assert p.sources[src].get("reference") or p.sources[src].get("kind") == "ert", (field, src)
    # the datasheet section holds only numbers the profile cites as datasheet figures or measured ones
    assert p.memory_bytes >= p.hbm_bytes * 0.99


def test_library_covers_the_gpus_users_ask_about():
    names = {f[:-5] for f in FILES}
    assert set(LISTED) <= names


@pytest.mark.parametrize("typed,name", [
    ("NVIDIA A100-SXM4-80GB", "a100"), ("nvidia a100-sxm4-40gb", "a100-sxm4-40gb"),
    ("Tesla V100-PCIE-32GB", "v100-pcie-32gb"), ("a100-pcie-40gb", "a100-pcie-40gb"),
    ("NVIDIA A100 80GB PCIe", "a100-pcie-80gb"), ("Tesla T4", "t4"), ("T4", "t4"), ("NVIDIA L4", "l4"),
    ("NVIDIA H100 80GB HBM3", "h100"), ("NVIDIA H100 PCIe", "h100-pcie"), ("NVIDIA H200", "h200"),
    ("Tesla V100-SXM2-16GB", "v100"), ("Tesla V100-SXM2-32GB", "v100-sxm2-32gb"), ("RTX 4090", "rtx4090"),
    ("NVIDIA GeForce RTX 4090", "rtx4090"), ("Tesla P100-PCIE-16GB", "p100-pcie-16gb"), ("b200", "b200"),
])
def test_aliases_resolve_case_insensitively(typed, name):
    assert load_profile(typed).name == name


def test_normalise_name():
    assert normalise_name("  Tesla V100-PCIE-32GB ") == "v100-pcie-32gb"
    assert normalise_name("NVIDIA A100 80GB PCIe") == "a100-80gb-pcie"
    assert normalise_name("a100_pcie_40gb") == "a100-pcie-40gb"
    assert normalise_name("nvidia") == "nvidia"  # a lone word is kept


def test_no_alias_names_two_profiles():
    seen = {}
    for f in FILES:
        d = _doc(f)
        for a in [d["name"]] + d["aliases"]:
            key = normalise_name(a)
            assert seen.setdefault(key, f) == f, (key, f, seen[key])
    assert len(set(bundled_names().values())) == len(FILES)


@pytest.mark.parametrize("name,precision,has", [
    ("v100", Precision.BF16, False), ("v100", Precision.TF32, False), ("v100", Precision.FP16, True),
    ("t4", Precision.BF16, False), ("t4", Precision.INT8, True), ("t4", Precision.FP8, False),
    ("p100-sxm2-16gb", Precision.FP16, False), ("a100-pcie-40gb", Precision.FP8, False),
    ("a100-pcie-40gb", Precision.TF32, True), ("a10", Precision.BF16, True), ("l4", Precision.FP8, True),
    ("rtx4090", Precision.FP8, True), ("h100-pcie", Precision.FP8, True), ("b200", Precision.FP8, True),
])
def test_tensor_precisions_per_generation(name, precision, has):
    assert load_profile(name).has_tensor(precision) is has


@pytest.mark.parametrize("gpu,precision", [("v100-pcie-32gb", "bf16"), ("t4", "tf32"), ("a100-pcie-80gb", "fp8"),
                                           ("p4", "fp16"), ("a30", "fp8")])
def test_unsupported_precision_is_the_na_error(conv_model, capsys, gpu, precision):
    from predictor.cli import main

    assert main([conv_model, "--gpu", gpu, "--precision", precision]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {gpu} has no {precision} tensor-core ceiling") and err.count("\n") == 1


def test_a_profile_claiming_a_precision_its_generation_lacks_is_rejected():
    doc = _doc("v100.json")
    doc["peak_flops_per_s"]["bf16"] = {"tensor": {"value": 1e14, "source": "datasheet"}}
    with pytest.raises(PredictorError, match=r"field 'peak_flops_per_s.bf16.tensor' is not possible on volta"):
        parse_profile(doc, "x.json")


def test_sustained_clock_is_validated():
    doc = _doc("t4.json")
    doc["sustained_sm_clock_hz"] = {"value": 1.2e9, "source": "datasheet"}
    assert parse_profile(doc, "x.json").sustained_sm_clock_hz == 1.2e9
    doc["sustained_sm_clock_hz"] = {"value": 2.0e9, "source": "datasheet"}
    with pytest.raises(PredictorError, match="field 'sustained_sm_clock_hz' must not exceed sm_clock_hz"):
        parse_profile(doc, "x.json")


def test_missing_field_says_missing():
    doc = _doc("t4.json")
    del doc["sm_clock_hz"]
    with pytest.raises(PredictorError, match="field 'sm_clock_hz' is missing"):
        parse_profile(doc, "x.json")


# ---------------------------------------------------------------------------------- derived numbers, exact
def test_derived_bandwidths_exact():
    t4 = load_profile("t4")
    assert t4.bandwidth(MemLevel.L1) == 128 * 40 * 1.59e9                          # 8.1408 TB/s
    assert t4.bandwidth(MemLevel.L2) == pytest.approx(2996.8e9 / (80 * 1.53e9) * 40 * 1.59e9, rel=1e-12)
    assert t4.bandwidth(MemLevel.HBM) == 320e9
    a100p = load_profile("a100-pcie-40gb")
    assert a100p.bandwidth(MemLevel.L2) == 5120 * 1.41e9                           # 7.2192 TB/s, as the bundled a100
    assert a100p.bandwidth(MemLevel.L2) == load_profile("a100").bandwidth(MemLevel.L2)
    assert a100p.bandwidth(MemLevel.HBM) == 1555e9
    l4 = load_profile("l4")
    assert l4.bandwidth(MemLevel.L2) == pytest.approx(5120 / 108 * 58 * 2.04e9, rel=1e-12)  # 5.609 TB/s
    assert l4.peak(Precision.FP8, Unit.TENSOR) == 242.5e12                         # 485 with sparsity / 2
    assert l4.peak(Precision.FP64, Unit.CUDA) == 30.3e12 / 64
    b200 = load_profile("b200")
    assert b200.sm_clock_hz == pytest.approx(80e12 / (148 * 256), rel=1e-9)        # 2.111 GHz implied by FP32


def test_bundled_profiles_numbers_unchanged():
    h100 = load_profile("h100")  # ERT-measured on an H100 SXM5 80GB (calibration/data/h100/ert, 2026-12-05)
    assert h100.peak(Precision.FP32, Unit.CUDA) == 61873111387788.22
    assert h100.bandwidth(MemLevel.HBM) == 2892791576682.0566
    assert h100.source_kind("bandwidth_Bps.HBM") == "ert" and h100.source_kind("bandwidth_Bps.L1") == "derived"
    assert h100.datasheet["bandwidth_Bps"]["HBM"] == 3.35e12
    assert load_profile("a100").bandwidth(MemLevel.HBM) == 2.039e12
    assert load_profile("v100").bandwidth(MemLevel.HBM) == 828.8e9
    assert load_profile("h200").bandwidth(MemLevel.HBM) == 3952090131751.126
    assert load_profile("h200-datasheet").bandwidth(MemLevel.HBM) == 4.8e12
