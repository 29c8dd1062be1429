"""Charts of a prediction: hierarchical roofline and time-based roofline.

`data` computes every position as frozen dataclasses (pure, tested); `draw` renders them with
matplotlib's Agg backend, imported only when a chart is drawn.
"""
from __future__ import annotations

from .data import (OpSample, RooflineChart, Series, TimeChart, roofline_chart, series_from_prediction,  # noqa: F401
                   time_chart, vertex)


MAX_CHART_VALUE = 1e100  # log axes beyond this have no meaning (the model's dimensions overflow physics)


def check_chartable(series) -> None:
    """A one-line PredictorError when a time, FLOP or byte count of `series` is not finite, negative or
    beyond MAX_CHART_VALUE (a model whose sums overflow): no chart is drawn from such numbers."""
    from ..types import PredictorError

    for s in series:
        for o in (s.network, *s.ops):
            for what, v in (("time", o.time_s), ("FLOPs", o.flops), *((f"{k} bytes", b) for k, b in o.bytes.items())):
                v = float(v or 0.0)
                if not (0.0 <= v <= MAX_CHART_VALUE):  # NaN fails both
                    raise PredictorError(f"cannot chart {s.label}: {what} of {o.name} is {v:.3g}, out of the range a "
                                         f"chart can show (0..{MAX_CHART_VALUE:.0e}): the model's sizes overflow")


def write_charts(series, profile, precision, path: str, title: str = "") -> tuple[str, str]:
    """Build both charts of `series` and write them: `path` and `path` with a ``-time`` suffix."""
    from .draw import check_plot_path, save_charts

    check_plot_path(path)
    check_chartable(series)
    return save_charts(roofline_chart(series, profile, precision, title=title),
                       time_chart(series, profile, precision, title=title), path)
