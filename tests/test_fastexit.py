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


def test_program_run_skips_protobufs_well_known_types_and_a_later_import_gets_the_real_module():
    # in a program run the loader's first message class is made without protobuf's well_known_types (graph/onnx_proto);
    # the stand-in leaves sys.modules at once, so importing the module afterwards gives the real one
    code = ("import sys\nfrom predictor import fastexit\nfastexit.activate()\n"
            "from predictor.graph.loader import load\n"
            f"g = load({str(LSTM)!r})\n"
            "wkt = 'google.protobuf.internal.well_known_types'\n"
            "print(wkt in sys.modules, len(g.nodes) > 0)\n"
            "import google.protobuf.internal.well_known_types as m\n"
            "print(hasattr(m, 'Timestamp'))\n")
    p = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert (p.returncode, p.stdout, p.stderr) == (0, "False True\nTrue\n", "")


def test_in_process_load_imports_the_real_well_known_types():
    code = ("import sys\nfrom predictor.graph.loader import load\n"
            f"load({str(LSTM)!r})\n"
            "print('google.protobuf.internal.well_known_types' in sys.modules)\n")
    p = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert (p.returncode, p.stdout) == (0, "True\n")
