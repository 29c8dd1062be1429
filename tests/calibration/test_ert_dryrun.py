"""Dry run of the whole GPU characterisation against a fake CuPy (CPU only).

The fake checks what a real run depends on: every kernel exists in its module's source, and every
launch passes exactly the argument types of the kernel's C signature (numpy int32 for ``int``,
int64 for ``long long``, float32 for ``float``, a device array for a pointer). Timing is a
simulated clock that grows with the launch's int arguments, so trial doubling terminates.
"""
import re
import sys
from types import ModuleType, SimpleNamespace

import numpy as np
import pytest

_C_TYPES = {"int": np.int32, "long long": np.int64, "float": np.float32}


class _Clock:
    now = 0.0


class FakeArray:
    def __init__(self, shape, dtype):
        self.shape = tuple(shape) if isinstance(shape, (tuple, list)) else (int(shape),)
        self.dtype = np.dtype(dtype)
        self.data = SimpleNamespace(ptr=0x1000 + id(self) % 0x10000 * 256)

    @property
    def size(self):
        return int(np.prod(self.shape))

    @property
    def nbytes(self):
        return self.size * self.dtype.itemsize

    def astype(self, dtype):
        return FakeArray(self.shape, dtype)

    def view(self, dtype):
        return FakeArray(self.shape, dtype)

    def __rshift__(self, k):
        return FakeArray(self.shape, self.dtype)

    def __mul__(self, k):
        return FakeArray(self.shape, self.dtype)


def _signature(source, name):
    m = re.search(r'extern "C" __global__ void(?: __launch_bounds__\([^)]*\))?\s+' + name
                  + r"\(([^)]*)\)", source)
    assert m, f"kernel {name} not defined in its module"
    params = [p.strip() for p in m.group(1).split(",") if p.strip()]
    kinds = []
    for p in params:
        if "*" in p:
            kinds.append("ptr")
        else:
            ctype = " ".join(p.split()[:-1]).replace("const ", "")
            assert ctype in _C_TYPES, f"{name}: unexpected parameter type {ctype!r}"
            kinds.append(_C_TYPES[ctype])
    return kinds


class FakeKernel:
    def __init__(self, source, name, launches):
        self.name = name
        self.kinds = _signature(source, name)
        self.launches = launches
        self.kernel = SimpleNamespace(ptr=hash(name) & 0xFFFF)
        self.preferred_shared_memory_carveout = -1

    def __call__(self, grid, block, args, **kwargs):
        assert isinstance(grid, tuple) and isinstance(block, tuple) and isinstance(args, tuple)
        assert all(isinstance(g, int) and g >= 1 for g in grid + block), (self.name, grid, block)
        assert block[0] <= 1024
        assert len(args) == len(self.kinds), f"{self.name}: {len(args)} args for {self.kinds}"
        work = 1.0
        for a, kind in zip(args, self.kinds):
            if kind == "ptr":
                assert isinstance(a, FakeArray), f"{self.name}: pointer parameter got {type(a)}"
            else:
                assert type(a) is kind, f"{self.name}: {kind.__name__} parameter got {type(a)}"
                if kind is np.int32:
                    work *= max(1, int(a))
        self.launches.append(self.name)
        _Clock.now += 2e-6 + 1e-9 * min(work, 1e9)


def make_fake_cupy():
    launches = []
    gemm_calls = []

    class Event:
        def record(self, stream=None):
            self.t = _Clock.now

        def synchronize(self):
            pass

    class Graph:
        def __init__(self, n):
            self.n = n

        def launch(self, stream=None):
            _Clock.now += 1e-6 * self.n

    class Stream:
        ptr = 7

        def __init__(self, non_blocking=False):
            self.captured = None

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def begin_capture(self, mode=None):
            self.captured = len(launches)

        def end_capture(self):
            n = len(launches) - self.captured
            self.captured = None
            return Graph(n)

        def synchronize(self):
            pass

    class RawModule:
        def __init__(self, *, code, options=()):
            assert options == ("-std=c++17",)
            self.code = code

        def get_function(self, name):
            return FakeKernel(self.code, name, launches)

    props = {"name": b"Fake H200", "multiProcessorCount": 132, "l2CacheSize": 62914560,
             "major": 9, "minor": 0, "totalGlobalMem": 150 << 30,
             "maxThreadsPerMultiProcessor": 2048, "sharedMemPerMultiprocessor": 233472,
             "regsPerMultiprocessor": 65536}
    runtime = SimpleNamespace(
        getDeviceCount=lambda: 1, getDeviceProperties=lambda dev: dict(props),
        memGetInfo=lambda: (64 << 20, 150 << 30), deviceSynchronize=lambda: None,
        runtimeGetVersion=lambda: 13000, driverGetVersion=lambda: 13000)
    driver = SimpleNamespace(
        occupancyMaxActiveBlocksPerMultiprocessor=lambda ptr, threads, smem: 2048 // threads)
    cuda = SimpleNamespace(
        runtime=runtime, driver=driver, Event=Event, Stream=Stream,
        get_elapsed_time=lambda s, e: (e.t - s.t) * 1e3,
        get_current_stream=lambda: Stream(),
        Device=lambda dev=0: SimpleNamespace(attributes={}, pci_bus_id="0000:1B:00.0"),
        device=SimpleNamespace(get_cublas_handle=lambda: 42))

    def full(shape, value, dtype=np.float64):
        return FakeArray(shape, dtype)

    random = SimpleNamespace(
        standard_normal=lambda size=None, dtype=np.float64: FakeArray(size, dtype),
        randint=lambda low, high=None, size=None: FakeArray(size, np.int64))
    cp = ModuleType("cupy")
    cp.__version__ = "14.2.0-fake"
    cp.cuda = cuda
    cp.RawModule = RawModule
    cp.full = full
    cp.zeros = lambda shape, dtype=np.float64: FakeArray(shape, dtype)
    cp.empty = lambda shape, dtype=np.float64: FakeArray(shape, dtype)
    cp.random = random
    cp.get_default_memory_pool = lambda: SimpleNamespace(free_all_blocks=lambda: None)
    for name in ("float16", "float32", "float64", "int8", "int32", "int64", "uint16", "uint32"):
        setattr(cp, name, getattr(np, name))

    def gemm_ex(*args):
        assert len(args) == 19
        handle, transa, transb, m, n, k, alpha, a, atype, lda, b, btype, ldb, beta, c, ctype, ldc, \
            compute, algo = args
        assert all(isinstance(v, int) for v in args), args
        assert lda == (k if transa == 1 else m) and ldb == k and ldc == m and algo == -1
        gemm_calls.append((atype, ctype, compute, transa))
        _Clock.now += 1e-3

    cublas = ModuleType("cupy_backends.cuda.libs.cublas")
    cublas.gemmEx = gemm_ex
    cublas.getPointerMode = lambda handle: 0
    cublas.setPointerMode = lambda handle, mode: None
    cublas.setStream = lambda handle, ptr: None
    return cp, cublas, launches, gemm_calls


@pytest.fixture
def fake_gpu(monkeypatch):
    cp, cublas, launches, gemm_calls = make_fake_cupy()
    monkeypatch.setitem(sys.modules, "cupy", cp)
    pkg = ModuleType("cupy_backends")
    sub = ModuleType("cupy_backends.cuda")
    libs = ModuleType("cupy_backends.cuda.libs")
    libs.cublas = cublas
    monkeypatch.setitem(sys.modules, "cupy_backends", pkg)
    monkeypatch.setitem(sys.modules, "cupy_backends.cuda", sub)
    monkeypatch.setitem(sys.modules, "cupy_backends.cuda.libs", libs)
    monkeypatch.setitem(sys.modules, "cupy_backends.cuda.libs.cublas", cublas)
    monkeypatch.setitem(sys.modules, "torch", None)  # fp8 path: recorded as not measured
    from predictor.measure.ert import sweep

    sweep._module.cache_clear()
    monkeypatch.setattr("predictor.measure.ert.run.read_clocks",
                        lambda pci=None: {"driver_version": "580.0", "pci": pci})
    return SimpleNamespace(launches=launches, gemm_calls=gemm_calls)


def test_quick_characterisation_dry_run(fake_gpu):
    from predictor.measure.ert.profile_writer import H200_DATASHEET, build_profile
    from predictor.measure.ert.run import QUICK, characterise

    lines, checkpoints = [], []
    raw = characterise(QUICK, command="python -m calibration.ert --quick", progress=lines.append,
                       checkpoint=lambda r: checkpoints.append(len(r["stage_times_s"])))
    assert raw["errors"] == [], raw["errors"]
    assert raw["provenance"]["gpu"] == "Fake H200" and raw["provenance"]["cuda_runtime"] == "13.0"
    assert raw["clocks"]["start"] == {"driver_version": "580.0", "pci": "0000:1B:00.0"}
    assert raw["warm_up"]["seconds"] >= QUICK.warm_up_s
    rmw = raw["bandwidth"]["rmw_fp32"]
    assert rmw["points"] and rmw["blocks_per_sm"] == 8 and not rmw["truncated"]
    # memory cap: 45% of the 64 MiB the fake reports free
    assert rmw["points"][-1]["working_set_bytes"] <= 0.45 * (64 << 20)
    l1 = raw["bandwidth"]["l1_read_fp32x4"]
    assert l1["points"] and l1["blocks_per_sm"] == 4 and l1["carveout_percent"] == 0
    assert {(c["precision"], c["op"]) for c in raw["compute"]} == {
        (p, o) for p in ("fp64", "fp32", "fp16", "bf16") for o in ("fma", "add")}
    assert all(c["points"] for c in raw["compute"])
    t = raw["tensor"]
    for case in ("fp16", "bf16", "tf32", "int8", "fp64", "fp32_sgemm", "wmma_fp16"):
        assert t[case]["error"] is None and t[case]["flops_per_s"] > 0, case
    assert t["fp8"]["flops_per_s"] is None and "PyTorch not importable" in t["fp8"]["error"]
    # int8 runs A transposed (T,N) with int32 output and 32I compute
    assert (3, 10, 72, 1) in fake_gpu.gemm_calls
    assert raw["launch"]["graph_per_kernel_s"] > 0 and raw["launch"]["eager_per_launch_s"] > 0
    assert checkpoints == list(range(1, len(raw["stage_times_s"]) + 1))
    assert lines[0].startswith("[   0.0s] device: Fake H200, 132 SMs, L2 60 MiB")
    prof = build_profile(raw, dict(H200_DATASHEET))
    assert prof["peak_flops_per_s"]["fp8"]["tensor"]["source"] == "datasheet"
    assert prof["sources"][prof["sm_count"]["source"]]["kind"] == "ert"


def test_one_failing_stage_does_not_stop_the_run(fake_gpu, monkeypatch):
    from predictor.measure.ert import sweep
    from predictor.measure.ert.run import QUICK, characterise

    def boom(*a, **k):
        raise RuntimeError("CUDARuntimeError: simulated")

    monkeypatch.setattr(sweep, "l1_sweep", boom)
    raw = characterise(QUICK, command="x", progress=lambda line: None)
    assert raw["bandwidth"]["l1_read_fp32x4"] == {"error": "RuntimeError: CUDARuntimeError: simulated"}
    assert raw["errors"] == [{"stage": "bandwidth l1_read_fp32x4 (block-local)",
                              "error": "RuntimeError: CUDARuntimeError: simulated"}]
    assert raw["launch"]["eager_per_launch_s"] > 0


def test_cli_full_run_writes_everything(fake_gpu, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    from predictor.measure.ert import cli

    out = tmp_path / "h200.json"
    assert cli.main(["--out", str(out), "--quick", "--no-charts"]) == 0
    text = capsys.readouterr().out
    assert "bandwidth rmw_fp32:" in text and "tensor-core GEMMs:" in text
    assert sorted(p.name for p in tmp_path.iterdir()) == ["h200.json", "h200_ert_raw.json"]


@pytest.mark.parametrize("variant", ["rmw", "copy", "read"])
@pytest.mark.parametrize("dtype", ["fp32", "fp32x4"])
def test_every_bandwidth_kernel_dry_run(fake_gpu, variant, dtype):
    from predictor.measure.ert.sweep import bandwidth_sweep

    rec = bandwidth_sweep(variant, dtype, max_bytes=1 << 20, growth=2.0, min_time_s=1e-4,
                          repeats=2)
    arrays = 2 if variant == "copy" else 1
    elem = 16 if dtype == "fp32x4" else 4
    pts = rec["points"]
    # 4 KiB .. 1 MiB doubling: 9 sizes; bytes per trial = n * elem * (1 read [+ 1 write])
    assert [p["working_set_bytes"] for p in pts] == [4096 * 2 ** i for i in range(9)]
    for p in pts:
        assert p["n_elements"] * elem * arrays == p["working_set_bytes"]
        rw = 1 if variant == "read" else 2
        assert p["bytes_per_trial"] == p["n_elements"] * elem * rw
        assert p["bandwidth_Bps"] == p["bytes_per_trial"] * p["trials"] / p["time_s"]
    assert fake_gpu.launches[-1] == f"ert_{variant}_{dtype}"
