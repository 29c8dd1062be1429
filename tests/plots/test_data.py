"""Chart data of predictor.plots.data: positions, ceilings, labels, vertex arithmetic (no pixels)."""
import math
from types import MappingProxyType

import pytest

from predictor.machine.profile import load_profile
from predictor.plots.data import (MAX_AREA, TOP_ARROWS, TOP_LABELS, OpSample, Series, class_color, marker_area,
                                  place_labels, roofline_chart, short_name, time_chart, vertex)

H200 = load_profile("h200")
TENSOR = H200.peak_flops_per_s[next(k for k in H200.peak_flops_per_s if k[0].value == "fp16" and k[1].value == "tensor")]
HBM = H200.bandwidth_Bps[next(k for k in H200.bandwidth_Bps if k.value == "HBM")]


def op(name, op_type, flops, l1, l2, hbm, t, unit=("fp16", "tensor")):
    peak = TENSOR if unit == ("fp16", "tensor") else 64.0e12
    return OpSample(name, op_type, flops, MappingProxyType({"L1": l1, "L2": l2, "HBM": hbm}), t,
                    compute_time_s=flops / peak if flops else 0.0,
                    flops_by_unit=MappingProxyType({unit: flops} if flops else {}))


def series(label="predicted", n=10, scale=1.0):
    ops = [op(f"/layer{i}/conv/Conv", "Conv", 1e9 * (i + 1), 4e7, 2e7, 1e7, scale * 1e-5 * (i + 1)) for i in range(n)]
    ops.append(op("/relu/Relu", "Relu", 1e6, 4e6, 4e6, 4e6, 2e-6, ("fp16", "cuda")))
    ops.append(op("/cat/Concat", "Concat", 0.0, 1e6, 1e6, 1e6, 1e-6))
    flops = sum(o.flops for o in ops)
    net = OpSample("network", "network", flops,
                   MappingProxyType({lv: sum(o.bytes[lv] for o in ops) for lv in ("L1", "L2", "HBM")}),
                   sum(o.time_s for o in ops), compute_time_s=sum(o.compute_time_s for o in ops),
                   flops_by_unit=MappingProxyType({("fp16", "tensor"): flops - 1e6, ("fp16", "cuda"): 1e6}))
    return Series(label, tuple(ops), net)


def test_hierarchical_positions_and_ceilings():
    s = series()
    ch = roofline_chart([s], H200, "fp16", title="t")
    comp = {c.key: c.value for c in ch.ceilings if c.kind == "compute"}
    mem = {c.key: c.value for c in ch.ceilings if c.kind == "memory"}
    assert comp["fp16/tensor"] == TENSOR and "fp16/cuda" in comp          # both units of the precision
    assert set(mem) == {"L1", "L2", "HBM"} and mem["HBM"] == HBM
    assert [c.kind for c in ch.ceilings][:len(comp)] == ["compute"] * len(comp)
    p = next(p for p in ch.points if p.name == "/layer0/conv/Conv")
    assert p.flops_per_s == pytest.approx(1e9 / 1e-5)
    assert p.intensity == {"L1": 1e9 / 4e7, "L2": 1e9 / 2e7, "HBM": 1e9 / 1e7}
    assert p.op_class == "conv" and p.color == class_color("conv")
    assert p.share == pytest.approx(1e-5 / s.network.time_s)
    assert p.area == pytest.approx(marker_area(p.share)) and p.area <= MAX_AREA
    # the Concat has no FLOPs: not placeable, counted
    assert "/cat/Concat" not in {p.name for p in ch.points} and ch.omitted == {"predicted": 1}
    (net,) = ch.networks
    assert net.flops_per_s == pytest.approx(s.network.flops / s.network.time_s)
    assert net.intensity["HBM"] == pytest.approx(s.network.flops / s.network.bytes["HBM"])
    # every point and ceiling inside the axes
    for q in ch.points + ch.networks:
        for x in q.intensity.values():
            assert ch.xlim[0] < x < ch.xlim[1]
        assert ch.ylim[0] < q.flops_per_s < ch.ylim[1]
    assert ch.ylim[1] > max(comp.values())


def test_labels_top_ops_only_numbered_and_apart():
    s = series(n=12)
    ch = roofline_chart([s], H200, "fp16")
    labelled = sorted((p for p in ch.points if p.label), key=lambda p: int(p.label))
    assert len(labelled) == TOP_LABELS == len(ch.keys)
    # the largest times first: conv 11, 10, ...
    assert [p.name for p in labelled] == [f"/layer{i}/conv/Conv" for i in range(11, 5, -1)]
    assert ch.keys[0].label == "1" and ch.keys[0].text.startswith("layer11/conv/Conv")
    assert all(p.label_offset != (0.0, 0.0) for p in labelled)


def test_place_labels_avoids_overlap():
    pos = [(10.0, 1e12)] * 4 + [(11.0, 1.05e12)]
    offs = place_labels(pos, (1.0, 100.0), (1e10, 1e14))
    assert len(offs) == 5 and len(set(offs)) == 5          # same spot: five different directions
    assert place_labels(pos, (1.0, 100.0), (1e10, 1e14)) == offs   # deterministic


def test_short_name():
    assert short_name("/layer4/layer4.0/conv2/Conv") == "layer4.0/conv2/Conv"
    assert short_name("x" * 50, 20).startswith("...") and len(short_name("x" * 50, 20)) == 20


@pytest.mark.parametrize("flops,nbytes,t", [(1e10, 1e6, 1e-4), (1e6, 1e8, 1e-4), (1e9, 0.0, 1e-5)])
def test_vertex_arithmetic(flops, nbytes, t):
    peak, bw = 1e15, 4e12
    (vx, vy), compute_side = vertex(flops, nbytes, t, peak, bw)
    if nbytes == 0 or flops / nbytes >= peak / bw:
        assert compute_side and (vx, vy) == (nbytes, t * peak)
    else:
        assert not compute_side and (vx, vy) == (t * bw, flops)


def test_time_chart_points_vertex_box_and_diagonals():
    s = series()
    ch = time_chart([s], H200, "fp16")
    assert ch.bandwidth == HBM and ch.peak == TENSOR
    assert {round(d.balance, 6) for d in ch.diagonals} >= {round(TENSOR / HBM, 6)}
    eager, graph = ch.launch_boxes
    assert eager.bytes == pytest.approx(H200.launch_overhead_s * HBM)
    assert eager.flops == pytest.approx(H200.launch_overhead_s * TENSOR)
    assert graph.overhead_s == H200.kernel_gap_s and graph.invocations == 1
    conv = next(p for p in ch.points if p.name == "/layer0/conv/Conv")
    assert (conv.bytes, conv.flops) == (1e7, 1e9)
    assert conv.peak_flops_per_s == pytest.approx(TENSOR)
    # 1e9 / 1e7 = 100 FLOP/B < 194: memory side, the segment runs to bytes = T x BW
    assert not conv.compute_side and conv.vertex == pytest.approx((1e-5 * HBM, 1e9))
    # the segment's length in decades is the time above the ideal
    assert math.log10(conv.vertex[0] / conv.bytes) == pytest.approx(math.log10(conv.time_s / conv.ideal_time_s))
    relu = next(p for p in ch.points if p.name == "/relu/Relu")
    assert relu.peak_flops_per_s == pytest.approx(64e12)        # its own (CUDA-core) ceiling
    assert "/cat/Concat" not in {p.name for p in ch.points}
    assert "/cat/Concat" in {p.name for p in ch.time_points}    # still on the time vs bytes panel
    assert sum(1 for p in ch.points if p.label) == TOP_LABELS


def test_two_series_arrows_link_same_op():
    a, b = series("fp32", scale=2.0), series("fp16")
    ch = time_chart([a, b], H200, "fp16")
    assert len(ch.arrows) == min(TOP_ARROWS, 11)
    pa = {p.name: p for p in ch.points if p.series == "fp32"}
    pb = {p.name: p for p in ch.points if p.series == "fp16"}
    for ar in ch.arrows:
        assert ar.start == (pa[ar.name].bytes, pa[ar.name].flops) and ar.end == (pb[ar.name].bytes, pb[ar.name].flops)
    rc = roofline_chart([a, b], H200, "fp16")
    assert rc.series == ("fp32", "fp16") and len(rc.networks) == 2
    net = [ar for ar in rc.arrows if ar.name == "network"]
    assert len(net) == 1
    top = rc.arrows[0]
    assert top.name == "/layer9/conv/Conv"
    assert top.start == (1e9 * 10 / 1e7, 1e9 * 10 / 2e-4) and top.end == (1e9 * 10 / 1e7, 1e9 * 10 / 1e-4)


def test_series_from_prediction_matches_prediction():
    from predictor.fitted import bundled_calibration
    from predictor.plots import series_from_prediction
    from predictor.predict import predict_file

    pred = predict_file("examples/lstm.onnx", H200, precision="fp16", batch=4, calibration=bundled_calibration(H200))
    s = series_from_prediction(pred, H200)
    assert s.network.time_s == pytest.approx(pred.total_time_s)
    assert s.network.flops == pytest.approx(pred.total_flops)
    assert len(s.ops) == sum(1 for o in pred.ops if o.time_s > 0)
    assert sum(o.time_s for o in s.ops) == pytest.approx(pred.total_time_s)
