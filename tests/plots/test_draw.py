"""Drawing writes files (PNG and SVG); bad --plot names are one-line errors."""
import pytest

from predictor.machine.profile import load_profile
from predictor.plots.data import roofline_chart, time_chart
from predictor.plots.draw import check_plot_path, save_charts, time_path
from predictor.types import PredictorError
from tests.plots.test_data import series

H200 = load_profile("h200")


@pytest.mark.parametrize("ext", [".png", ".svg"])
def test_save_charts_writes_both(tmp_path, ext):
    s = [series("fp32", n=3, scale=2.0), series("fp16", n=3)]
    out = str(tmp_path / f"c{ext}")
    a, b = save_charts(roofline_chart(s, H200, "fp16", "t"), time_chart(s, H200, "fp16", "t"), out)
    assert (a, b) == (out, str(tmp_path / f"c-time{ext}"))
    for f in (a, b):
        data = open(f, "rb").read()
        assert len(data) > 5000
        assert data.startswith(b"\x89PNG") if ext == ".png" else b"<svg" in data[:2000]


def test_time_path():
    assert time_path("out/r.png") == "out/r-time.png" and time_path("r.svg") == "r-time.svg"


def test_bad_plot_path(tmp_path):
    with pytest.raises(PredictorError, match="must end in .png or .svg"):
        check_plot_path(str(tmp_path / "c.pdf"))
    with pytest.raises(PredictorError, match="no such directory"):
        check_plot_path(str(tmp_path / "missing" / "c.png"))
