"""The pipeline: load -> cost -> time -> sum."""
from __future__ import annotations

import os
from typing import Mapping

from .calibrate import Calibration, Uncalibrated
from .graph.cost import cost_graph
from .graph.loader import Graph, load
from .graph.traffic import HierarchicalTraffic
from .machine.profile import MachineProfile
from .precision import policy as get_policy
from .types import NetworkPrediction, PredictorError, frozen_map


def predict_graph(graph: Graph, profile: MachineProfile, precision: str = "fp32",
                  calibration: Calibration | None = None, strict: bool = False,
                  batch: int | None = None) -> NetworkPrediction:
    pol = get_policy(precision)
    cal = calibration or Uncalibrated()
    traffic = HierarchicalTraffic(profile.l2_bytes, profile.arch)
    gc = cost_graph(graph.nodes, pol, graph.opset or 21, traffic, frozenset(t.name for t in graph.inputs))
    not_costed = gc.not_costed
    if strict and not_costed:
        listing = ", ".join(f"{k} x{v}" for k, v in sorted(not_costed.items()))
        raise PredictorError(f"--strict: ops the cost model does not know: {listing}")
    by_name = {n.name: n for n in graph.nodes}
    ops = tuple(cal.predict_op(by_name[c.name], c, profile, pol) for c in gc.costs)
    eager = getattr(cal, "eager_time_s", None)
    return NetworkPrediction(
        model=os.path.basename(graph.path),
        gpu=profile.name,
        precision=pol.name,
        batch=batch,
        ops=ops,
        unsupported=frozen_map(not_costed),
        calibration=cal.name,
        eager_time_s=eager(list(ops), 0) if eager is not None else None,
    )


def predict_file(path: str, gpu: MachineProfile, precision: str = "fp32", batch: int | None = None,
                 shapes: Mapping[str, tuple[int, ...]] | None = None, calibration: Calibration | None = None,
                 strict: bool = False) -> NetworkPrediction:
    graph = load(path, batch=batch, shapes=shapes)
    return predict_graph(graph, gpu, precision, calibration, strict, batch=_batch_of(graph, batch))


def _batch_of(graph: Graph, batch: int | None) -> int | None:
    if batch is not None:
        return batch
    for dims in graph.input_bindings.values():
        if dims:
            return dims[0]
    return None
