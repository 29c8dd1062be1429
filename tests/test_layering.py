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


# lazy imports that close a loop on purpose: a registry loads its family modules on first use (each module registers
# itself with it), and the callable modules predict/sweep/compare/validate call the API function of their name
ALLOWED_LOOPS = {
    ("predictor.graph.registry", "predictor.graph.ops"),
    ("predictor.train.registry", "predictor.train.rules"),
    ("predictor.optimize.registry", "predictor.optimize.attention"),
    ("predictor.optimize.registry", "predictor.optimize.bn_fold"),
    ("predictor.optimize.registry", "predictor.optimize.conv_bias_act"),
    ("predictor.optimize.registry", "predictor.optimize.elementwise"),
    ("predictor.optimize.registry", "predictor.optimize.layout"),
    ("predictor._callable", "predictor.api"),
}


def _module_graph(top: str) -> dict[str, set[str]]:
    """Module -> the modules it imports (top-level and lazy imports alike), within ``top``; a module's own parent
    packages are left out (they run first anyway)."""
    files = {}
    for p in (ROOT / top).rglob("*.py"):
        parts = p.relative_to(ROOT).with_suffix("").parts
        files[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = p

    def target(name: str) -> str | None:
        while name and name not in files:
            name = name.rpartition(".")[0]
        return name or None

    edges: dict[str, set[str]] = {m: set() for m in files}
    for mod, path in files.items():
        package = mod.split(".") if path.name == "__init__.py" else mod.split(".")[:-1]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = ".".join(package[:len(package) - node.level + 1] + ([node.module] if node.module else [])) \
                    if node.level else node.module
                names = [f"{base}.{a.name}" for a in node.names]
            else:
                continue
            for name in names:
                t = target(name)
                if t and t != mod and not mod.startswith(t + "."):
                    edges[mod].add(t)
    return edges


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def test_no_import_cycles_in_predictor():
    """No module of predictor/ imports one that imports it back, directly or through others, lazy imports included,
    except through ALLOWED_LOOPS."""
    edges = _module_graph("predictor")
    for a, b in ALLOWED_LOOPS:
        assert b in edges[a], f"{a} -> {b} is allowed but no longer there: drop it from ALLOWED_LOOPS"
        edges[a].discard(b)
    assert _cycles(edges) == []


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_cycles_in_the_lab():
    assert _cycles(_module_graph("calibration")) == []
