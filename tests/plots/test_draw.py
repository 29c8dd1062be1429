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


def test_no_math_text_in_charts():
    """Every text of both charts is plain (matplotlib's math-text parser costs ~0.2 s to build): secondary axes
    included."""
    from matplotlib.text import Text

    from predictor.plots.draw import draw_roofline, draw_time

    s = [series("fp32", n=3, scale=2.0), series("fp16", n=3)]
    for fig in (draw_roofline(roofline_chart(s, H200, "fp16", "t")), draw_time(time_chart(s, H200, "fp16", "t"))):
        fig.canvas.draw()
        texts = [t.get_text() for t in fig.findobj(Text)]
        assert texts and not [t for t in texts if "$" in t]


def test_set_works_on_artists_imported_without_docstrings():
    from predictor.plots.draw import _Figures

    _Figures()
    from matplotlib.lines import Line2D

    line = Line2D([0], [0])
    line.set(color="red", linewidth=2.0)
    assert (line.get_color(), line.get_linewidth()) == ("red", 2.0)
