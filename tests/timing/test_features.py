"""Kernel features (predictor/timing/features.py): the fused attention kernels' tiles and waves, exact values."""
import pytest

from predictor.graph.cost import cost_graph
from predictor.graph.loader import load_model_proto
from predictor.machine.profile import load_profile
from predictor.precision import policy
from predictor.roofline import level_times_s
from predictor.timing.features import attention_wave, kernel_features
from tests.graph.test_runtime import _sdpa_graph
from tests.helpers import make_model


def test_attention_wave_pads_tiles_and_counts_blocks():
    # ViT-B/16 at batch 1: 12 heads x ceil(197 / 128) = 24 blocks on 132 SMs (24/132 busy); 197 -> 256 on both sides
    assert attention_wave((12, 197, 64, 197), 132) == pytest.approx((256 / 197) ** 2 * 132 / 24, rel=1e-12)
    # batch 32: 768 blocks = 6 waves of 132 (768 / 792 busy)
    assert attention_wave((384, 197, 64, 197), 132) == pytest.approx((256 / 197) ** 2 * 792 / 768, rel=1e-12)
    # short sequences take power-of-two tiles: 50 query rows -> 64, 49 keys -> 64
    assert attention_wave((132, 50, 64, 49), 132) == pytest.approx((64 / 50) * (64 / 49), rel=1e-12)
    # long prefill: 16 heads x 64 blocks = 1024 blocks, 8 waves (1024 / 1056 busy), no padding
    assert attention_wave((16, 8192, 64, 8192), 132) == pytest.approx(1056 / 1024, rel=1e-12)
    # decoding (one query row): the keys are split over blocks, no padding and full waves
    assert attention_wave((32, 1, 64, 2048), 132) == 1.0


def test_runtime_fused_attention_carries_its_tiles():
    """The runtime's SDPA pattern gives the fused kernel the (B x H, Sq, Dv, Skv) of its P V product; its features hold
    the padding and waves: q (1, 2, 40, 8) -> 2 heads x 1 block of 64 rows on 132 SMs, 40 rows and keys padded to 64."""
    nodes, _, outputs, inits = _sdpa_graph()
    inputs = [("q", "float32", [1, 2, 40, 8]), ("kt", "float32", [1, 2, 8, 40]), ("v", "float32", [1, 2, 40, 8])]
    g = load_model_proto(make_model(nodes, inputs, outputs, inits), batch=None)
    gc = cost_graph(g.nodes, policy("fp16"), 17, graph_inputs=frozenset(t.name for t in g.inputs))
    fused = next(c for c in gc.costs if c.name == "mm2")
    assert fused.work.attention_tiles == (2, 40, 8, 40)
    prof = load_profile("h200")
    shape = (64 / 40) ** 2 * prof.sm_count / 2
    assert attention_wave((2, 40, 8, 40), prof.sm_count) == pytest.approx(shape, rel=1e-12)
    ideal = level_times_s(fused, prof, 0.0)["compute"]
    assert kernel_features(fused, prof, "fp16").compute_s == pytest.approx(ideal * shape, rel=1e-12)
