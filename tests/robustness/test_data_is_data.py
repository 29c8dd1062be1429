"""Data files are data: no module of the packages unpickles, evaluates, executes or imports by a name read
from a file. An AST scan (a grep that understands Python) of predictor/ and calibration/."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("predictor", "calibration")

FORBIDDEN_MODULES = {"pickle", "cPickle", "_pickle", "dill", "cloudpickle", "marshal", "shelve", "joblib", "jsonpickle"}
FORBIDDEN_CALLS = {"eval", "exec", "compile", "__import__", "execfile", "input"}
FORBIDDEN_ATTRS = {"import_module", "exec_module", "spec_from_file_location", "load_module", "run_path",
                   "run_module", "unsafe_load", "full_load"}

# (file, name): why the use is not code from a data file
ALLOWED = {
    ("predictor/graph/loader.py", "spec_from_file_location"):
        "loads onnx's own generated onnx_ml_pb2.py (a fixed file of the installed onnx package), not data",
    ("predictor/graph/loader.py", "exec_module"): "the same onnx_ml_pb2 module",
    ("predictor/measure/ert/sweep.py", "load_module"):
        "kernels.load_module compiles the CUDA source that predictor/measure/ert/kernels.py generates (CuPy RawModule)",
    ("predictor/measure/ert/gemm.py", "load_module"): "the same, for the WMMA kernel source",
    ("calibration/networks/export.py", "__import__"):
        "reads __version__ of a fixed tuple of package names (torch, onnx, ...), for provenance",
}


def _sources():
    for pkg in PACKAGES:
        for p in sorted((ROOT / pkg).rglob("*.py")):
            yield p.relative_to(ROOT).as_posix(), p


def _findings(rel: str, tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] in FORBIDDEN_MODULES:
                    yield node.lineno, a.name
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in FORBIDDEN_MODULES:
            yield node.lineno, node.module
        elif isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Name) and f.id in FORBIDDEN_CALLS:
                yield node.lineno, f.id
            elif isinstance(f, ast.Attribute):
                if f.attr in FORBIDDEN_ATTRS:
                    yield node.lineno, f.attr
                # numpy / torch loaders that unpickle: np.load(..., allow_pickle=True), torch.load(...)
                if f.attr == "load" and isinstance(f.value, ast.Name) and f.value.id in ("torch", "pickle", "yaml"):
                    yield node.lineno, f"{f.value.id}.load"
                if any(k.arg == "allow_pickle" and not (isinstance(k.value, ast.Constant) and k.value.value is False)
                       for k in node.keywords):
                    yield node.lineno, "allow_pickle"
                if f.attr == "load" and isinstance(f.value, ast.Name) and f.value.id == "yaml" or \
                        any(k.arg == "Loader" for k in node.keywords):
                    yield node.lineno, "yaml loader"


@pytest.mark.parametrize("rel,path", list(_sources()), ids=[r for r, _ in _sources()])
def test_no_code_from_data(rel, path):
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=rel)
    bad = [(line, name) for line, name in _findings(rel, tree) if (rel, name) not in ALLOWED]
    assert not bad, f"{rel}: " + ", ".join(f"line {line}: {name}" for line, name in bad)


def test_allowlist_is_current():
    """Every allowed use still exists (a stale entry would hide a new one)."""
    found = {(rel, name) for rel, path in _sources() for _, name in _findings(rel, ast.parse(path.read_text()))}
    assert set(ALLOWED) <= found, set(ALLOWED) - found


def test_json_loaders_reject_nan_and_cap_size():
    """The profile and calibration loaders refuse NaN/Infinity and files above their size caps."""
    from predictor import fitted
    from predictor.machine import profile

    assert profile.MAX_PROFILE_BYTES <= 1 << 20 and fitted.MAX_CALIBRATION_BYTES <= 64 << 20
    for mod in (profile, fitted):
        src = Path(mod.__file__).read_text()
        assert "parse_constant=_reject_constant" in src, mod.__name__
