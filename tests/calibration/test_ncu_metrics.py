"""Metric tables, FLOPs per (precision, unit) and the validator against `ncu --query-metrics`."""
from __future__ import annotations

import pytest

from calibration.ncu import metrics as m
from predictor.measure.ncu.metrics import Metric


@pytest.mark.parametrize("arch", sorted(m.TABLES))
def test_every_table_has_time_and_unique_names(arch):
    t = m.table(arch)
    assert t[Metric.TIME] == "gpu__time_duration.sum"
    names = m.metric_names(arch)
    assert len(names) == len(set(names)) == len(t)
    assert t[Metric.L1_BYTES] == "l1tex__t_bytes.sum"
    assert t[Metric.L2_BYTES] == "lts__t_bytes.sum"
    assert t[Metric.HBM_BYTES] == "dram__bytes.sum"


def test_hopper_table_is_small_and_has_both_tensor_paths():
    names = m.metric_names("hopper")
    assert len(names) <= 40                  # every extra pass is replayed for every kernel
    assert "sm__ops_path_tensor_op_hgmma_src_fp16_sparsity_off.sum" in names
    assert "sm__ops_path_tensor_op_hmma_src_fp16_dst_fp32_sparsity_off.sum" in names
    assert "sm__sass_thread_inst_executed_op_ffma_pred_on.sum" in names
    assert "sm__inst_executed_pipe_tensor.sum" not in names   # not a tensor-FLOP proxy on Hopper


def test_unknown_arch_is_refused():
    with pytest.raises(KeyError, match="known: volta, ampere, hopper"):
        m.metric_names("pascal")


@pytest.mark.parametrize("cc, arch", [("9.0", "hopper"), ("8.0", "ampere"), ("8.6", "ampere"),
                                      ("7.0", "volta"), ("7.5", None), ("10.0", None), ("", None)])
def test_arch_of_cc(cc, arch):
    assert m.arch_of_cc(cc) == arch


def test_flops_exact_sums_per_precision_and_unit():
    row = {
        Metric.FADD: 10, Metric.FMUL: 20, Metric.FFMA: 30,          # 10 + 20 + 2 * 30 = 90
        Metric.HADD: 1, Metric.HFMA: 4,                              # 1 + 2 * 4 = 9
        Metric.TENSOR_HGMMA_FP16: 1000, Metric.TENSOR_HMMA_FP16_FP32: 24,   # 1000 + 24 = 1024
        "tensor_hgmma_bf16": 2048,                                   # canonical value as key
        Metric.TENSOR_HMMA_BF16: None,                               # n/a: skipped, bf16 stays 2048
        Metric.DFMA: None,                                           # only term n/a -> None
        Metric.TIME: 1e-6,                                           # not a FLOP term
        "not_a_metric": 5,                                           # ignored
    }
    assert m.flops_by_precision_unit(row) == {
        ("fp32", "cuda"): 90.0,
        ("fp16", "cuda"): 9.0,
        ("fp16", "tensor"): 1024.0,
        ("bf16", "tensor"): 2048.0,
        ("fp64", "cuda"): None,
    }


def test_volta_tensor_instructions_count_512_flops():
    assert m.flops_by_precision_unit({Metric.TENSOR_INST: 3}) == {("fp16", "tensor"): 1536.0}  # 3 * 512


BASE_LISTING = """\
Device GH100 (gh100)
------------------------------------------------------------ -----------------------
Metric Name                                                  Metric Description
------------------------------------------------------------ -----------------------
dram__bytes                                                  # of bytes accessed in DRAM
dram__bytes_read                                             # of bytes read from DRAM
gpu__time_duration                                           total duration in nanoseconds
lts__t_bytes                                                 # of bytes requested from LTS
sm__throughput                                               SM throughput
"""

SUFFIX_LISTING = """\
dram__bytes.sum
dram__bytes.sum.per_second
gpu__time_duration.sum
l1tex__t_bytes.sum
"""


def test_check_table_base_mode_listing():
    names = ["gpu__time_duration.sum", "dram__bytes.sum", "dram__bytes_write.sum",
             "sm__throughput.avg.pct_of_peak_sustained_elapsed", "launch__grid_size"]
    check = m.check_table("hopper", BASE_LISTING, names)
    assert check.present == ("gpu__time_duration.sum", "dram__bytes.sum",
                             "sm__throughput.avg.pct_of_peak_sustained_elapsed")
    assert check.missing == ("dram__bytes_write.sum",)
    assert check.unchecked == ("launch__grid_size",)
    assert not check.ok
    assert check.report().splitlines() == [
        "hopper: 3 present, 1 missing, 1 not checkable (launch/device attributes)",
        "  missing: dram__bytes_write.sum",
    ]


def test_check_table_suffix_mode_listing_and_header_lines_ignored():
    assert m.listed_metric_names(SUFFIX_LISTING) == {"dram__bytes.sum", "dram__bytes.sum.per_second",
                                                     "gpu__time_duration.sum", "l1tex__t_bytes.sum"}
    assert "Metric" not in m.listed_metric_names(BASE_LISTING)
    check = m.check_table("hopper", SUFFIX_LISTING, ["l1tex__t_bytes.sum", "lts__t_bytes.sum"])
    assert check.present == ("l1tex__t_bytes.sum",) and check.missing == ("lts__t_bytes.sum",)


def test_cli_check_reports_missing_names(tmp_path, capsys):
    listing = tmp_path / "query_metrics_gh100.txt"
    listing.write_text(BASE_LISTING)
    assert m.main(["--arch", "hopper", "--listing", str(listing)]) == 1
    out = capsys.readouterr().out
    assert "missing: sm__ops_path_tensor_op_hgmma_src_fp16_sparsity_off.sum" in out
    full = "\n".join(n.split(".")[0] for n in m.metric_names("hopper"))
    listing.write_text(full)
    assert m.main(["--arch", "hopper", "--listing", str(listing)]) == 0
