"""Chart data of a sweep (predictor.plots.sweep): lines, points, styles, limits, omitted settings."""
import pytest

from predictor.plots.draw_sweep import save_sweep_chart
from predictor.plots.sweep import GPU_COLORS, PRECISION_STYLES, sweep_chart
from predictor.sweep import SweepRow, failed_row


def ok(gpu, prec, batch, t):
    return SweepRow(gpu, prec, batch, total_time_s=t, throughput_per_s=batch / t)


def rows():
    out = []
    for g, scale in (("v100", 4.0), ("h200", 1.0)):
        for p, f in (("fp32", 2.0), ("fp8", 1.0)):
            for b in (32, 1, 8):            # not in batch order: points are sorted
                if g == "v100" and p == "fp8":
                    out.append(failed_row(g, p, b, "v100 has no fp8 tensor-core ceiling"))
                else:
                    out.append(ok(g, p, b, scale * f * 1e-3 * (1 + b / 8)))
    return out


def test_lines_points_and_styles():
    ch = sweep_chart(rows(), title="t")
    assert ch.title == "t"
    assert [ln.label for ln in ch.lines] == ["v100 fp32", "h200 fp32", "h200 fp8"]   # v100 fp8 has no point
    assert [len(ln.points) for ln in ch.lines] == [3, 3, 3]
    for ln in ch.lines:
        assert [p.batch for p in ln.points] == [1, 8, 32]
        for p in ln.points:
            assert p.throughput_per_s == p.batch / p.time_s
    v100, h200_32, h200_8 = ch.lines
    assert v100.points[0].time_s == 4.0 * 2.0 * 1e-3 * (1 + 1 / 8)
    assert v100.color == GPU_COLORS[0] and h200_32.color == h200_8.color == GPU_COLORS[1]   # colour by GPU
    assert (v100.linestyle, v100.marker) == (h200_32.linestyle, h200_32.marker) == PRECISION_STYLES[0]
    assert (h200_8.linestyle, h200_8.marker) == PRECISION_STYLES[1]                       # style by precision
    assert ch.batches == (1, 8, 32)
    assert len(ch.omitted) == 3 and ch.omitted[0] == "v100 fp8 batch 32: v100 has no fp8 tensor-core ceiling"


def test_limits_hold_every_point():
    ch = sweep_chart(rows())
    assert ch.xlim[0] < 1 and ch.xlim[1] > 32
    times = [p.time_s for ln in ch.lines for p in ln.points]
    rates = [p.throughput_per_s for ln in ch.lines for p in ln.points]
    assert ch.time_ylim[0] <= min(times) and ch.time_ylim[1] >= max(times)
    assert ch.throughput_ylim[0] <= min(rates) and ch.throughput_ylim[1] >= max(rates)
    assert ch.time_ylim == (1e-4, 1e-1)      # whole decades around min / 1.5 and max x 1.5


def test_one_batch_and_no_batch():
    ch = sweep_chart([ok("h200", "fp16", 8, 1e-3), SweepRow("v100", "fp16", None, total_time_s=1e-3)])
    assert [len(ln.points) for ln in ch.lines] == [1] and ch.batches == (8,)
    assert ch.xlim[0] < 8 < ch.xlim[1] and ch.xlim[1] / ch.xlim[0] == pytest.approx(2.0)
    assert ch.omitted == ("v100 fp16 batch -: no batch size or time to place",)
    empty = sweep_chart([failed_row("v100", "fp8", 1, "x")])
    assert empty.lines == () and empty.batches == () and empty.omitted == ("v100 fp8 batch 1: x",)


@pytest.mark.parametrize("ext", [".png", ".svg"])
def test_draw_writes_file(tmp_path, ext):
    out = str(tmp_path / f"s{ext}")
    assert save_sweep_chart(sweep_chart(rows(), "t"), out) == out
    data = open(out, "rb").read()
    assert len(data) > 5000
    assert data.startswith(b"\x89PNG") if ext == ".png" else b"<svg" in data[:2000]
