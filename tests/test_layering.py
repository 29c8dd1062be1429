"""The shipped tool does not import the lab: no module under predictor/ imports calibration (an AST scan of
every import, lazy ones inside functions included), and ``predict validate`` / ``predict calibrate`` run
with calibration/ absent from the import path."""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _imports(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield node.lineno, a.name
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.lineno, node.module


def test_predictor_never_imports_calibration():
    found = [f"{p.relative_to(ROOT)}:{line} imports {name}"
             for p in sorted((ROOT / "predictor").rglob("*.py"))
             for line, name in _imports(ast.parse(p.read_text(encoding="utf-8")))
             if name.split(".")[0] == "calibration"]
    assert found == []


def test_validate_and_ert_cli_load_without_the_lab():
    """Importing what `predict validate` and `predict calibrate ert` run leaves calibration unimported
    (a blocker raises if anything asks for it)."""
    code = ("import sys\n"
            "class Block:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name.split('.')[0] == 'calibration': raise ImportError('calibration imported')\n"
            "sys.meta_path.insert(0, Block())\n"
            "import predictor.cli, predictor.validate, predictor.measure.ncu.parse, predictor.measure.ncu.kernels\n"
            "import predictor.measure.ert.cli\n"
            "print('ok')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.stdout.strip() == "ok", out.stderr
