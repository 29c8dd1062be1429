"""The pipeline: load -> cost -> time -> sum."""
from __future__ import annotations

import os
from dataclasses import replace
from operator import attrgetter
from types import MappingProxyType
from typing import Mapping

from .calibrate import Calibration, Uncalibrated
from .fastexit import keep
from .frozen import frozen_dataclass
from .graph.cost import cost_graph
from .graph.loader import Graph, load
from .graph.traffic import traffic_for
from .machine.profile import MachineProfile
from .opinfo import op_info
from .precision import MIXED, PrecisionPolicy
from .causal_mask import mark_causal_masks
from .layout_views import mark_layout_views
from .strided_norms import mark_strided_norms
from .slice_assign import mark_slice_assignments
from .precision import policy as get_policy
from .types import DEFAULT_OPSET, NetworkPrediction, OpPrediction, PredictorError, frozen_map


_op_type = attrgetter("op_type")

# the op types of a quantised graph (quant.INT8_OPS and the Q/DQ pair; tests/graph/test_memo.py checks they agree)
QUANT_OPS = frozenset({"QLinearConv", "QLinearMatMul", "ConvInteger", "MatMulInteger", "DequantizeLinear",
                       "QuantizeLinear"})


@frozen_dataclass
class PreparedGraph:
    """A graph as the runtime runs it: autocast's dtypes and casts (mixed precision) or an int8 runtime's fusions
    (quantised graphs), then the graph optimisation passes; the precision policy of each node that has its own."""

    graph: Graph
    node_policy: Mapping[str, PrecisionPolicy]
    passes: tuple[str, ...]  # the optimisation passes applied
    notes: tuple[str, ...]  # what the quantisation did


def resolve_passes(optimize: tuple[str, ...] | str) -> tuple[str, ...]:
    """``optimize.resolve``: the pass names in pipeline order (an unknown name is an error); the optimisation
    package is imported only when passes are named (a plain prediction does without it: start-up)."""
    if not optimize:
        return ()
    from .optimize import resolve

    return resolve(optimize)


def prepare_graph(graph: Graph, pol: PrecisionPolicy, optimize: tuple[str, ...] | str = ()) -> PreparedGraph:
    """The one rewrite of a loaded graph that inference (predict_graph) and a training step (predictor/train) cost."""
    passes = resolve_passes(optimize)
    # the exporter's slice-assignment ScatterNDs, channels-last permutes, strided views copied by layer norms and
    # causal masks, as PyTorch runs them
    graph = mark_causal_masks(mark_strided_norms(mark_layout_views(mark_slice_assignments(graph))))
    node_pol: Mapping = {}
    mixed_precision = pol.name in MIXED
    if mixed_precision:  # torch.autocast: per-node precision and the casts it launches
        from .amp import autocast

        mixed = autocast(graph, pol.name)
        graph, node_pol = mixed.graph, mixed.node_policy
    qnotes: tuple[str, ...] = ()
    # quantised graphs: int8 nodes and the Q/DQ nodes an int8 runtime fuses (quant.py, imported only for them)
    if not mixed_precision and not QUANT_OPS.isdisjoint(map(_op_type, graph.nodes)):
        from .quant import has_quantisation, quantise

        if has_quantisation(graph):
            q = quantise(graph)
            graph, node_pol, qnotes = q.graph, q.node_policy, q.notes
    if not mixed_precision and not node_pol:  # a 16-bit model's explicit fp32 regions and math-path attention
        from .math_attention import upcast_math_attention
        from .upcasts import upcast_regions

        graph, node_pol = upcast_regions(graph, pol)
        graph, math_pol = upcast_math_attention(graph, pol, skip=node_pol)
        node_pol = {**node_pol, **math_pol} if node_pol else math_pol
    if passes:  # after autocast: fused nodes keep their last member's name, hence its precision policy
        from .optimize import apply_passes

        graph = apply_passes(graph, passes)
    return PreparedGraph(graph, node_pol, passes, qnotes)


def predict_graph(graph: Graph, profile: MachineProfile, precision: str = "fp32",
                  calibration: Calibration | None = None, strict: bool = False,
                  batch: int | None = None, optimize: tuple[str, ...] | str = ()) -> NetworkPrediction:
    """One forward pass of ``graph``. ``optimize``: graph optimisation passes (predictor/optimize; a comma list, a
    sequence, or ``all``) applied to the graph before costing. A training step is predictor/train's
    (predict_training_graph), chosen by the caller."""
    pol = get_policy(precision)
    return predict_prepared(prepare_graph(graph, pol, optimize), profile, pol, calibration, strict, batch)


def predict_prepared(prepared: PreparedGraph, profile: MachineProfile, pol: PrecisionPolicy,
                     calibration: Calibration | None = None, strict: bool = False,
                     batch: int | None = None) -> NetworkPrediction:
    """The forward pass of a prepared graph (:func:`prepare_graph`) under the precision policy ``pol``."""
    graph, node_pol, passes = prepared.graph, prepared.node_policy, prepared.passes
    cal = calibration or Uncalibrated()
    traffic = traffic_for(profile)
    gc = cost_graph(graph.nodes, pol, graph.opset or DEFAULT_OPSET, traffic, graph.input_names, node_policies=node_pol)
    not_costed = gc.not_costed
    control = getattr(graph, "control", None)
    if control is not None:  # If/Loop/Scan bodies (graph/control_flow.py): what could not be costed
        for k, v in control.not_costed.items():
            not_costed[k] = not_costed.get(k, 0) + v
    if strict and not_costed:
        listing = ", ".join(f"{k} x{v}" for k, v in sorted(not_costed.items()))
        raise PredictorError(f"--strict: ops the cost model does not know: {listing}")
    by_name = {n.name: n for n in graph.nodes}
    ops = predict_ops(cal, gc, by_name, profile, pol, node_pol)
    notes = tuple(getattr(graph, "notes", ())) + prepared.notes
    if control is not None:  # repeat Loop/Scan bodies, keep the larger branch of a data-dependent If
        from .graph.control_flow import resolve

        ops, cf_notes = resolve(ops, control)
        notes += cf_notes
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
        optimizations=passes,
        op_info=MappingProxyType(_op_infos(gc, by_name)),  # a fresh dict: frozen without a copy
        notes=notes,
    )


def predict_ops(cal: Calibration, gc, by_name: Mapping, profile: MachineProfile, pol, node_pol: Mapping) -> tuple:
    """``cal.predict_op`` of every costed node. The bundled calibrations' ``predict_op`` is a function of the
    node's key (graph/memo.py), its policy and the cost's numbers: nodes alike in all three (a network's
    repeated layers) are predicted once and share the result, with their own cost."""
    if not type(cal).__dict__.get("predict_op_by_key", False):
        return tuple([cal.predict_op(by_name[c.name], c, profile, node_pol.get(c.name, pol)) for c in gc.costs])
    memo: dict = {}
    out = []
    for c, nk, wk in zip(gc.costs, gc.keys, gc.work_keys):
        p = node_pol.get(c.name, pol) if node_pol else pol
        if wk is not None:  # the work is the node kind's: its bytes per level remain (maps alive, ids unique)
            k = (id(wk), id(p), id(c.bytes))  # (nodes alike share one key object: no hash of the key's tuples)
        else:
            w = c.work
            k = (id(nk), id(p), c.kernels, tuple(c.bytes.items()),
                 tuple([(f.precision, f.unit, f.flops) for f in c.flops]), w.bytes_read, w.bytes_written,
                 w.weight_bytes, w.notes, tuple(w.input_bytes.values()), w.gemm, w.gemm_operand_bytes, w.rows,
                 w.overlaps_producer, w.runtime_kernel, w.channel_walk, w.attention_tiles, w.attention_causal,
                 w.thread_loop, tuple(w.flops.items()))
        hit = memo.get(k)
        if hit is None:
            hit = memo[k] = cal.predict_op(by_name[c.name], c, profile, p)
            out.append(hit)
        else:
            out.append(_with_cost(hit, c) if type(hit) is OpPrediction else replace(hit, cost=c))
    return tuple(out)


def _op_infos(gc, by_name: Mapping) -> dict:
    """op_info of every costed node, once per node key object (nodes alike share one; an OpInfo is read-only:
    shared)."""
    memo: dict = {}
    out = {}
    for c, k in zip(gc.costs, gc.keys):
        info = memo.get(id(k))
        if info is None:
            info = memo[id(k)] = op_info(by_name[c.name])
        out[c.name] = info
    return out


def _with_cost(pred: OpPrediction, cost) -> OpPrediction:
    """``pred`` for another node's equal ``cost``."""
    return _new_prediction(cost, pred.time_s, pred.bound, pred.level_time_s, pred.efficiency, pred.extra_kernels,
                           pred.extra_time_s)


_new_prediction = OpPrediction._fast_new  # (OpPrediction(...) without the type call: one per node)


def predict_file(path: str, gpu: MachineProfile, precision: str = "fp32", batch: int | None = None,
                 shapes: Mapping[str, tuple[int, ...]] | None = None, calibration: Calibration | None = None,
                 strict: bool = False, optimize: tuple[str, ...] | str = ()) -> NetworkPrediction:
    resolve_passes(optimize)  # an unknown pass name is an error before the model is read
    graph = load(path, batch=batch, shapes=shapes)
    keep(graph)  # a program run leaves it to the process's end (predictor/fastexit.py); else nothing
    return predict_graph(graph, gpu, precision, calibration, strict, batch=_batch_of(graph, batch),
                         optimize=optimize)


def _batch_of(graph: Graph, batch: int | None) -> int | None:
    if batch is not None:
        return batch
    for dims in graph.input_bindings.values():
        if dims:
            return dims[0]
    return None


from ._callable import make_callable  # noqa: E402  (predictor.predict(...) is the API: predictor/api.py)

make_callable(__name__)
