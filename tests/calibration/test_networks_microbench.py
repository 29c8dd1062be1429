"""Tests of the microbenchmark case table, cost formulas and options (no GPU needed)."""
import json

import pytest

from calibration.networks import microbench as mb


def test_gemm_and_conv_costs():
    assert mb.gemm_cost(2, 3, 4, 2) == (48.0, 2.0 * (8 + 12 + 6))
    flops, nbytes, ho, wo = mb.conv_cost(1, 3, 224, 224, 64, 7, 2, 1, 4)
    assert (ho, wo) == (112, 112)
    assert flops == 2.0 * 64 * 112 * 112 * 3 * 49
    assert nbytes == 4 * (3 * 224 * 224 + 64 * 3 * 49 + 64 * 112 * 112)
    flops_dw, _, _, _ = mb.conv_cost(1, 32, 112, 112, 32, 3, 1, 32, 2)
    assert flops_dw == 2.0 * 32 * 112 * 112 * 9


def test_rnn_and_sdpa_costs():
    f, _ = mb.rnn_cost("lstm", 1, 1, 10, 20, 1, 4)
    assert f == 2.0 * 4 * 20 * 30
    f2, _ = mb.rnn_cost("lstm", 1, 1, 10, 20, 2, 4)
    assert f2 == f + 2.0 * 4 * 20 * 40
    full, b = mb.sdpa_cost(1, 12, 128, 64, False, 2)
    assert full == 4.0 * 12 * 128 * 128 * 64 and b == 2 * 4 * 12 * 128 * 64
    assert mb.sdpa_cost(1, 12, 128, 64, True, 2)[0] == full / 2


def test_enumerate_cases():
    cases = mb.enumerate_cases(tuple(mb.FAMILIES), mb.PRECISIONS)
    assert len(cases) > 500
    fams = {c.family for c in cases}
    assert fams == set(mb.FAMILIES)
    for c in cases:
        assert c.precision in mb.PRECISIONS and c.flops >= 0 and c.bytes > 0 and callable(c.setup)
        json.dumps(c.params)
        if c.precision == "tf32":
            assert c.family in mb.TENSOR_CORE_FAMILIES
    # within a family no call twice (a seeded draw of one family may repeat another family's fixed shape: sdpa_broad's
    # B1 H12 S1024 D64 is sdpa's; both measure the same call, and readers keep one row per call)
    keys = [(c.family, c.key) for c in cases]
    assert len(keys) == len(set(keys)), "duplicate cases"
    sweep = [c for c in cases if c.family == "conv_sweep"]
    assert {c.precision for c in sweep} == {"fp32", "fp16"} and len(sweep) == 2 * 108
    assert all(c.params["H"] == 112 and c.params["C"] == 64 for c in sweep)
    sizes = {c.params["tensor_bytes"] for c in cases if c.family == "elementwise" and c.precision == "fp32"}
    assert min(sizes) <= 1000 and max(sizes) >= 0.9e9


def test_subsample_and_args(tmp_path):
    cases = mb.enumerate_cases(("gemm",), ("fp16",))
    sub = mb.subsample(cases, 5)
    assert len(sub) == 5 and sub[0] is cases[0]
    assert mb.subsample(cases, 0) == cases
    a = mb.parse_args(["--out", str(tmp_path), "--families", "gemm,sdpa", "--precisions", "bf16"])
    assert a.families == ("gemm", "sdpa") and a.precisions == ("bf16",)
    with pytest.raises(SystemExit):
        mb.parse_args(["--out", str(tmp_path), "--families", "fft"])


def test_summary_and_csv(tmp_path):
    rows = [{"op": "matmul", "family": "gemm", "precision": "bf16", "params": "{}", "flops": 2e12,
             "bytes": 1e9, "time_s": 0.004, "method": "events"},
            {"op": "matmul", "family": "gemm", "precision": "bf16", "params": "{}", "flops": 1.0,
             "bytes": 1.0, "error": "OutOfMemoryError"}]
    table = mb.summary_table(rows)
    assert "500.0" in table and "gemm" in table
    mb.append_csv(tmp_path / "m.csv", rows)
    mb.append_csv(tmp_path / "m.csv", rows[:1])
    lines = (tmp_path / "m.csv").read_text().splitlines()
    assert lines[0].split(",")[:3] == ["op", "family", "precision"] and len(lines) == 4


def test_dry_run_cpu_two_cases(tmp_path):
    pytest.importorskip("torch")
    from calibration.networks import gpu_common

    try:
        rc = mb.main(["--out", str(tmp_path), "--families", "gemm,elementwise", "--precisions", "fp32",
                      "--per-family-limit", "1", "--dry-run-cpu"])
    finally:
        gpu_common.use_device("cuda")
    assert rc == 0
    lines = (tmp_path / "microbench.csv").read_text().splitlines()
    assert len(lines) == 3


def test_families_for_the_next_run():
    """Grouped widths, layer-norm rows, unaligned batched GEMMs (with aligned controls) and short softmax rows."""
    cases = mb.enumerate_cases(("conv_grouped_width", "layer_norm_rows", "bmm_unaligned", "softmax_rows"),
                               mb.FLOAT_PRECISIONS)
    by = {f: [c for c in cases if c.family == f] for f in ("conv_grouped_width", "layer_norm_rows", "bmm_unaligned",
                                                          "softmax_rows")}
    assert [len(v) for v in by.values()] == [4 * 14, 3 * 36, 4 * 16, 3 * 8]
    widths = {c.params["C"] // c.params["groups"] for c in by["conv_grouped_width"]}
    assert widths == {4, 8, 16, 32, 64}
    bmm = by["bmm_unaligned"]
    assert any(c.params["M"] % 8 for c in bmm) and any(c.params["M"] % 8 == 0 for c in bmm)
    c = next(c for c in bmm if (c.params["B"], c.params["M"], c.params["N"], c.params["K"]) == (6144, 49, 49, 32))
    assert c.flops == 2.0 * 6144 * 49 * 49 * 32
    ln = next(c for c in by["layer_norm_rows"] if c.params == {"tokens": 100352, "D": 96} and c.precision == "fp16")
    assert ln.bytes == 2 * (2 * 100352 * 96 + 2 * 96)


def test_elementwise_mixed_family_bytes():
    """Autocast's elementwise cases exist at 16-bit only; the mixed add moves fp32 + 16-bit in and fp32 out."""
    from calibration.networks.microbench import FAMILIES, MIXED_SIZES

    assert list(FAMILIES["elementwise_mixed"]("fp32")) == []
    cases = list(FAMILIES["elementwise_mixed"]("bf16"))
    assert len(cases) == 4 * len(MIXED_SIZES)
    by = {(c.op, c.params["n"]): c for c in cases}
    n = MIXED_SIZES[0]
    assert by[("add_mixed", n)].bytes == n * 10 and by[("add_fp32", n)].bytes == n * 12
    assert by[("cast", n)].bytes == by[("cast_transposed", n)].bytes == n * 6


def test_masked_sdpa_cases_carry_the_mask():
    """sdpa_masked: 30 seeded calls with an explicit additive mask per precision; the mask's bytes are counted once."""
    cases = mb.enumerate_cases(("sdpa_masked",), ("fp16",))
    assert len(cases) == 30 and {c.params["mask"] for c in cases} == {"bias_heads", "batch", "full"}
    c = cases[0]
    b, h, s, d = (c.params[k] for k in ("B", "H", "S", "D"))
    flops, qkvo = mb.sdpa_cost(b, h, s, d, False, 2)
    assert c.flops == flops and c.bytes == qkvo + 2 * mb.math.prod(mb.SDPA_MASK_SHAPE[c.params["mask"]](b, h, s))


def test_long_and_decode_attention_families():
    """Run 10: sdpa_long (24 seeded prefill calls of 1,536-16,384 tokens) and sdpa_decode (30 seeded one-token calls
    against a cache), 16-bit only; decode FLOPs 4 B H ctx D, bytes the keys and values once plus the query and output."""
    assert not mb.enumerate_cases(("sdpa_long", "sdpa_decode"), ("fp32", "tf32"))
    long = mb.enumerate_cases(("sdpa_long",), ("fp16",))
    assert len(long) == 24 and all(1536 <= c.params["S"] <= 16384 for c in long)
    dec = mb.enumerate_cases(("sdpa_decode",), ("bf16",))
    assert len(dec) == 30 and all(c.params["Sq"] == 1 for c in dec)
    c = dec[0]
    b, h, kvh, ctx, d = (c.params[k] for k in ("B", "H", "KVH", "Skv", "D"))
    assert c.flops == 4.0 * b * h * ctx * d and c.bytes == 2 * (2 * b * kvh * ctx * d + 2 * b * h * d)
    assert any(c.params["KVH"] < c.params["H"] for c in dec)  # grouped-query calls too


def test_linear_thin_cases():
    """linear_thin (run 16): every (K, N) pair over every row count at each float precision (tf32 too: a tensor-core
    family); FLOPs 2 M N K, bytes the input, the weight and the output once."""
    cases = mb.enumerate_cases(("linear_thin",), mb.FLOAT_PRECISIONS)
    assert len(cases) == 4 * len(mb.LINEAR_THIN_KN) * len(mb.LINEAR_THIN_ROWS)
    c = next(c for c in cases if c.precision == "bf16" and c.params == {"M": 1229312, "N": 4, "K": 4})
    assert c.op == "linear" and c.flops == 2.0 * 1229312 * 4 * 4
    assert c.bytes == 2 * (1229312 * 4 + 4 * 4 + 1229312 * 4)


def test_transpose_broad_family_moves_real_permutations():
    """40 seeded permutations of rank 2-5 tensors (64 K to 64 M elements), none a view, at fp32/fp16/bf16 (no tf32:
    not a tensor-core family); each call reads and writes every element once."""
    import math

    cases = mb.enumerate_cases(("transpose_broad",), mb.FLOAT_PRECISIONS)
    assert len(cases) == 3 * 40 and {c.precision for c in cases} == {"fp32", "fp16", "bf16"}
    for c in cases:
        shape, perm = c.params["shape"], c.params["perm"]
        assert 2 ** 16 <= math.prod(shape) <= 2 ** 26 and sorted(perm) == list(range(len(shape)))
        assert [i for i in perm if shape[i] > 1] != [i for i in range(len(shape)) if shape[i] > 1]
        assert c.bytes == 2 * mb.ELT_BYTES[c.precision] * math.prod(shape)
        assert c.params["kind"] == ("inner_kept" if perm[-1] == len(shape) - 1 else "inner_moved")


def test_linear_small_and_depthwise_transpose_families():
    """linear_small (run 20): SLANeXt's 256 x 512 x 512 and 59 seeded under-filled shapes (M x N <= 4 M) at every float
    precision; conv_transpose_dw: X-Codec2's up-sampling and 19 seeded depthwise transposed 1-D convolutions, the
    output length of ConvTranspose1d's formula and FLOPs of one multiply-add per input element and tap."""
    cases = mb.enumerate_cases(("linear_small", "conv_transpose_dw"), mb.FLOAT_PRECISIONS)
    lin = [c for c in cases if c.family == "linear_small"]
    assert len(lin) == 4 * 60 and all(c.params["M"] * c.params["N"] <= 2 ** 22 for c in lin)
    c = next(c for c in lin if c.precision == "fp32")
    assert c.params == {"M": 256, "N": 512, "K": 512} and c.flops == 2.0 * 256 * 512 * 512
    assert c.bytes == 4 * (256 * 512 + 512 * 512 + 256 * 512)
    dw = [c for c in cases if c.family == "conv_transpose_dw"]
    assert len(dw) == 4 * 20
    c = next(c for c in dw if c.precision == "bf16")
    assert c.params == {"N": 32, "C": 1536, "L": 250, "K": 1536, "R": 12, "stride": 2, "pad": 5, "groups": 1536,
                        "Lo": 500}
    assert c.flops == 2.0 * 32 * 1536 * 250 * 12 and c.bytes == 2 * (32 * 1536 * 250 + 1536 * 12 + 32 * 1536 * 500)


def test_time_case_grows_the_graph_past_the_hosts_launch_cost(monkeypatch):
    """A call is timed in a graph of K calls whose replay lasts at least GRAPH_REPLAY_MIN_S (the host's launch of a
    shorter one is what back-to-back event pairs time): K grows from the replay's own time, per-call time = replay / K."""
    from calibration.networks import gpu_common

    class Graph:  # a replay of k calls of 2 us each
        def __init__(self, k):
            self.k = k

        def replay(self):
            pass

    def time_each(fn, n):  # the eager call: 50 us of host dispatch
        return [fn.__self__.k * 2e-6 if isinstance(getattr(fn, "__self__", None), Graph) else 50e-6] * n

    monkeypatch.setattr(gpu_common, "time_each", time_each)
    monkeypatch.setattr(mb, "sync", lambda: None)
    monkeypatch.setattr(mb, "_graph_of", lambda fn, k: Graph(k))
    t = mb.time_case(lambda: None)
    k = int(t.method.removeprefix("graph_x"))
    assert k * 2e-6 >= mb.GRAPH_REPLAY_MIN_S and k <= mb.GRAPH_MAX_CALLS and k > 4  # not 2 x 100 us / 50 us
    assert t.time_s == pytest.approx(2e-6)
