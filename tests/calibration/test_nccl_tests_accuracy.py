"""The published nccl-tests rows and their size-by-size comparison (calibration/evaluate/nccl_tests_accuracy.py)."""
import re

import pytest

from calibration.evaluate import nccl_tests_accuracy as nt
from predictor.types import PredictorError

DOC = nt.load()
TABLES = DOC["tables"]


@pytest.mark.parametrize("text,size,time_us,busbw", [
    ("     1048576        262144     float     sum      -1    87.08   12.04   22.58       0    77.82   13.47   25.26       0",
     1048576, 87.08, 22.58),
    ("0:   2147483648     536870912     float     sum      -1    51406   41.78   78.33      0    51406   41.77   78.33      0",
     2147483648, 51406.0, 78.33),
    ("   [1,0]<stdout>:    67108864      16777216     float     sum      -1    996.0   67.38  126.33      0   1001.7   "
     "66.99  125.62      0", 67108864, 996.0, 126.33),
])
def test_parse_row_with_launcher_prefixes(text, size, time_us, busbw):
    r = nt.parse_row(text)
    assert (r.size_bytes, r.time_us, r.busbw_GBps, r.dtype) == (size, time_us, busbw, "float")


def test_parse_row_rejects_other_text():
    with pytest.raises(PredictorError, match="not an nccl-tests row"):
        nt.parse_row("# Avg bus bandwidth    : 67.9217")


def test_every_table_cites_a_pinned_source_and_loads_its_system():
    assert len(TABLES) >= 8 and sum(len(t["rows"]) for t in TABLES) >= 100
    for t in TABLES:
        assert re.search(r"/blob/[0-9a-f]{40}/", t["source"]), t["id"]
        assert t["quote"] and t["assumptions"] and t["fabric"], t["id"]
        nt.table_system(t)  # overrides name real fields


@pytest.mark.parametrize("t", TABLES, ids=lambda t: t["id"])
def test_every_copied_row_is_self_consistent(t):
    # algbw = size / time and busbw = algbw x 2(n-1)/n within the printout's rounding: a row mistyped when
    # copied, or a wrong rank count, fails here
    for text in t["rows"]:
        assert nt.consistent(nt.parse_row(text), t["gpus"]), text


def test_error_is_published_over_predicted_time():
    table = {"id": "x", "op": "all_reduce", "system": "dgx-a100", "gpus": 8, "fabric": "none (one node)",
             "rows": ["  1073741824     268435456     float     sum      -1   10000.0  107.37  187.90      0"]}
    (row,) = nt.predict_table(table, DOC["size_ranges"])
    assert row["range"] == "large" and row["fabric_class"] == "RDMA"
    assert row["error"] == pytest.approx(10000.0 / row["predicted_time_us"] - 1, rel=1e-12)


def test_size_ranges():
    r = DOC["size_ranges"]
    assert [nt.size_range(s, r) for s in (8, 65536, 65537, 64 << 20, (64 << 20) + 1)] == \
        ["latency", "latency", "medium", "medium", "large"]


def test_summary_groups_per_table_and_fabric():
    rows = [{"table": "a", "fabric_class": "RDMA", "range": "large", "error": e} for e in (0.1, -0.3, 0.2)]
    (g_a, g_all) = nt.summarise(rows)
    assert g_a["table"] == "a" and g_all["table"] == "all RDMA tables"
    assert g_a["rows"] == 3 and g_a["mean_abs_error"] == pytest.approx(0.2) and g_a["worst_error"] == -0.3
    assert g_a["median_error"] == 0.1
