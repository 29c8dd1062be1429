import json
import re

import pytest

from predictor.fitted import (bundled_calibration, channel_walk_units, gemm_wave, parse_calibration, wave_efficiency,
                              walk_waves)
from predictor.machine.profile import load_profile
from predictor.types import PredictorError


def test_bundled_fit_for_h200_and_transfer():
    own = bundled_calibration(load_profile("h200"))
    assert own is not None and own.transferred_from is None and own.name == "fitted:h200"
    moved = bundled_calibration(load_profile("v100"))
    assert moved.transferred_from == "h200" and "transferred" in moved.name


@pytest.mark.parametrize("tiles,sms,k,eff", [
    (132, 132, 0, 1.0),        # one full wave
    (133, 132, 0, 133 / 264),  # a second wave with one tile
    (6, 132, 768, 6 / 132),    # 6 tiles, K = 768: one slice of 512 at most, no split
    (6, 132, 2048, 24 / 132),  # 6 tiles, K split in 4 slices of 512
    (6, 132, 0, 6 / 132),
])
def test_wave_efficiency(tiles, sms, k, eff):
    assert wave_efficiency(tiles, sms, k) == pytest.approx(eff)


@pytest.mark.parametrize("gemm,precision,eff", [
    ((1, 128, 768, 768), "fp16", 24 / 132),     # 6 tiles of 128x128, 12 of 128x64, 24 of 64x64: the smallest wins
    ((1, 4096, 4096, 64), "fp16", 1024 / 1056),  # 1024 tiles of 128x128 in 8 waves beat 2048 of 128x64 in 16
    ((1, 128, 768, 768), "fp32", 24 / 132),     # SIMT: 64x64 only
    ((1, 4096, 4096, 64), "fp32", 4096 / 4224),
    (None, "fp16", 1.0),
])
def test_gemm_wave_picks_the_best_tile(gemm, precision, eff):
    assert gemm_wave(gemm, precision, 132) == pytest.approx(eff)


@pytest.mark.parametrize("doc,field", [
    ({"schema_version": 2}, "schema_version"),
    ({"schema_version": 1, "gpu": "x", "kernel_gap_s": 1e-6}, "classes"),
    ({"schema_version": 1, "gpu": "x", "kernel_gap_s": 1e-6, "classes": {"conv": {}}}, "classes"),
    ({"schema_version": 1, "gpu": "x", "kernel_gap_s": -1,
      "classes": {"default": {"*": {"t0_s": 1e-6, "eff_compute": 0.5, "eff_memory": 0.5}}}}, "kernel_gap_s"),
    ({"schema_version": 1, "gpu": "x", "kernel_gap_s": 1e-6,
      "classes": {"default": {"*": {"t0_s": 1e-6, "eff_compute": float("nan"), "eff_memory": 0.5}}}},
     "classes.default.*.eff_compute"),
])
def test_bad_calibration_names_field(doc, field):
    with pytest.raises(PredictorError, match=f"field '{field}"):
        parse_calibration(json.loads(json.dumps(doc)), "c.json")


def _doc(**extra):
    p = {"t0_s": 1e-6, "eff_compute": 1.0, "eff_memory": 1.0}
    return {"schema_version": 1, "gpu": "h200", "kernel_gap_s": 5e-7,
            "classes": {"default": {"*": p}, "layernorm": {"fp32": {**p, "row_s": extra.pop("row_s", 0.0)}}},
            **extra}


def _predict(doc, nodes, inputs, outputs, inits=None, precision="fp32"):
    from predictor.fitted import FittedCalibration
    from predictor.graph.loader import load_model_proto
    from predictor.predict import predict_graph
    from tests.helpers import make_model

    g = load_model_proto(make_model(nodes, inputs, outputs, inits))
    return predict_graph(g, load_profile("h200"), precision, FittedCalibration(parse_calibration(doc, "t")))


def test_layer_norm_row_cost():
    """rows / SMs x row_s on top of the roofline time: 1320 rows on the H200's 132 SMs at 1e-7 s = 1e-6 s."""
    from onnx import helper

    nodes = [helper.make_node("LayerNormalization", ["x", "s"], ["y"], name="ln")]
    args = (nodes, [("x", "float32", [1320, 64]), ("s", "float32", [64])], [("y", "float32", None)])
    base = _predict(_doc(), *args).ops[0]
    rowed = _predict(_doc(row_s=1e-7), *args).ops[0]
    assert rowed.time_s - base.time_s == pytest.approx(1e-6, rel=1e-9)
    assert rowed.level_time_s["latency"] == pytest.approx(1e-6 + 1e-6)  # t0 + rows


def _two_layer_lstm():
    import numpy as np
    from onnx import helper

    h = 8
    nodes = [helper.make_node("LSTM", ["x", "w1", "r1"], ["y1"], hidden_size=h, name="l1"),
             helper.make_node("Squeeze", ["y1", "ax"], ["y1s"], name="sq"),
             helper.make_node("LSTM", ["y1s", "w2", "r2"], ["y2"], hidden_size=h, name="l2")]
    inits = {"w1": np.zeros((1, 4 * h, 4), np.float32), "r1": np.zeros((1, 4 * h, h), np.float32),
             "w2": np.zeros((1, 4 * h, h), np.float32), "r2": np.zeros((1, 4 * h, h), np.float32),
             "ax": np.array([1], np.int64)}
    inputs = [("x", "float32", [6, 1, 4])] + [(k, "float32", list(v.shape)) for k, v in inits.items() if k != "ax"]
    return nodes, inputs, [("y2", "float32", None)], inits


def test_stacked_rnn_overlap_hides_fixed_costs():
    """The second layer loses rnn_overlap x (its kernels' t0 + gaps): 13 kernels x (1 + 0.5) us x 0.5."""
    base = {o.cost.name: o for o in _predict(_doc(), *_two_layer_lstm()).ops}
    hid = {o.cost.name: o for o in _predict(_doc(rnn_overlap=0.5), *_two_layer_lstm()).ops}
    assert hid["l1"].time_s == base["l1"].time_s
    assert base["l2"].time_s - hid["l2"].time_s == pytest.approx(0.5 * 13 * 1.5e-6, rel=1e-9)


def test_eager_recurrent_kernels_at_library_rate():
    """A recurrent layer's kernels after its first are issued at host_dispatch_s.library_kernel."""
    doc = _doc(host_dispatch_s={"kernel": 1e-4, "op": 0.0, "library_kernel": 1e-5})
    pred = _predict(doc, *_two_layer_lstm())
    # host-bound: per layer 1e-4 + 12 x 1e-5; the first layer's GPU time hides under the second's issue
    assert pred.eager_time_s == pytest.approx(2 * (1e-4 + 12 * 1e-5) + pred.ops[-1].time_s, rel=1e-9)


@pytest.mark.parametrize("walk,units", [(None, 0.0), ((16, 1000), 1000.0), ((132, 1000), 1000.0),
                                         ((133, 1000), 2000.0), ((960, 6272), 8 * 6272.0)])
def test_channel_walk_units(walk, units):
    """ceil(blocks / SMs) waves of one block's bytes: 16 channels take as long as 132 on 132 SMs."""
    assert channel_walk_units(walk, 132) == units
    assert walk_waves(walk, 132) == (units / walk[1] if walk else 0)


def test_block_s_prices_each_wave_of_walking_blocks():
    """A class's block_s adds ceil(blocks / SMs) x block_s to a walking kernel's fixed cost: 1000 planes of 128 bytes on
    132 SMs are 8 waves."""
    from dataclasses import replace

    from onnx import helper

    from predictor.fitted import FittedCalibration
    from predictor.graph.cost import cost_graph
    from predictor.graph.loader import load_model_proto
    from predictor.precision import policy
    from tests.helpers import make_model

    ins = [("x", "float32", [4, 16, 8, 8])] + [(k, "float32", [16]) for k in ("s", "b", "m", "v")]
    g = load_model_proto(make_model([helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"],
                                                      training_mode=1, name="bn")], ins, [("y", "float32", None)]))
    profile = load_profile("h200")
    cost = cost_graph(g.nodes, policy("fp32"), 15, graph_inputs=frozenset({"x"})).costs[0]
    assert cost.kernels == 1
    cost = replace(cost, work=replace(cost.work, channel_walk=(1000, 128)))
    base = {"t0_s": 1e-6, "eff_compute": 0.7, "eff_memory": 0.7, "row_s": 1e-11}
    times = []
    for block in (0.0, 1e-7):
        cal = FittedCalibration(parse_calibration(_doc(classes={
            "default": {"*": {"t0_s": 1e-6, "eff_compute": 0.5, "eff_memory": 0.5}},
            "norm_train": {"*": {**base, "block_s": block}}}), "test"))
        times.append(cal.predict_op(g.nodes[0], cost, profile, policy("fp32")).level_time_s["latency"])
    assert times[1] - times[0] == pytest.approx(8 * 1e-7, rel=1e-9)


def test_training_batch_norm_walks_its_channels():
    """A training-mode BatchNormalization has channel_walk (C, bytes per channel) and class norm_train; an inference
    one PyTorch's transform-kernel grid (blocks of the batch per channel, no per-byte walk) and class batchnorm."""
    from onnx import helper

    from predictor.graph.loader import load_model_proto
    from predictor.graph.cost import cost_graph
    from predictor.graph.opclass import kernel_class
    from predictor.precision import policy
    from tests.helpers import make_model

    ins = [("x", "float32", [4, 16, 8, 8])] + [(k, "float32", [16]) for k in ("s", "b", "m", "v")]
    for mode, walk, cls in ((1, (16, 4 * 64 * 4), "norm_train"), (0, (64, 0), "batchnorm")):
        g = load_model_proto(make_model([helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"],
                                                          training_mode=mode, name="bn")], ins, [("y", "float32", None)]))
        (node,) = g.nodes
        assert cost_graph(g.nodes, policy("fp32"), 15).costs[0].work.channel_walk == walk
        assert kernel_class(node) == cls


def test_inference_batch_norm_runs_pytorchs_transform_grid():
    """PyTorch's launch of batch_norm_transform_input_kernel: [4, 16, 8, 8] -> 64-thread blocks, one per (channel,
    image), one iteration; [32, 16, 112, 112] -> 512-thread blocks (4 per SM), 25 iterations of a 12,544-element
    plane; on 132 SMs 25 dependent steps (the 262,144 threads fit in one residency) and 4 waves of blocks."""
    from predictor.graph.ops.normalization import transform_grid
    from predictor.timing.features import loop_steps, walk_waves

    assert transform_grid((4, 16, 8, 8)) == {"thread_loop": (1, 4096, 2048), "channel_walk": (64, 0)}
    grid = transform_grid((32, 16, 112, 112))
    assert grid == {"thread_loop": (25, 262144, 2048), "channel_walk": (512, 0)}
    assert loop_steps(grid["thread_loop"], 132) == 25.0
    assert walk_waves(grid["channel_walk"], 132) == 4
    # many small planes: 64-thread blocks, a block per (channel, image) up to 256 K / C images per channel
    assert transform_grid((32, 1680, 7, 7)) == {"thread_loop": (1, 32 * 1680 * 64, 2048), "channel_walk": (53760, 0)}
    # a two-thread-row block where a plane is 32 elements or fewer: [32, 1280, 4, 4] -> 32 x 2 threads, 16 row pairs
    assert transform_grid((32, 1280, 4, 4)) == {"thread_loop": (1, 1280 * 16 * 64, 2048), "channel_walk": (20480, 0)}


def test_class_l2_efficiency_divides_the_l2_time():
    """eff_l2 0.25 makes a class's L2 time 4x the ERT-bandwidth time; HBM and L1 keep theirs."""
    from onnx import helper

    nodes = [helper.make_node("Relu", ["x"], ["y"], name="r")]
    args = (nodes, [("x", "float32", [1 << 20])], [("y", "float32", None)])
    base = _doc()
    slow = _doc()
    slow["classes"]["elementwise"] = {"*": {"t0_s": 1e-6, "eff_compute": 1.0, "eff_memory": 1.0, "eff_l2": 0.25}}
    a, b = _predict(base, *args).ops[0].level_time_s, _predict(slow, *args).ops[0].level_time_s
    assert b["L2"] == pytest.approx(4 * a["L2"], rel=1e-12)
    assert (b["L1"], b["HBM"]) == (a["L1"], a["HBM"])


def test_per_group_hidden_kernels_cost_t0_per_group():
    """A per-group entry adds count x groups kernels at its class's t0 and moves no bytes: 0.5 x 8 groups = 4
    kernels of the grouped class's 2 us, plus 4 graph gaps."""
    from onnx import helper

    nodes = [helper.make_node("Conv", ["x", "w"], ["y"], group=8, pads=[1, 1, 1, 1], name="g")]
    args = (nodes, [("x", "float32", [32, 64, 8, 8]), ("w", "float32", [64, 8, 3, 3])], [("y", "float32", None)])
    base = _doc()
    base["classes"]["grouped"] = {"*": {"t0_s": 2e-6, "eff_compute": 1.0, "eff_memory": 1.0}}
    hidden = {"hidden_kernels": {"Conv:grouped_batched": {"fp32": [
        {"kind": "grouped", "count": 0.5, "bytes_of": "none", "per_group": True}]}}}
    plain = _predict(base, *args).ops[0]
    split = _predict({**base, **hidden}, *args).ops[0]
    assert split.extra_kernels == ("grouped x4",)
    assert split.time_s - plain.time_s == pytest.approx(4 * (2e-6 + 5e-7), rel=1e-9)


@pytest.mark.parametrize("extra,field", [
    ({"hidden_kernels": {"Conv": {"fp32": [{"kind": "layout", "count": 1, "bytes_of": "none", "per_group": 1}]}}},
     "hidden_kernels.Conv.fp32[0].per_group"),
    ({"hidden_kernels": {"Conv": {"fp32": [{"kind": "layout", "count": 1, "bytes_of": "some"}]}}},
     "hidden_kernels.Conv.fp32[0].bytes_of"),
    ({"hidden_kernels": {"Conv": {"fp32": [{"kind": "layout", "count": 1, "bytes_of": "io", "per": 2}]}}},
     "hidden_kernels.Conv.fp32[0]"),
    ({"rnn_overlap": 1.5}, "rnn_overlap"),
    ({"classes": {"default": {"*": {"t0_s": 1e-6, "eff_compute": 1.0, "eff_memory": 1.0, "eff_l2": 1.5}}}},
     "classes.default.*.eff_l2"),
    ({"row_s": -1.0}, "classes.layernorm.fp32.row_s"),
])
def test_bad_new_fields_named(extra, field):
    with pytest.raises(PredictorError, match=re.escape(f"field '{field}'")):
        parse_calibration(_doc(**extra), "c.json")


def test_bundled_fit_has_row_cost_and_grouped_class():
    cal = bundled_calibration(load_profile("h200"))
    assert all(cal.params("layernorm", p).row_s > 0 for p in ("fp32", "tf32", "fp16", "bf16"))
    assert "grouped" in cal.classes and 0 < cal.rnn_overlap < 1


def _two_layer_bidirectional_lstm():
    import numpy as np
    from onnx import helper

    h = 8
    nodes = [helper.make_node("LSTM", ["x", "w1", "r1"], ["y1"], hidden_size=h, direction="bidirectional", name="l1"),
             helper.make_node("Reshape", ["y1", "shp"], ["y1r"], name="rs"),
             helper.make_node("LSTM", ["y1r", "w2", "r2"], ["y2"], hidden_size=h, direction="bidirectional", name="l2")]
    inits = {"w1": np.zeros((2, 4 * h, 4), np.float32), "r1": np.zeros((2, 4 * h, h), np.float32),
             "w2": np.zeros((2, 4 * h, 2 * h), np.float32), "r2": np.zeros((2, 4 * h, h), np.float32),
             "shp": np.array([6, 1, 2 * h], np.int64)}
    inputs = [("x", "float32", [6, 1, 4])] + [(k, "float32", list(v.shape)) for k, v in inits.items() if k != "shp"]
    return nodes, inputs, [("y2", "float32", None)], inits


def test_bidirectional_layers_do_not_overlap_the_next():
    """A bidirectional layer's step-0 output needs its backward direction's last step: no stacked overlap."""
    base = {o.cost.name: o.time_s for o in _predict(_doc(), *_two_layer_bidirectional_lstm()).ops}
    ov = {o.cost.name: o.time_s for o in _predict(_doc(rnn_overlap=0.5), *_two_layer_bidirectional_lstm()).ops}
    assert ov == base


def test_bidirectional_directions_overlap_fixed_costs():
    """Each bidirectional layer loses rnn_bidir_overlap x half its fixed costs: 2 x 13 kernels x (1 + 0.5) us / 2."""
    base = {o.cost.name: o for o in _predict(_doc(), *_two_layer_bidirectional_lstm()).ops}
    ov = {o.cost.name: o for o in _predict(_doc(rnn_bidir_overlap=0.5), *_two_layer_bidirectional_lstm()).ops}
    assert base["l1"].cost.kernels == 26
    for name in ("l1", "l2"):
        assert base[name].time_s - ov[name].time_s == pytest.approx(0.5 * 0.5 * 26 * 1.5e-6, rel=1e-9)
    # a unidirectional layer is untouched
    uni = {o.cost.name: o.time_s for o in _predict(_doc(rnn_bidir_overlap=0.5), *_two_layer_lstm()).ops}
    assert uni == {o.cost.name: o.time_s for o in _predict(_doc(), *_two_layer_lstm()).ops}


def test_rnn_bidir_overlap_bounded():
    with pytest.raises(PredictorError, match="rnn_bidir_overlap"):
        parse_calibration(_doc(rnn_bidir_overlap=0.99), "c.json")


def test_a_calibration_file_fitted_on_another_gpu_is_transferred_as_the_bundled_one():
    """--calibration FILE with --gpu h100: the H200 fit in the file is carried to the H100 (ceilings scaled), as the
    bundled fit is, not applied to the H100's datasheet ceilings as if fitted there."""
    import os

    from predictor.calibrate import calibration_named
    from predictor.fitted import DATA_DIR, load_calibration

    h100, h200 = load_profile("h100"), load_profile("h200")
    path = os.path.join(DATA_DIR, "calibration_h200.json")
    assert load_calibration(path).transferred_from is None
    assert load_calibration(path, h200).transferred_from is None
    cal = calibration_named(h100, path)
    assert cal.transferred_from == "h200" and "transferred" in cal.name
    assert cal.transfer_for(h100) is not None


def test_one_row_layers_take_the_gemv_class_at_32_bit_and_the_gemm_class_at_16():
    """A classifier head at batch 1: its fixed cost is class gemv's at fp32/tf32, class gemm's at fp16/bf16 (cuBLAS
    runs no gemv kernel there; graph/opclass.GEMV_PRECISIONS)."""
    import numpy as np
    from onnx import helper

    doc = _doc(classes={"default": {"*": {"t0_s": 1e-6, "eff_compute": 1.0, "eff_memory": 1.0}},
                        "gemv": {"*": {"t0_s": 2e-6, "eff_compute": 1.0, "eff_memory": 1.0}},
                        "gemm": {"*": {"t0_s": 5e-6, "eff_compute": 1.0, "eff_memory": 1.0}}})
    nodes = [helper.make_node("MatMul", ["x", "w"], ["y"], name="fc")]
    inits = {"w": np.ones((64, 16), np.float32)}
    for precision, t0 in (("fp32", 2e-6), ("tf32", 2e-6), ("fp16", 5e-6), ("bf16", 5e-6)):
        p = _predict(doc, nodes, [("x", "float32", [1, 64])], [("y", "float32", None)], inits, precision)
        assert p.ops[0].level_time_s["latency"] == pytest.approx(t0, rel=1e-9), precision
