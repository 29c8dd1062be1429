"""predictor/fastexit.py: a program run ends by os._exit with the same report and exit code; in-process calls are
untouched."""
import subprocess
import sys
from pathlib import Path

from predictor import fastexit
from predictor.cli import main

ROOT = Path(__file__).resolve().parent.parent
LSTM = ROOT / "examples" / "lstm.onnx"


def test_program_run_prints_the_report_and_exit_code(tmp_path):
    assert main([str(LSTM), "--gpu", "h200", "-o", str(tmp_path / "r.txt")]) == 0
    p = subprocess.run([sys.executable, "-m", "predictor.cli", str(LSTM), "--gpu", "h200"], cwd=ROOT,
                       capture_output=True, text=True)
    assert (p.returncode, p.stderr) == (0, "") and p.stdout == (tmp_path / "r.txt").read_text()
    bad = subprocess.run([sys.executable, "-m", "predictor.cli", str(tmp_path / "none.onnx"), "--gpu", "h200"],
                         cwd=ROOT, capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stderr.startswith("error: no such file") and bad.stderr.count("\n") == 1


def test_in_process_calls_keep_nothing():
    fastexit.keep(object())
    assert fastexit._KEPT is None
    fastexit.exit_now(0)  # not activated: returns
