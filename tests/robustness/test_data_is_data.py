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
    ("predictor/graph/onnx_proto.py", "spec_from_file_location"):
        "loads onnx's own generated onnx_ml_pb2.py (a fixed file of the installed onnx package), not data",
    ("predictor/graph/onnx_proto.py", "exec_module"): "the same onnx_ml_pb2 module",
    ("predictor/measure/ert/sweep.py", "load_module"):
        "kernels.load_module compiles the CUDA source that predictor/measure/ert/kernels.py generates (CuPy RawModule)",
    ("predictor/measure/ert/gemm.py", "load_module"): "the same, for the WMMA kernel source",
    ("calibration/networks/export.py", "__import__"):
        "reads __version__ of a fixed tuple of package names (torch, onnx, ...), for provenance",
    ("predictor/fastinit.py", "compile"):
        "compiles an __init__ built from a dataclass's own field names (code in predictor/types.py), not data",
    ("predictor/fastinit.py", "exec"): "the same __init__",
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


@pytest.mark.parametrize("kind", ["profile", "calibration"])
@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_json_loaders_reject_nan(kind, constant, tmp_path, capsys):
    """A profile or calibration holding NaN/Infinity (json.dumps writes them) is a one-line error from predict."""
    from predictor.cli import main

    root = ROOT / "predictor"
    src = root / "machine" / "profiles" / "h200.json" if kind == "profile" else root / "data" / "calibration_h200.json"
    doc = src.read_text()
    key = '"launch_overhead_s": {' if kind == "profile" else '"eff_memory": '
    assert key in doc
    k = doc.index(key) + len(key)
    if kind == "profile":
        k = doc.index('"value": ', k) + len('"value": ')
    end = min(i for i in (doc.find(",", k), doc.find("}", k)) if i > 0)
    path = tmp_path / f"bad_{kind}.json"
    path.write_text(doc[:k] + constant + doc[end:])
    model = str(ROOT / "examples" / "lstm.onnx")
    argv = [model, "--gpu", str(path)] if kind == "profile" else [model, "--gpu", "h200", "--calibration", str(path)]
    rc = main(argv)
    _, err = capsys.readouterr()
    assert rc == 2 and err.startswith("error: ") and err.count("\n") == 1, err
    assert constant.lstrip("-") in err or "not valid JSON" in err or "finite" in err, err


def test_json_loaders_cap_size():
    from predictor import fitted
    from predictor.machine import profile

    assert profile.MAX_PROFILE_BYTES <= 1 << 20 and fitted.MAX_CALIBRATION_BYTES <= 64 << 20
