"""The ERT command line without a GPU: one-line errors, and rebuilding from saved raw data."""
import json
import sys
from types import SimpleNamespace

import pytest

from predictor.measure.ert import cli
from predictor.measure.ert.synthetic import synthetic_raw


def test_missing_cupy_is_one_error_line_and_exit_2(monkeypatch, capsys, tmp_path):
    monkeypatch.setitem(sys.modules, "cupy", None)  # makes `import cupy` raise ImportError
    assert cli.main(["--out", str(tmp_path / "h200.json")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: CuPy is not importable")
    assert "Traceback" not in err
    assert list(tmp_path.iterdir()) == []


def test_cupy_without_gpu_is_one_error_line_and_exit_2(monkeypatch, capsys, tmp_path):
    def no_device():
        raise RuntimeError("cudaErrorNoDevice: no CUDA-capable device is detected")

    fake = SimpleNamespace(cuda=SimpleNamespace(runtime=SimpleNamespace(getDeviceCount=no_device)))
    monkeypatch.setitem(sys.modules, "cupy", fake)
    assert cli.main(["--out", str(tmp_path / "h200.json"), "--quick"]) == 2
    err = capsys.readouterr().err
    assert err == ("error: CuPy found no usable CUDA device (RuntimeError: cudaErrorNoDevice: no "
                   "CUDA-capable device is detected)\n")


def test_zero_devices(monkeypatch, capsys, tmp_path):
    fake = SimpleNamespace(cuda=SimpleNamespace(runtime=SimpleNamespace(getDeviceCount=lambda: 0)))
    monkeypatch.setitem(sys.modules, "cupy", fake)
    assert cli.main(["--out", str(tmp_path / "h200.json")]) == 2
    assert capsys.readouterr().err == "error: CuPy found no CUDA device (getDeviceCount() == 0)\n"


def test_usage_error_returns_2(capsys):
    assert cli.main(["--quick"]) == 2  # --out is required
    assert "--out" in capsys.readouterr().err


def test_from_raw_rebuilds_profile_without_gpu(monkeypatch, tmp_path, capsys):
    monkeypatch.setitem(sys.modules, "cupy", None)  # proves no GPU code runs
    raw_in = tmp_path / "saved_raw.json"
    raw_in.write_text(json.dumps(synthetic_raw()))
    out = tmp_path / "prof" / "h200.json"
    code = cli.main(["--out", str(out), "--from-raw", str(raw_in), "--no-charts",
                     "--datasheet", str(tmp_path / "missing.json")])
    assert code == 2  # unreadable datasheet
    assert capsys.readouterr().err.startswith("error: cannot read datasheet")
    sheet = tmp_path / "sheet.json"
    sheet.write_text(json.dumps({"sm_clock_hz": 1.98e9, "hbm_bytes": 1.41e11,
                                 "peak_flops_per_s": {"fp8": {"tensor": 1.979e15}},
                                 "bandwidth_Bps": {"HBM": 4.8e12}}))
    code = cli.main(["--out", str(out), "--from-raw", str(raw_in), "--no-charts",
                     "--datasheet", str(sheet), "--name", "h200-test"])
    assert code == 0
    prof = json.loads(out.read_text())
    assert prof["name"] == "h200-test"
    assert prof["sm_clock_hz"] == {"value": 1.98e9, "source": "datasheet"}
    assert prof["sources"]["ert-2026-01-01"]["raw_data"] == "h200_ert_raw.json"
    assert (out.parent / "h200_ert_raw.json").is_file()
    assert sorted(p.name for p in out.parent.iterdir()) == ["h200.json", "h200_ert_raw.json"]


def test_from_raw_writes_charts(tmp_path):
    pytest.importorskip("matplotlib")
    raw_in = tmp_path / "saved_raw.json"
    raw_in.write_text(json.dumps(synthetic_raw()))
    out = tmp_path / "h200.json"
    assert cli.main(["--out", str(out), "--from-raw", str(raw_in)]) == 0
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["h200.json", "h200_ert_bandwidth.png", "h200_ert_bandwidth.svg",
                     "h200_ert_raw.json", "h200_ert_roofline.png", "h200_ert_roofline.svg",
                     "saved_raw.json"]


def test_module_imports_nothing_heavy():
    import subprocess

    code = ("import sys, predictor.measure.ert, predictor.measure.ert.cli, predictor.measure.ert.sweep, "
            "predictor.measure.ert.gemm, predictor.measure.ert.run; "
            "print(sorted(m for m in ('cupy', 'matplotlib', 'torch') if m in sys.modules))")
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=root)
    assert out.stdout.strip() == "[]"
