"""ncu CSV parsing: both layouts, units, separators, n/a, NVTX stacks, and one-line errors."""
from __future__ import annotations

import csv
import io

import pytest

from predictor.measure.ncu.nvtx import parse_ncu_stack
from predictor.measure.ncu.parse import NcuParseError, parse_csv, parse_file, parse_number, unit_factor
from predictor.measure.ncu.metrics import Kind

NVTX_COL = "thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg"
IDENT = ["ID", "Process ID", "Process Name", "Host Name", NVTX_COL, "Kernel Name", "Context", "Stream",
         "Block Size", "Grid Size", "Device", "CC"]
RAW_METRICS = ["dram__bytes.sum", "dram__bytes_read.sum", "dram__bytes_write.sum", "gpu__time_duration.sum",
               "l1tex__t_bytes.sum", "launch__grid_size", "launch__registers_per_thread", "lts__t_bytes.sum",
               "sm__ops_path_tensor_op_hgmma_src_fp16_sparsity_off.sum",
               "sm__sass_thread_inst_executed_op_fadd_pred_on.sum",
               "sm__sass_thread_inst_executed_op_ffma_pred_on.sum",
               "sm__throughput.avg.pct_of_peak_sustained_elapsed"]


def nvtx_cell(*messages: str, tid: int = 1234) -> str:
    return f"{tid}  " + "  ".join(f'"<default domain>:{m}:none:none:none:none:none:none"' for m in messages) + " "


def csv_text(rows: list[list[str]]) -> str:
    buf = io.StringIO()
    csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(rows)
    return buf.getvalue()


GEMM = "sm90_xmma_fprop_implicit_gemm_f16f16_f16f32_f32_nhwckrsc_nhwc_tilesize128x128x64_warpgroupsize1x1x1"
RELU = ("void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::"
        "launch_clamp_scalar(at::TensorIteratorBase &, c10::Scalar, c10::Scalar, "
        "at::native::detail::ClampLimits)::{lambda()#1}::operator ()() const::{lambda()#14}::operator ()() "
        "const::{lambda(c10::Half)#1}, std::array<char *, 2>>(int, T2, T3)")
CONV_RANGE = "mod|layer1.0.conv1|Conv2d|/layer1/layer1.0/conv1"


def raw_csv(units: bool = True) -> str:
    header = IDENT + RAW_METRICS
    unit_row = [""] * len(IDENT) + ["Mbyte", "byte", "Kbyte", "usecond", "Kbyte", "", "register/thread",
                                    "byte", "", "inst", "inst", "%"]
    ident = ["1234", "python3", "127.0.0.1"]
    k0 = ["0", *ident, nvtx_cell("mod||ResNet|", "mod|layer1|Sequential|/layer1", CONV_RANGE,
                                 "aten::conv2d, sizes = [[32, 64, 56, 56], [64, 64, 1, 1], [], [], [], [], []]"),
          GEMM, "1", "7", "(128, 1, 1)", "(784, 1, 1)", "0", "9.0",
          "1.50", "1,000,000", "500.5", "12.34", "2,048.5", "784", "168", "3,456,789",
          "1,234,567", "10", "20", "45.6"]
    k1 = ["1", *ident, nvtx_cell("mod||ResNet|", "mod|layer1|Sequential|/layer1",
                                 "mod|layer1.0.relu|ReLU|/layer1/layer1.0/relu"),
          RELU, "1", "7", "(512, 1, 1)", "(1,568, 1, 1)", "0", "9.0",
          "n/a", "", "", "3.5", "0", "1,568", "16", "n/a", "0", "0", "0", "n/a"]
    k2 = ["2", *ident, "", RELU, "1", "7", "(512, 1, 1)", "(1568, 1, 1)", "0", "9.0",
          "0.25", "125,000", "125,000", "3.25", "0", "1568", "16", "512", "0", "0", "0", "1.0"]
    rows = [header] + ([unit_row] if units else []) + [k0, k1, k2]
    return "==PROF== Connected to process 1234 (/usr/bin/python3.12)\nwarming up\n" + csv_text(rows) \
        + "==PROF== Disconnected from process 1234\n"


def test_raw_page_exact_values_units_and_separators():
    s0, s1, s2 = parse_csv(raw_csv())
    assert s0.id == 0 and s0.name == GEMM
    assert s0.time_s == pytest.approx(12.34e-6)                     # 12.34 usecond
    assert s0.bytes == {"L1": pytest.approx(2048.5e3),              # "2,048.5" Kbyte
                        "L2": 3456789.0, "HBM": 1.5e6}               # "1.50" Mbyte
    assert s0.counters["hbm_read_bytes"] == 1_000_000.0
    assert s0.counters["hbm_write_bytes"] == pytest.approx(500.5e3)
    assert dict(s0.flops) == {("fp32", "cuda"): 10 + 2 * 20.0,     # fadd + 2 * ffma
                              ("fp16", "tensor"): 1234567.0}
    assert s0.launch["grid_size"] == 784 and s0.launch["registers_per_thread"] == 168
    assert s0.launch["grid_dim"] == (784, 1, 1) and s0.launch["block_dim"] == (128, 1, 1)
    assert s0.launch["cc"] == "9.0" and s0.launch["stream"] == "7"
    assert s0.counters["sm_throughput_pct"] == 45.6
    assert s0.raw["lts__t_bytes.sum"] == 3456789.0
    assert s0.nvtx == ("mod||ResNet|", "mod|layer1|Sequential|/layer1", CONV_RANGE,
                       "aten::conv2d, sizes = [[32, 64, 56, 56], [64, 64, 1, 1], [], [], [], [], []]")
    assert s0.category == "gemm"


def test_na_and_empty_cells_are_none_not_zero():
    _, s1, s2 = parse_csv(raw_csv())
    assert s1.bytes == {"L1": 0.0, "L2": None, "HBM": None}        # dram n/a, read/write empty
    assert s1.counters["hbm_bytes"] is None and s1.counters["sm_throughput_pct"] is None
    assert s1.launch["grid_size"] == 1568 and s1.launch["grid_dim"] == (1568, 1, 1)  # "(1,568, 1, 1)"
    assert s1.name == s2.name and (s1.id, s2.id) == (1, 2)          # a repeated kernel stays two samples
    assert s2.nvtx == ()
    assert s2.bytes["HBM"] == 0.25e6


def test_raw_page_without_units_row_reads_base_units():
    s0 = parse_csv(raw_csv(units=False))[0]
    assert s0.time_s == pytest.approx(12.34e-9)                     # ns, ncu's base unit
    assert s0.bytes["HBM"] == 1.5


def test_details_page_groups_rows_by_id():
    header = IDENT + ["Section Name", "Metric Name", "Metric Unit", "Metric Value",
                      "Rule Name", "Rule Type", "Rule Description"]
    ident = ["1234", "python3", "127.0.0.1"]

    def row(kid, name, nvtx, metric, unit, value, section="Command line profiler metrics"):
        return [kid, *ident, nvtx, name, "1", "7", "(256, 1, 1)", "(80, 1, 1)", "0", "9.0",
                section, metric, unit, value, "", "", ""]

    cell = nvtx_cell("mod|fc|Linear|/fc", "aten::linear, sizes = [[32, 2048], [1000, 2048], [1000]]")
    rows = [header,
            row("0", "nvjet_hsh_128x256_64x4_2x1_v_bz_coopA_NTN", cell, "gpu__time_duration.sum", "msecond", "0.012"),
            row("0", "nvjet_hsh_128x256_64x4_2x1_v_bz_coopA_NTN", cell, "dram__bytes.sum", "Gbyte", "0.004"),
            row("0", "nvjet_hsh_128x256_64x4_2x1_v_bz_coopA_NTN", cell,
                "sm__ops_path_tensor_op_hgmma_src_fp16_sparsity_off.sum", "", "131,072,000"),
            row("0", "nvjet_hsh_128x256_64x4_2x1_v_bz_coopA_NTN", cell, "Duration", "usecond", "12",
                section="GPU Speed Of Light Throughput"),
            row("1", "void cublasLt::splitKreduce_kernel<32, 16, int, __half>", cell,
                "gpu__time_duration.sum", "nsecond", "2,016"),
            row("1", "void cublasLt::splitKreduce_kernel<32, 16, int, __half>", cell, "", "", "")]
    text = "==PROF== Profiling \"nvjet\" - 0: 0%....50%....100% - 9 passes\n" + csv_text(rows)
    a, b = parse_csv(text)
    assert a.time_s == pytest.approx(12e-6) and a.bytes["HBM"] == pytest.approx(4e6)
    assert dict(a.flops) == {("fp16", "tensor"): 131072000.0}
    assert "Duration" not in a.raw
    assert a.nvtx == ("mod|fc|Linear|/fc", "aten::linear, sizes = [[32, 2048], [1000, 2048], [1000]]")
    assert b.id == 1 and b.time_s == pytest.approx(2016e-9) and b.bytes == {"L1": None, "L2": None, "HBM": None}
    assert a.launch["grid_dim"] == (80, 1, 1)


def test_nvtx_cell_keeps_colons_inside_messages_and_order():
    cell = '77  "<default domain>:outer:none:none:none:none:none:none"  "<default domain>:a:b::c:none:none:none:none:none:none" '
    assert parse_ncu_stack(cell) == ("outer", "a:b::c")
    assert parse_ncu_stack("") == ()
    assert parse_ncu_stack("bare message") == ("bare message",)


@pytest.mark.parametrize("text, value", [("1,234,567", 1234567.0), ("12.5", 12.5), ("-3", -3.0),
                                         ("1,000.25", 1000.25), ("n/a", None), ("", None), (" N/A ", None)])
def test_parse_number(text, value):
    assert parse_number(text) == value


@pytest.mark.parametrize("text", ["65,77", "1,23", "abc", "1.2.3"])
def test_parse_number_refuses_ambiguous_or_junk(text):
    with pytest.raises(ValueError):
        parse_number(text)


@pytest.mark.parametrize("unit, kind, factor", [
    ("nsecond", Kind.TIME, 1e-9), ("usecond", Kind.TIME, 1e-6), ("ms", Kind.TIME, 1e-3), ("second", Kind.TIME, 1.0),
    ("byte", Kind.BYTES, 1.0), ("Kbyte", Kind.BYTES, 1e3), ("MB", Kind.BYTES, 1e6), ("Gbyte", Kind.BYTES, 1e9),
    ("Tbyte", Kind.BYTES, 1e12), ("Kinst", Kind.COUNT, 1e3), ("inst", Kind.COUNT, 1.0),
    ("register/thread", Kind.COUNT, 1.0), ("", Kind.COUNT, 1.0), ("%", Kind.PERCENT, 1.0),
    ("Gbyte/second", None, 1e9), ("byte/usecond", None, 1e6), ("Ghz", None, 1e9), ("%", None, 1.0),
])
def test_unit_factor(unit, kind, factor):
    assert unit_factor(unit, kind) == pytest.approx(factor)


@pytest.mark.parametrize("unit, kind", [("byte", Kind.TIME), ("nsecond", Kind.BYTES), ("usecond", Kind.COUNT),
                                        ("Mbyte", Kind.COUNT), ("inst", Kind.PERCENT), ("Xyz", Kind.COUNT)])
def test_unit_factor_refuses_wrong_units(unit, kind):
    with pytest.raises(ValueError):
        unit_factor(unit, kind)


def _error(text: str, **kw) -> str:
    with pytest.raises(NcuParseError) as info:
        parse_csv(text, source="t.csv", **kw)
    msg = str(info.value)
    assert "\n" not in msg
    return msg


def _replace_cell(text: str, line_no: int, column: str, value: str) -> str:
    lines = text.splitlines()
    header_idx = next(i for i, ln in enumerate(lines) if ln.startswith('"ID"'))
    header = next(csv.reader([lines[header_idx]]))
    cells = next(csv.reader([lines[line_no - 1]]))
    cells[header.index(column)] = value
    lines[line_no - 1] = csv_text([cells]).rstrip("\n")
    return "\n".join(lines) + "\n"


def test_error_empty_file():
    assert _error("") == "t.csv, line 1, column 'ID': empty input"
    assert _error("==PROF== nothing profiled\n\n") == "t.csv, line 1, column 'ID': empty input"


def test_error_no_header():
    assert _error("==PROF== Connected\nhello\nworld\n") == \
        "t.csv, line 2, column 'ID': no ncu CSV header (a line whose first cell is ID)"


def test_error_missing_kernel_name_and_time_columns():
    no_name = raw_csv().replace('"Kernel Name"', '"Kernel"')
    assert _error(no_name) == "t.csv, line 3, column 'Kernel Name': required column missing"
    no_time = raw_csv().replace('"gpu__time_duration.sum"', '"gpu__time_duration.avg"')
    assert _error(no_time) == "t.csv, line 3, column 'gpu__time_duration.sum': required column missing"


def test_error_non_numeric_value_names_line_and_column():
    bad = _replace_cell(raw_csv(), 6, "lts__t_bytes.sum", "lots")      # line 6: the kernel with ID 1
    assert _error(bad) == "t.csv, line 6, column 'lts__t_bytes.sum': value 'lots' is not a number"


def test_error_wrong_unit_names_units_row():
    bad = _replace_cell(raw_csv(), 4, "lts__t_bytes.sum", "nsecond")   # line 4: the units row
    assert _error(bad) == "t.csv, line 5, column 'lts__t_bytes.sum': unit 'nsecond' is not a byte unit"


def test_error_time_na_and_ambiguous_number():
    assert _error(_replace_cell(raw_csv(), 7, "gpu__time_duration.sum", "n/a")) == \
        "t.csv, line 7, column 'gpu__time_duration.sum': kernel 2 has no time value"
    assert _error(_replace_cell(raw_csv(), 5, "dram__bytes.sum", "1,5")) == \
        "t.csv, line 5, column 'dram__bytes.sum': value '1,5' is not a number"


def test_error_short_row_and_empty_kernel_name():
    lines = raw_csv().splitlines()
    lines[5] = '"1","1234"'
    assert _error("\n".join(lines)).startswith("t.csv, line 6, column 'Process ID': 2 cells where the header has")
    assert _error(_replace_cell(raw_csv(), 5, "Kernel Name", "")) == \
        "t.csv, line 5, column 'Kernel Name': empty kernel name"


def test_error_details_kernel_without_time():
    header = IDENT + ["Section Name", "Metric Name", "Metric Unit", "Metric Value"]
    row = ["0", "1", "p", "h", "", "k", "1", "7", "(1, 1, 1)", "(1, 1, 1)", "0", "9.0",
           "s", "dram__bytes.sum", "byte", "64"]
    assert _error(csv_text([header, row])) == \
        "t.csv, line 2, column 'gpu__time_duration.sum': kernel 0 has no gpu__time_duration.sum"


def test_architecture_from_cc_or_argument():
    assert _error(_replace_cell(raw_csv(), 5, "CC", "7.5")) == \
        "t.csv, line 5, column 'CC': compute capability '7.5' has no metric table; pass arch="
    volta = parse_csv(_replace_cell(raw_csv(), 5, "CC", "7.5"), arch="volta")[0]
    # the hgmma column is not in Volta's table: kept in raw, no tensor FLOPs
    assert ("fp16", "tensor") not in volta.flops and volta.raw[
        "sm__ops_path_tensor_op_hgmma_src_fp16_sparsity_off.sum"] == 1234567.0


def test_header_only_gives_no_samples_and_parse_file(tmp_path):
    assert parse_csv(csv_text([IDENT + RAW_METRICS])) == []
    p = tmp_path / "case.csv"
    p.write_text(raw_csv())
    assert [s.id for s in parse_file(p)] == [0, 1, 2]
    p.write_text("")
    with pytest.raises(NcuParseError, match=f"{p}, line 1"):
        parse_file(p)


@pytest.mark.parametrize("end", ["\n", "\r\n", "\r", "\x1c", "\u2028"])
def test_file_read_line_by_line_as_the_whole_text(tmp_path, end):
    """parse_file reads the file one line at a time (never whole): the same samples, and errors at the same
    lines, as parse_csv of the whole text, whatever ends the lines (str.splitlines' separators)."""
    text = "\ufeff" + raw_csv().replace("\n", end)
    p = tmp_path / "k.csv"
    p.write_bytes(text.encode("utf-8"))
    assert parse_file(p) == parse_csv(text, source=str(p))
    bad = raw_csv().split("\n")
    bad.insert(6, '"9","x"')  # a short row after the kernels
    p.write_bytes(end.join(bad).encode("utf-8"))
    with pytest.raises(NcuParseError) as e:
        parse_file(p)
    with pytest.raises(NcuParseError) as e2:
        parse_csv(end.join(bad), source=str(p))
    assert str(e.value) == str(e2.value) and "line 7" in str(e.value)


def test_repeated_attributes_are_shared():
    """Launch attributes and NVTX stacks that repeat from kernel to kernel are one read-only object."""
    _, s1, s2 = parse_csv(raw_csv())
    assert s1.nvtx != s2.nvtx and s1.launch is not s2.launch  # (1,568, 1, 1) and (1568, 1, 1): other cells
    rows = raw_csv().split("\n")
    k2 = rows[-3]
    text = "\n".join(rows[:-2] + [k2.replace('"2"', '"3"', 1), ""]) + "\n"
    a, b = parse_csv(text)[-2:]
    assert a.launch is b.launch and a.nvtx is b.nvtx and a.name is b.name
