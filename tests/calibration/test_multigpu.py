"""The multi-GPU collection scripts: pure helpers without torch; the gloo dry run when torch is installed."""
import csv
import json
import os
import subprocess
import sys

import pytest

from calibration.multigpu import common, ddp_step, nccl_sweep

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_sizes_4k_to_4g():
    s = common.sizes()
    assert s[0] == 4096 and s[-1] == 4 << 30 and len(s) == 21  # 2**12 .. 2**32


def test_bus_factor_as_nccl_tests():
    assert common.bus_factor("all_reduce", 8) == 2 * 7 / 8
    assert common.bus_factor("all_gather", 4) == 3 / 4


def test_safe_env_forced_and_checked():
    env = {"NCCL_NVLS_ENABLE": "1"}
    common.apply_safe_env(env)
    assert env == {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1", "NVSHMEM_DISABLE_NVLS": "1"}
    with pytest.raises(SystemExit, match="NCCL_NVLS_ENABLE=0"):
        common.check_safe_env({})


def test_overlap_summary_exact():
    # compute kernels 0-10 and 12-20 us; NCCL kernels 5-15 (overlaps 5 + 3 = 8 us) and 18-25 (2 us)
    k = [("gemm", 0.0, 10.0, 7), ("conv", 12.0, 8.0, 7), ("ncclKernel_AllReduce", 5.0, 10.0, 20),
         ("ncclKernel_AllReduce", 18.0, 7.0, 20)]
    s = ddp_step.overlap_summary(k)
    assert s["nccl_kernels"] == 2 and s["nccl_time_us"] == 17.0
    assert s["nccl_overlapped_us"] == 10.0 and s["overlap_fraction"] == pytest.approx(10 / 17)
    assert s["exposed_tail_us"] == 5.0  # 25 - 20


def test_arguments_are_checked():
    with pytest.raises(SystemExit):
        nccl_sweep.parse_args(["--out", "x", "--ops", "all_to_all"])
    a = ddp_step.parse_args(["--out", "x", "--dry-run-cpu"])
    assert a.names == ["tiny"] and a.precisions == ["fp32"]


def _run(module, out):
    env = dict(os.environ, PYTHONPATH=ROOT)
    return subprocess.run([sys.executable, "-m", module, "--out", str(out), "--dry-run-cpu", "--iters", "2",
                           "--warmup", "1"] if "nccl" in module else
                          [sys.executable, "-m", module, "--out", str(out), "--dry-run-cpu", "--steps", "2",
                           "--warmup", "1"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)


def test_nccl_sweep_dry_run(tmp_path):
    pytest.importorskip("torch")
    r = _run("calibration.multigpu.nccl_sweep", tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    rows = list(csv.DictReader(open(tmp_path / "nccl_2gpu.csv")))
    assert {row["op"] for row in rows} == set(common.OPS)
    ok = [row for row in rows if row["dtype"] == "fp32"]
    assert ok and all(float(row["busbw_GBps"]) > 0 for row in ok)
    meta = json.load(open(tmp_path / "nccl_2gpu.json"))
    assert meta["ranks"] == 2 and meta["env"]["NCCL_NVLS_ENABLE"] == "0"


def test_ddp_step_dry_run(tmp_path):
    pytest.importorskip("torch")
    r = _run("calibration.multigpu.ddp_step", tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    doc = json.load(open(tmp_path / "ddp_2gpu.json"))
    case = doc["cases"][0]
    assert "error" not in case, case
    assert case["ddp"] and case["ranks"] == 2 and case["step_median_s"] > 0 and "profile" in case
