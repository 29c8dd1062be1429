"""PyTorch's multi_tensor_apply launch packing, and the fused AdamW launches of the measured networks."""
import pytest

from predictor.train.multitensor import CHUNK, MAX_BLOCKS, launches


def test_tensor_table_limits():
    assert launches([1] * 36, 4) == 1        # 36 one-chunk tensors: one full table at depth 4
    assert launches([1] * 37, 4) == 2
    assert launches([1] * 110, 1) == 1 and launches([1] * 111, 1) == 2
    assert launches([1] * 96, 1, scalar_list=True) == 1 and launches([1] * 97, 1, scalar_list=True) == 2
    assert launches([], 4) == 0 and launches([0, 0], 1) == 0


def test_block_table_limit_carries_a_tensor_over():
    assert launches([CHUNK * MAX_BLOCKS], 4) == 1
    assert launches([CHUNK * MAX_BLOCKS + 1], 4) == 2   # 321 chunks: a full launch, then the last chunk
    assert launches([CHUNK * 200, CHUNK * 200], 4) == 2  # 320 blocks, the second tensor carried over
    assert launches([CHUNK * 1000], 1) == 4              # ceil(1000 / 320)


def _param_numels(name):
    from predictor.graph.loader import load
    from predictor.machine.profile import load_profile
    from predictor.precision import policy
    from predictor.predict import predict_graph
    from predictor.train.step import plan_step

    g = load(f"calibration/data/networks/onnx/{name}.torchscript.onnx", batch=2)
    p = plan_step(g, predict_graph(g, load_profile("h200"), "fp32").ops, policy("fp32"), "adamw", "fused", "mse")
    return p, [t.numel for t in p.autograd.params.values()]


@pytest.mark.parametrize("name, n_params, measured", [
    # parameter tensors and elements as torch counted them (n_params in the measured training.json), and the
    # optimizer-phase kernels measured on the H200: fused AdamW launches + the step-counter increment
    ("resnet18", 62, 3), ("resnet50", 161, 7), ("bert_base", 197, 9), ("gpt2", 148, 9),
])
def test_fused_adamw_kernels_match_the_measured_networks(name, n_params, measured):
    p, numels = _param_numels(name)
    assert len(numels) == n_params
    assert sum(k.work.kernels for k in p.optimizer) == measured
