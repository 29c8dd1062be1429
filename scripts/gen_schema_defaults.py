"""Regenerate predictor/graph/ops/_schema_defaults.py from onnx.defs.

Run after adding cost formulas or shape functions for new op types, or after moving to a newer onnx:

    python scripts/gen_schema_defaults.py
"""
from __future__ import annotations

import collections
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

HEADER = '''"""Attribute defaults of the ONNX operator schemas (default domain), by op type and opset.

Generated from ``onnx.defs`` (onnx {version}) for the op types that have a cost formula, shape function or
folder, so that reading a default does not import the onnx package (~0.3 s with numpy). Regenerate
with ``python scripts/gen_schema_defaults.py`` after adding ops or moving to a newer onnx.
``schema_defaults`` returns None for anything not in the table: the caller then asks onnx.defs.
"""
from __future__ import annotations

ONNX_VERSION = {version!r}

# op type -> [(since_version, {{attribute: default}}), ...] in increasing since_version
DEFAULTS: dict[str, list[tuple[int, dict]]] = {{
'''

FOOTER = '''}


def schema_defaults(op_type: str, domain: str, opset: int) -> dict | None:
    """The attribute defaults of ``op_type``'s schema at ``opset``; None when the table does not know it."""
    if domain not in ("", "ai.onnx"):
        return None
    found = None
    for since, defaults in DEFAULTS.get(op_type, ()):
        if since <= opset:
            found = defaults
    return found
'''


def _value(attr):
    from onnx import helper

    v = helper.get_attribute_value(attr)
    if isinstance(v, bytes):
        return v.decode()
    if isinstance(v, list):
        return [x.decode() if isinstance(x, bytes) else x for x in v]
    return v


def main() -> int:
    import onnx
    import onnx.defs

    from predictor.graph.registry import registered_ops
    from predictor.graph.shapes import FOLDERS, _SHAPE

    ops = set(registered_ops()) | set(_SHAPE) | set(FOLDERS)
    table: dict[str, list] = collections.defaultdict(list)
    for s in sorted(onnx.defs.get_all_schemas_with_history(), key=lambda s: (s.name, s.since_version)):
        if s.domain not in ("", "ai.onnx") or s.name not in ops:
            continue
        defaults = {name: _value(a.default_value) for name, a in sorted(s.attributes.items())
                    if a.default_value is not None and a.default_value.name}
        table[s.name].append((s.since_version, defaults))
    body = []
    for op in sorted(table):
        body.append(f"    {op!r}: [\n")
        body += [f"        ({since}, {d!r}),\n" for since, d in table[op]]
        body.append("    ],\n")
    out = REPO / "predictor" / "graph" / "ops" / "_schema_defaults.py"
    out.write_text(HEADER.format(version=onnx.__version__) + "".join(body) + FOOTER)
    print(f"{out}: {len(table)} op types")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
