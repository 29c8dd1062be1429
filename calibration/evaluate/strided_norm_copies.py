"""Layer norms that copy a strided input: predictor/strided_norms.py's count against the measured kernel tables.

    python -m calibration.evaluate.strided_norm_copies [--gpu h200] [--precision fp16] [--batch 32] [-v]

Per network with a kernel table at that precision and batch and a layer norm in its graph: the layer norms the pass
marks STRIDED_INPUT and the copy kernels (``direct_copy``) measured inside aten::layer_norm calls. Prints the
networks where either is non-zero (``-v``: each) and how many agree exactly, count more or fewer. Ignores: which norm
copies (counts only); a network whose graph is missing.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from calibration.fit.dataset import DATA, graph_for, load_kernels
from predictor.graph.context import STRIDED_INPUT
from predictor.layout_views import mark_layout_views
from predictor.strided_norms import NORMS, mark_strided_norms


def rows(gpu: str, precision: str, batch: int) -> list[dict]:
    """One dict per network: marked norms, measured copies inside layer norms, layer-norm kernels."""
    kernels = load_kernels(DATA / gpu / "timing")
    out = []
    for (net, prec, b), ks in sorted(kernels.items()):
        if prec != precision or b != batch:
            continue
        g = graph_for(net, batch)
        if g is None or not any(n.op_type in NORMS for n in g.nodes):
            continue
        marked = sum(1 for n in mark_strided_norms(mark_layout_views(g)).nodes if n.attrs.get(STRIDED_INPUT))
        in_ln = [k for k in ks if k.aten_op == "aten::layer_norm"]
        out.append({"network": net, "marked": marked, "measured": sum("copy" in k.name for k in in_ln),
                    "layer_norm_kernels": sum("layer_norm" in k.name for k in in_ln)})
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m calibration.evaluate.strided_norm_copies",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("--gpu", default="h200")
    ap.add_argument("--precision", default="fp16")
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("-v", action="store_true", help="every network, not only those with copies")
    a = ap.parse_args(argv)
    if not (DATA / a.gpu / "timing").is_dir():
        print(f"error: no timing data for GPU {a.gpu!r} under {Path(DATA).as_posix()}", file=sys.stderr)
        return 2
    rs = rows(a.gpu, a.precision, a.batch)
    if not rs:
        print(f"error: no kernel table at {a.precision} batch {a.batch} with a layer norm", file=sys.stderr)
        return 2
    tally = {"agree": 0, "more": 0, "fewer": 0}
    for r in rs:
        tag = "agree" if r["marked"] == r["measured"] else "more" if r["marked"] > r["measured"] else "fewer"
        if r["marked"] or r["measured"]:
            tally[tag] += 1
        if a.v or r["marked"] or r["measured"]:
            print(f"{r['network']:28s} marked {r['marked']:3d}  measured copies {r['measured']:3d}  "
                  f"layer norms {r['layer_norm_kernels']:3d}  {tag}")
    print(f"{len(rs)} networks with a layer norm; of those with copies marked or measured: {tally['agree']} agree, "
          f"{tally['more']} marked more, {tally['fewer']} marked fewer")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
