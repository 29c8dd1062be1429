"""Charts of a prediction: hierarchical roofline and time-based roofline.

`data` computes every position as frozen dataclasses (pure, tested); `draw` renders them with
matplotlib's Agg backend, imported only when a chart is drawn.
"""
from __future__ import annotations

from .data import (OpSample, RooflineChart, Series, TimeChart, roofline_chart, series_from_prediction,  # noqa: F401
                   time_chart, vertex)


def write_charts(series, profile, precision, path: str, title: str = "") -> tuple[str, str]:
    """Build both charts of `series` and write them: `path` and `path` with a ``-time`` suffix."""
    from .draw import check_plot_path, save_charts

    check_plot_path(path)
    return save_charts(roofline_chart(series, profile, precision, title=title),
                       time_chart(series, profile, precision, title=title), path)
