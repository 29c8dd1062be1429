"""ERT kernel sources and FLOP accounting (CPU only; optional nvcc compile check)."""
import os
import re
import shutil
import subprocess

import pytest

from predictor.measure.ert import kernels as K


@pytest.mark.parametrize("precision, op, nominal, chains, rounds, exact", [
    ("fp32", "fma", 2, 1, 1, 2),            # one FMA
    ("fp32", "add", 1, 1, 1, 1),            # one add
    ("fp32", "fma", 16, 8, 1, 16 + 7),      # 8 FMAs + 7 combine adds
    ("fp32", "fma", 1024, 8, 64, 1024 + 7),
    ("fp32", "add", 1024, 8, 128, 1024 + 7 + 1),  # + the final scaling multiply
    ("fp64", "fma", 4, 2, 1, 4 + 1),
    ("fp16", "fma", 4, 1, 1, 4),            # one __hfma2 = 4 FLOPs
    ("fp16", "fma", 1024, 8, 32, 1024 + 7 * 2),   # combine __hadd2 = 2 FLOPs each
    ("bf16", "add", 2, 1, 1, 2),            # one __hadd2 = 2 FLOPs
    ("bf16", "add", 1024, 8, 64, 1024 + 7 * 2 + 2),
])
def test_compute_kernel_flop_accounting(precision, op, nominal, chains, rounds, exact):
    k = K.compute_kernel(precision, op, nominal)
    assert (k.chains, k.rounds, k.flops_per_element) == (chains, rounds, exact)
    assert k.name == f"ert_{op}_{precision}_f{nominal}"


def test_bytes_per_element_is_one_load_and_one_store():
    assert K.compute_kernel("fp64", "fma", 2).bytes_per_element == 16
    assert K.compute_kernel("fp16", "fma", 4).bytes_per_element == 8  # one half2 each way


@pytest.mark.parametrize("precision, op, nominal", [("fp32", "fma", 1), ("fp32", "fma", 6),
                                                    ("fp16", "add", 3), ("fp16", "fma", 2)])
def test_bad_nominal_flops_raise(precision, op, nominal):
    with pytest.raises(ValueError):
        K.compute_kernel(precision, op, nominal)


def test_sweep_kernels_cover_the_ert_range():
    assert [k.nominal_flops for k in K.sweep_kernels("fp32", "add")] == [2 ** i for i in range(11)]
    assert [k.nominal_flops for k in K.sweep_kernels("fp16", "fma")] == [2 ** i for i in range(2, 11)]
    assert [k.nominal_flops for k in K.sweep_kernels("fp32", "fma", step=4)] == [2, 8, 32, 128, 512]


def test_compute_source_unrolls_independent_chains_and_stores():
    k = K.compute_kernel("fp32", "fma", 64)  # 8 chains x 4 rounds
    src = K.compute_source("fp32", (k,))
    body = src[src.index(k.name):]
    assert body.count("fmaf(") == 8
    assert "for (int r = 0; r < 4; ++r)" in body
    assert "A[i] = " in body
    assert len(set(re.findall(r"const float c\d = \(([0-9.]+f)\);", body))) == 8  # distinct


def test_every_module_names_its_kernels():
    srcs = K.all_sources()
    assert set(srcs) == {"bandwidth", "l1", "wmma", "compute_fp64", "compute_fp32",
                         "compute_fp16", "compute_bf16"}
    bw = srcs["bandwidth"]
    for v in K.BW_VARIANTS:
        for d in K.BW_TYPES:
            assert f"void __launch_bounds__(256, 8)\n{K.bandwidth_kernel_name(v, d)}(" in bw
    assert 'extern "C" __global__ void ert_empty()' in bw
    assert K.L1_KERNEL in srcs["l1"] and K.WMMA_KERNEL in srcs["wmma"]
    assert "#include <cuda_bf16.h>" in srcs["compute_bf16"]
    with pytest.raises(ValueError):
        K.bandwidth_kernel_name("rmw", "fp16")


@pytest.mark.skipif(not (os.environ.get("ERT_NVCC") and shutil.which("nvcc")),
                    reason="set ERT_NVCC=1 with nvcc on PATH to compile the sources for sm_90")
def test_sources_compile_for_sm90(tmp_path):
    """The same sources NVRTC gets, compiled to PTX by nvcc (catches compile errors on CPU)."""
    procs = []
    for name, src in K.all_sources().items():
        cu = tmp_path / f"{name}.cu"
        cu.write_text(src)
        procs.append((name, subprocess.Popen(
            ["nvcc", *K.COMPILE_OPTIONS, "-arch=sm_90", "--ptx", str(cu), "-o",
             str(tmp_path / f"{name}.ptx")], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)))
    for name, p in procs:
        out = p.communicate(timeout=600)[0].decode(errors="replace")
        assert p.returncode == 0, f"{name}: {out}"
        assert "warning" not in out.lower(), f"{name}: {out}"
