"""Peak memory of a step: the allocator replay, a 2-layer MLP by hand, the largest batch, the profiles."""
import pytest

from predictor.machine.profile import load_profile
from predictor.train import memory as mem
from predictor.train.step import estimate_memory
from tests.train.util import mlp, plan, train

MiB = 1 << 20


def test_replay_allocates_at_first_write_and_frees_after_last_read():
    ev = [mem.Event("a", "forward", (), ("x",)), mem.Event("b", "forward", ("x",), ("y",)),
          mem.Event("c", "backward", ("y",), ("g",), workspace=100.0), mem.Event("d", "backward", ("g",), ())]
    sizes = {"x": 1000.0, "y": 512.0, "g": 2048.0}
    r = mem.replay(ev, sizes, {}, {"p": ("parameters", 512.0)}, {"g"}, lambda ph, b: "activations")
    # static 512; a: +1024 (1000 rounded up to the 512-byte block); b: +512 then x freed; c: +2048, workspace 100
    assert r.step_start_bytes == 512
    assert r.peak_bytes == 512 + 512 + 2048 + 100 and r.peak_at == "backward: c"
    assert [t for _, t in r.trace] == [1536, 2048, 3172, 2560]  # y freed after c; g persistent


def test_aliases_share_one_buffer():
    ev = [mem.Event("a", "forward", (), ("x",)), mem.Event("view", "forward", ("x",), ()),
          mem.Event("b", "forward", ("v",), ("y",))]
    r = mem.replay(ev, {"x": 512.0, "y": 512.0}, {"v": "x"}, {}, (), lambda ph, b: "activations")
    assert r.peak_bytes == 1024  # x lives until its view v is read by b


def test_mlp_peak_by_hand():
    """fp32, AdamW fused, MSE, batch 128, 256 -> 512 -> 128 on a V100 (cuBLAS workspaces 2 x 8.125 MiB).

    Static: parameters 524288 + 2048 + 262144 + 512 = 788992; AdamW state 2 x 788992 + 4 step counters of one
    512-byte block each = 1580032; inputs x 131072 + target 65536; workspace 2 x 8519680 = 17039360:
    19604992 in all. The peak is fc1's bias gradient: h1's gradient (262144) and every parameter gradient
    (788992) live, the forward activations gone: 19604992 + 262144 + 788992 = 20656128.
    """
    p = plan(mlp())
    m, _ = estimate_memory(p, load_profile("v100"))
    assert m.step_start_bytes == 19604992
    assert m.peak_bytes == 20656128
    assert m.peak_at == "backward: fc1::bgrad"
    assert m.components["gradients"] == 788992 and m.components["activation_grads"] == 262144
    assert m.components["activations"] == 0
    assert m.totals["saved_activations"] == 262144 + 65536  # relu output (fc2's A, relu's y) and y (the loss's x)
    assert m.after_backward_bytes == 19604992 + 788992


def test_largest_batch_from_two_batches():
    # per kernel a + b x batch; the smallest (usable - a) / b wins
    t1 = [("k1", 100.0), ("k2", 150.0)]
    t2 = [("k1", 200.0), ("k2", 160.0)]  # k1: 0 + 50 b (b1 = 2, b2 = 4); k2: 140 + 5 b
    assert mem.max_batch(2, t1, 4, t2, 1000.0) == 20
    assert mem.max_batch(2, [("k", 10.0)], 4, [("k", 10.0)], 5.0) == 0  # does not grow and does not fit
    assert mem.max_batch(2, [("k", 10.0)], 4, [("k", 10.0)], 50.0) is None


def test_mlp_max_batch_and_fit():
    pred = train(mlp(), gpu="v100", max_batch_graph=mlp(n=256), batch=128, loss="mse")
    m = pred.memory
    assert m.fits and m.capacity_bytes == 16 * 1024 ** 3 and m.usable_bytes == 15 * 1024 ** 3
    # the kernel whose bytes grow fastest binds: relu's backward, with per sample x (1024 B), the target (512),
    # relu's output (2048) and the gradients of relu's output and input (2 x 2048): 7680 B; at batch 128 it
    # has 20654080 live, so a = 20654080 - 128 x 7680 = 19671040 and (15 GiB - a) // 7680 = 2094590
    assert m.max_batch == (15 * 1024 ** 3 - 19671040) // 7680 == 2094590


def test_memory_bytes_of_the_bundled_profiles():
    assert load_profile("h200").memory_bytes == 143771 * MiB  # nvidia-smi memory.total
    assert load_profile("h200").provenance["memory_bytes"] == "env-2026-12-02"
    assert load_profile("v100").memory_bytes == 16 * 1024 ** 3
    assert load_profile("a100").memory_bytes == load_profile("h100").memory_bytes == 80 * 1024 ** 3
    assert load_profile("h200").to_json()["memory_bytes"] == 143771 * MiB


def test_cublas_workspace_per_architecture():
    assert mem.cublas_workspace("hopper") == 2 * 32 * MiB
    assert mem.cublas_workspace("volta") == 2 * (8 * MiB + 128 * 1024)


@pytest.mark.parametrize("precision, master", [("fp32", 0), ("fp16", 4)])
def test_master_weights_only_with_16_bit_storage(precision, master):
    p = plan(mlp(), precision=precision)
    m, _ = estimate_memory(p, load_profile("v100"))
    assert m.totals["master_weights"] == master * (131072 + 512 + 65536 + 128)
