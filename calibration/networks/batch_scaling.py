"""Does a committed export's work grow with the batch? A check for graphs whose exporter fixed an internal size.

    python -m calibration.networks.batch_scaling [NAMES|SPLIT ...] [--min-ratio 1.5]

Costs each network's committed graph at batch 1 and batch 2 (fp16, the predictor's own FLOP count) and lists those
whose FLOPs grow by less than ``--min-ratio``: a trace that kept a batch-dependent size as a constant (Pixtral's
packed patch sequence, 2048 tokens at any batch) gives a graph that is not the program PyTorch runs at other batch
sizes, and nothing in its shapes says so. Exit status 1 when any is listed, 2 for an unknown name. Ignores:
networks whose work is meant to be batch-independent (none in the zoo).
"""
from __future__ import annotations

import argparse
import sys

from predictor.graph.cost import cost_graph
from predictor.graph.traffic import traffic_for
from predictor.machine.profile import load_profile
from predictor.precision import policy
from predictor.predict import prepare_graph
from predictor.types import DEFAULT_OPSET

from ..fit.dataset import graph_for
from . import zoo


def total_flops(name: str, batch: int) -> float | None:
    """FLOPs of ``name``'s committed graph bound at ``batch`` (fp16), None without an export."""
    graph = graph_for(name, batch)
    if graph is None:
        return None
    pol = policy("fp16")
    prepared = prepare_graph(graph, pol)
    g = prepared.graph
    gc = cost_graph(g.nodes, pol, g.opset or DEFAULT_OPSET, traffic_for(load_profile("h200")), g.input_names,
                    node_policies=prepared.node_policy)
    return sum(c.total_flops for c in gc.costs)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m calibration.networks.batch_scaling", description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", default=["train"], help="networks or zoo splits (default: train)")
    ap.add_argument("--min-ratio", type=float, default=1.5)
    a = ap.parse_args(argv)
    flagged = 0
    try:
        names = [n for tok in a.names for n in (zoo.names(tok, include_extra=True) if tok in zoo.SPLITS
                                                  else zoo.parse_names(tok))]
    except KeyError as e:
        print(f"error: {str(e.args[0]).split(';')[0]} (a zoo network or split: {', '.join(zoo.SPLITS)})",
              file=sys.stderr)
        return 2
    for name in names:
        f1, f2 = total_flops(name, 1), total_flops(name, 2)
        if not f1 or f2 is None:
            continue
        if f2 / f1 < a.min_ratio:
            flagged += 1
            print(f"{name}: FLOPs x{f2 / f1:.2f} from batch 1 to 2 ({f1 / 1e9:.3g} -> {f2 / 1e9:.3g} GFLOP)")
    print(f"{flagged} graph(s) whose work does not grow with the batch")
    return 1 if flagged else 0


if __name__ == "__main__":
    raise SystemExit(main())
