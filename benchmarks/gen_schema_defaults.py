"""Regenerate predictor/graph/ops/_schema_defaults.py from onnx.defs (run after adding ops or updating onnx)."""
import collections, sys
import onnx, onnx.defs
from onnx import helper
REPO = __import__("pathlib").Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from predictor.graph.registry import registered_ops
from predictor.graph.shapes import _SHAPE, _FOLD
ops = set(registered_ops()) | set(_SHAPE) | set(_FOLD)
table = collections.defaultdict(list)
for s in sorted(onnx.defs.get_all_schemas_with_history(), key=lambda s: (s.name, s.since_version)):
    if s.domain not in ("", "ai.onnx") or s.name not in ops:
        continue
    d = {}
    for name, attr in sorted(s.attributes.items()):
        if attr.default_value is not None and attr.default_value.name:
            v = helper.get_attribute_value(attr.default_value)
            if isinstance(v, bytes): v = v.decode()
            if isinstance(v, list): v = [x.decode() if isinstance(x, bytes) else x for x in v]
            d[name] = v
    table[s.name].append((s.since_version, d))
lines = ['"""Attribute defaults of the ONNX operator schemas (default domain), by op type and opset.',
 '',
 'Generated from ``onnx.defs`` (onnx %s) for the op types that have a cost formula, shape function or' % onnx.__version__,
 'folder, so that reading a default does not import the onnx package (~0.3 s with numpy). Regenerate',
 'with ``python benchmarks/gen_schema_defaults.py`` after adding ops or moving to a newer onnx.',
 '``schema_defaults`` returns None for anything not in the table: the caller then asks onnx.defs.',
 '"""',
 'from __future__ import annotations',
 '',
 'ONNX_VERSION = %r' % onnx.__version__,
 '',
 '# op type -> [(since_version, {attribute: default}), ...] in increasing since_version',
 'DEFAULTS: dict[str, list[tuple[int, dict]]] = {']
for op in sorted(table):
    lines.append(f"    {op!r}: [")
    for since, d in table[op]:
        lines.append(f"        ({since}, {d!r}),")
    lines.append("    ],")
lines += ['}', '', '',
'def schema_defaults(op_type: str, domain: str, opset: int) -> dict | None:',
'    """The attribute defaults of ``op_type``\'s schema at ``opset``; None when the table does not know it."""',
'    if domain not in ("", "ai.onnx"):',
'        return None',
'    found = None',
'    for since, defaults in DEFAULTS.get(op_type, ()):',
'        if since <= opset:',
'            found = defaults',
'    return found',
'']
open(REPO / "predictor" / "graph" / "ops" / "_schema_defaults.py", "w").write("\n".join(lines))
print(len(table), "ops")
