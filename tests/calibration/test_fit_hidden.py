"""The main fit's hidden kernels: which extra kernels move a node's activations, and how an entry is written."""
import pytest

from calibration.fit.fit import MOVING_MIN_IO_S, _hidden_list, _host_driven, hidden_count, moving_kernels
from predictor.types import Node, frozen_map


def test_moving_kernels_by_duration_against_one_pass():
    # own kernel 30 us; a 10 us transform moves the activations (>= half of a 12 us pass), 1.2 and 2 us ones do not
    assert moving_kernels([1.2e-6, 30e-6, 10e-6, 2e-6], 1, 12e-6) == 1
    assert moving_kernels([30e-6, 6e-6, 6e-6], 1, 12e-6) == 2
    assert moving_kernels([30e-6, 5.9e-6], 1, 12e-6) == 0
    # a pass too short to tell a transform from a fixed-cost kernel: no verdict
    assert moving_kernels([30e-6, 10e-6], 1, MOVING_MIN_IO_S * 0.99) is None


def test_hidden_list_splits_moving_and_fixed_kernels():
    assert _hidden_list({"count": 2.0, "moving": 0.5}) == [
        {"kind": "layout", "count": 0.5, "bytes_of": "io"}, {"kind": "layout", "count": 1.5, "bytes_of": "none"}]
    assert _hidden_list({"count": 2.0, "moving": 0.0}) == [{"kind": "layout", "count": 2.0, "bytes_of": "none"}]
    assert _hidden_list({"count": 0.0, "moving": 0.0}) == []
    assert _hidden_list(1.25) == [{"kind": "layout", "count": 1.25, "bytes_of": "io"}]


def test_hidden_count_of_each_entry_form():
    node = Node(name="c", op_type="Conv", domain="", inputs=(), outputs=(), attrs=frozen_map({"group": 4}))
    assert hidden_count({"Conv": {"fp16": {"count": 2.86, "moving": 1.58}}}, node, "fp16") == (2.86, 1.58)
    assert hidden_count({"Conv": {"fp16": 1.1}}, node, "fp16") == (1.1, 1.1)
    per_group = {"kind": "grouped", "count": 0.5, "bytes_of": "none", "per_group": True}
    assert hidden_count({"Conv": {"fp32": per_group}}, node, "fp32") == (2.0, 0.0)
    assert hidden_count({}, node, "fp32") == (0.0, 0.0)


def test_autocast_batch_norm_parameter_kernels_are_fixed_cost(tmp_path, monkeypatch):
    import json

    from calibration.fit import fit as fit_mod

    monkeypatch.setattr(fit_mod, "_zoo_split", lambda name: "train")

    def bn(scope, main_us):  # the transform over the activations, then two per-channel parameter kernels
        return [{"module_path": scope, "aten_op": "aten::batch_norm", "leaf_op": "x", "duration_us": d}
                for d in (main_us, 1.2, 2.0)]

    rows = bn("bn1", 30.0) + bn("bn2", 20.0) + bn("bn3", 12.0) + bn("bn4", 3.0)  # bn4: too short to judge
    path = tmp_path / "amp_kernels.json"
    path.write_text(json.dumps({"cases": [{"network": "n", "mode": "amp_bf16", "rows": rows}]}))
    assert fit_mod.learn_autocast_hidden(path) == {
        "BatchNormalization:fp32_params": {"bf16": {"count": 2.0, "moving": 0.0}}}


def test_host_driven_scopes_teach_no_hidden_kernels():
    from types import SimpleNamespace as K

    pad = [K(name="void at::native::reflection_pad1d_out_kernel<c10::Half>"), K(name="Memcpy DtoH (Device -> Pinned)"),
           K(name="void at::native::vectorized_elementwise_kernel<2, at::native::CUDAFunctor_add<long>>")]
    assert _host_driven(pad) and not _host_driven(pad[:1] + pad[2:])


def test_replay_gap_is_the_batch_one_replay_time_beyond_the_kernel_sum():
    from calibration.fit.dataset import Case, KernelRow
    from calibration.fit.fit import replay_gap_s

    def case(net, batch, ref_s, source="replay_median"):
        return Case(net, "fp32", batch, "train", "cnn", ref_s, source, (), float("nan"), 0, None, "")

    rows = [KernelRow("k", 2e-6, "m", "aten::relu")] * 10  # 20 us of kernels
    kernels = {("a", "fp32", 1): rows, ("b", "fp32", 1): rows, ("c", "fp32", 1): rows, ("d", "fp32", 32): rows,
               ("e", "fp32", 1): rows}
    cases = [case("a", 1, 22e-6), case("b", 1, 23e-6), case("c", 1, 26e-6),  # 0.2, 0.3, 0.6 us per kernel
             case("d", 32, 10e-6),  # batch 32: left out
             case("e", 1, 90e-6, "eager_kernel_sum+launch")]  # not a replay: left out
    assert replay_gap_s(cases, kernels) == pytest.approx(0.3e-6)
    assert replay_gap_s([], kernels) == 0.0


def test_attention_extra_kernels_are_fixed_cost():
    """Around a fused attention call the runtime's extra kernels (workspace memset, mask padding, a relative-position
    gather) never pass over q, k, v: the fit prices them at a fixed cost, and the bundled calibration holds no moving
    share for them (a decode step's k and v are the whole KV cache)."""
    import json
    from pathlib import Path

    from calibration.fit.fit import FIXED_COST_HIDDEN

    assert "Attention" in FIXED_COST_HIDDEN
    doc = json.loads((Path(__file__).resolve().parents[2] / "predictor" / "data" / "calibration_h200.json").read_text())
    entries = [h for by_p in (doc["hidden_kernels"]["Attention"],) for hs in by_p.values() for h in hs]
    assert entries and all(h["bytes_of"] == "none" for h in entries)
