"""One training step from the forward graph: forward (training mode) + loss + backward + optimizer.

    forward   the costed ops of predict.prepare_graph's graph, as predict_graph costs them (autocast, the graph
              passes and the runtime's fusions apply; the backward sees the same prepared nodes), with
              the training-mode rewrites of train/forward.py; then the loss's forward kernels
    backward  the loss's backward, then each forward op's backward rule (train/rules) in reverse order, with
              an accumulation kernel (Add) wherever a tensor receives more than one gradient
    optimizer train/optimizer.py (and GradScaler's kernels)
Every kernel then goes through the same traffic model (one sequence over the whole step, so a gradient
written by one backward kernel is L2-resident for the next) and the same calibration as a forward node;
the eager time is the calibration's host-dispatch timeline over the step. Memory: train/memory.py.
Ops that need a backward and have no rule are reported as ``<op> (no backward rule)`` in ``unsupported``.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from typing import Mapping

from ..calibrate import Calibration, Uncalibrated
from ..graph.cost import to_cost
from ..graph.loader import Graph, load
from ..graph.traffic import traffic_for
from ..machine.profile import MachineProfile
from ..precision import PrecisionPolicy, policy as get_policy
from ..predict import PreparedGraph, predict_prepared, prepare_graph
from ..types import DEFAULT_OPSET, Node, OpWork, PredictorError, TensorInfo, frozen_map
from . import autograd, loops, memory as mem
from .context import BackwardContext
from .forward import training_forward
from .kernel import GRAD_PREFIX, Kernel, grad_name, grad_of, make_work, nbytes, numel
from .loss import LossPlan, loss_plan
from .optimizer import TENSORS_ATTR, check as check_optimizer, optimizer_kernels, state_tensors
from .precision import TrainPrecision, train_precision
from .registry import lookup
from .result import MemoryEstimate, TrainingPrediction, summarise_phases

NO_RULE = "(no backward rule)"


@dataclass(frozen=True)
class StepPlan:
    """Everything of one step before timing: the kernels in order and what memory needs."""

    forward: tuple[tuple[Node, OpWork, PrecisionPolicy], ...]  # training-mode forward nodes
    forward_extra: Mapping[str, tuple[Kernel, ...]]            # kernels right after a forward node
    autograd: autograd.AutogradGraph
    loss: LossPlan
    backward: tuple[Kernel, ...]
    optimizer: tuple[Kernel, ...]
    internals: Mapping[str, tuple[TensorInfo, ...]]            # forward op -> tensors it writes for its backward
    grad_alias: Mapping[str, str]
    unsupported: Mapping[str, int]
    precision: TrainPrecision
    policy: PrecisionPolicy
    optimizer_name: str = "adamw"
    optimizer_impl: str = "fused"
    repeats: Mapping[str, int] = field(default_factory=frozen_map)   # kernel / forward node -> runs per step (Loop/Scan bodies)
    body_repeats: Mapping[str, int] = field(default_factory=frozen_map)  # forward node -> iterations (train/loops.py)


def plan_step(graph: Graph, forward_ops, pol: PrecisionPolicy, optimizer: str, impl: str, loss: str,
              optimize=(), prepared: PreparedGraph | None = None) -> StepPlan:
    """The step's kernels around ``forward_ops``, the costed forward of ``prepared`` (predict.prepare_graph of
    ``graph`` under ``pol`` and ``optimize``: the nodes the forward costed; prepared here when not given)."""
    tp = train_precision(pol)
    if prepared is None:
        prepared = prepare_graph(graph, pol, optimize)
    node_pol = prepared.node_policy
    by_name = {n.name: n for n in prepared.graph.nodes}
    opset = graph.opset or DEFAULT_OPSET
    seq, extra = [], {}
    missing: dict[str, int] = {}
    for op in forward_ops:
        node = by_name.get(op.cost.name)
        if node is None:  # a node this plan cannot see: no backward known for it
            node = Node(op.cost.name, op.cost.op_type, "", (), ())
            if op.cost.kernels:
                missing[f"{op.cost.op_type} {NO_RULE}"] = missing.get(f"{op.cost.op_type} {NO_RULE}", 0) + 1
        p = node_pol.get(node.name, pol)
        node, work, more = training_forward(node, op.cost.work, p, opset)
        seq.append((node, work, p))
        if more:
            extra[node.name] = tuple(more)
    ag = autograd.build(seq, graph.inputs, graph.outputs)
    body = loops.body_repeats(graph)
    if body:  # a Loop's carried state chains the iterations' gradients
        seeds = loops.carried_seeds(ag, graph)
        if seeds:
            ag = autograd.build(seq, graph.inputs, graph.outputs, seeds=seeds)
    lp = loss_plan(ag.loss_input, loss, pol, tp.grad_scaler)
    bwd, internals, grad_alias, unsupported = _backward(ag, opset)
    times: Mapping[str, int] = frozen_map()
    if body:
        bwd, acc = loops.iteration_accumulations(ag, body, bwd)
        times = loops.kernel_repeats(body, extra, bwd, acc)
    for k, v in missing.items():
        unsupported[k] = unsupported.get(k, 0) + v
    numels = [numel(t) for t in ag.params.values()]
    opt = optimizer_kernels(optimizer, impl, numels, tp, pol) if numels else []
    return StepPlan(tuple(seq), frozen_map(extra), ag, lp, tuple(bwd), tuple(opt), frozen_map(internals),
                    frozen_map(grad_alias), frozen_map(unsupported), tp, pol, optimizer, impl, times, body)


def _backward(ag: autograd.AutogradGraph, opset: int):
    out: list[Kernel] = []
    internals: dict[str, tuple[TensorInfo, ...]] = {}
    grad_alias: dict[str, str] = {}
    unsupported: dict[str, int] = {}
    present: set[str] = set()
    if ag.loss_input is not None and ag.loss_input.name in ag.has_grad:
        present.add(ag.loss_input.name)
    params = frozenset(ag.params)
    acc = 0
    for op in reversed(ag.ops):
        if not ag.needs_backward(op):
            continue
        needs = ag.needs(op)
        grad_outs = tuple(grad_of(t) if t.name and t.name in ag.has_grad else None for t in op.node.outputs)
        ctx = BackwardContext(op.node, op.work, op.policy, needs, grad_outs, params, opset)
        spec = lookup(op.key[1], op.key[0])
        kernels = spec.fn(ctx) if spec is not None else None
        if kernels is None:
            key = op.node.op_type if op.key[1] != "View" else op.key[1]
            key = f"{key} {NO_RULE}"
            unsupported[key] = unsupported.get(key, 0) + 1
            present.update(op.node.inputs[i].name for i, need in enumerate(needs) if need)
            continue
        kernels = list(kernels)
        if ctx.internals:
            internals[op.name] = tuple(ctx.internals)
        for i, need in enumerate(needs):
            if not need:
                continue
            t = op.node.inputs[i]
            g = grad_name(t.name)
            produced = ctx.passthroughs[i].name if i in ctx.passthroughs else ctx.grad_in(i).name
            if t.name not in present:
                present.add(t.name)
                if i in ctx.passthroughs:
                    grad_alias[g] = produced
                continue
            # a further contribution: accumulate (PyTorch's InputBuffer / AccumulateGrad add)
            acc += 1
            if produced == g:  # this op's kernels write their contribution into a buffer of its own
                fresh = f"{g}#{acc}"
                kernels = [_rename(k, g, fresh) for k in kernels]
                produced = fresh
            src = grad_alias.pop(g, g)  # an aliased gradient is added out of place into its own buffer
            gt = grad_of(t)
            pol = op.policy
            gp = TensorInfo(produced, t.dtype, t.shape)
            gs = TensorInfo(src, t.dtype, t.shape)
            kernels.append(Kernel(f"{op.name}::accumulate::{t.name}#{acc}", "accumulate", "Add", "backward",
                                  make_work((gs, gp), (gt,), pol, vector=numel(t)), (gs, gp), (gt,),
                                  policy=pol, source=op.name, scope=op.node.scope))
        if kernels and ctx.saved:
            last = kernels[-1]
            kernels[-1] = replace(last, keeps=last.keeps + tuple(ctx.saved))
        elif ctx.saved and not kernels:
            out.append(Kernel(f"{op.name}::release", "release", "Identity", "backward",
                              OpWork(flops=frozen_map(), bytes_read=0.0, bytes_written=0.0, kernels=0),
                              keeps=tuple(ctx.saved), policy=op.policy, source=op.name))
        out.extend(kernels)
    return out, internals, grad_alias, unsupported


def _rename(k: Kernel, old: str, new: str) -> Kernel:
    def ren(ts):
        return tuple(TensorInfo(new, t.dtype, t.shape) if t.name == old else t for t in ts)

    if not any(t.name == old for t in k.reads + k.writes):
        return k
    w = k.work
    ib = {(new if n == old else n): b for n, b in w.input_bytes.items()}
    return replace(k, reads=ren(k.reads), writes=ren(k.writes), work=replace(w, input_bytes=frozen_map(ib)))


# ------------------------------------------------------------------------------------------ timing
def _with_tensor_cost(pred, node: Node, per_tensor_s: float):
    """A multi-tensor optimizer kernel plus the calibration's cost per tensor it walks (fused/foreach
    launches pay per tensor for its partial chunk and its metadata; fitted on training steps)."""
    n = int(node.attrs.get(TENSORS_ATTR, 0) or 0)
    if not n:
        return pred
    extra = n * per_tensor_s
    return replace(pred, time_s=pred.time_s + extra, extra_time_s=pred.extra_time_s + extra)


def sequence(plan: StepPlan) -> list[tuple[Node, OpWork, PrecisionPolicy, str]]:
    """Every (node, work, policy, phase) of the step in execution order."""
    out = []
    for node, work, pol in plan.forward:
        out.append((node, work, pol, "forward"))
        for k in plan.forward_extra.get(node.name, ()):
            out.append((k.node(), k.work, k.policy or pol, "forward"))
    for k in plan.loss.forward:
        out.append((k.node(), k.work, k.policy or plan.policy, "forward"))
    for k in plan.loss.backward + plan.backward + plan.optimizer:
        if k.work.kernels == 0 and k.kind == "release":
            continue
        out.append((k.node(), k.work, k.policy or plan.policy, k.phase))
    return out


def predict_training_graph(graph: Graph, profile: MachineProfile, precision: str = "fp32",
                           calibration: Calibration | None = None, strict: bool = False, batch: int | None = None,
                           optimizer: str = "adamw", impl: str = "fused", loss: str = "cross_entropy",
                           max_batch_graph: Graph | None = None, optimize=()) -> TrainingPrediction:
    """One training step of ``graph``; ``max_batch_graph``: the same model at another batch size (its peak
    memory with this one's gives the largest batch that fits); ``optimize``: predict_graph's graph passes,
    applied to the forward (nodes they fuse have no backward rule: reported in ``unsupported``)."""
    check_optimizer(optimizer, impl)
    pol = get_policy(precision)
    train_precision(pol)
    cal = calibration or Uncalibrated()
    prepared = prepare_graph(graph, pol, optimize)
    fwd = predict_prepared(prepared, profile, pol, cal, strict=False, batch=batch)
    plan = plan_step(graph, fwd.ops, pol, optimizer, impl, loss, prepared=prepared)
    unsupported = dict(fwd.unsupported)
    for k, v in plan.unsupported.items():
        unsupported[k] = unsupported.get(k, 0) + v
    if strict and unsupported:
        listing = ", ".join(f"{k} x{v}" for k, v in sorted(unsupported.items()))
        raise PredictorError(f"--strict: ops the cost model does not know: {listing}")
    seq = sequence(plan)
    traffic = traffic_for(profile)
    levels = traffic.assign([(n, w) for n, w, _, _ in seq], pol.matmul[1], pol.storage_bytes)
    ops = tuple(cal.predict_op(n, to_cost(n, w, p, lb), profile, p) for (n, w, p, _), lb in zip(seq, levels))
    ops = loops.repeat(ops, plan.repeats)  # Loop/Scan bodies: every iteration
    per_tensor_s = float(getattr(cal, "multi_tensor_per_tensor_s", 0.0))
    if per_tensor_s:
        ops = tuple(_with_tensor_cost(o, n, per_tensor_s) for o, (n, _, _, _) in zip(ops, seq))
    phases = tuple(ph for _, _, _, ph in seq)
    eager_fn = getattr(cal, "eager_time_s", None)
    eager_total, eager_by_phase = None, None
    if eager_fn is not None:
        eager_total = eager_fn(list(ops), 0)
        eager_by_phase, prev = {}, 0.0
        for name in ("forward", "backward", "optimizer"):
            upto = [o for o, ph in zip(ops, phases) if ph == name]
            end = max((i for i, ph in enumerate(phases) if ph == name), default=None)
            cum = eager_fn(list(ops[:end + 1]), 0) if end is not None else prev
            eager_by_phase[name] = cum - prev if upto else 0.0
            prev = cum
    memory, trace = estimate_memory(plan, profile)
    if max_batch_graph is not None and batch and not unsupported:  # with work missing, no claim is made
        other = _batch_of(max_batch_graph)
        if other and other != batch:
            prepared2 = prepare_graph(max_batch_graph, pol, optimize)
            fwd2 = predict_prepared(prepared2, profile, pol, Uncalibrated(), strict=False, batch=other)
            _, trace2 = estimate_memory(plan_step(max_batch_graph, fwd2.ops, pol, optimizer, impl, loss,
                                                  prepared=prepared2), profile)
            memory = replace(memory, max_batch=mem.max_batch(batch, trace, other, trace2, memory.usable_bytes))
    notes = tuple(getattr(fwd, "notes", ()))
    notes += tuple(f"graph optimisation pass {p} applied to the forward" for p in fwd.optimizations)
    if plan.body_repeats:
        notes += (loops.NOTE,)
    if unsupported and max_batch_graph is not None:
        notes += ("largest batch not given: some ops are not costed (their memory is missing too)",)
    if not any(n.op_type == "Dropout" for n in graph.nodes):
        notes += ("no Dropout nodes in the graph (an eval-mode export): dropout kernels not counted",)
    return TrainingPrediction(
        model=os.path.basename(graph.path), gpu=profile.name, precision=pol.name, batch=batch, ops=ops,
        unsupported=frozen_map(unsupported), calibration=cal.name, eager_time_s=eager_total,
        optimizations=tuple(getattr(fwd, "optimizations", ())),
        op_phases=phases, phases=summarise_phases(ops, phases, eager_by_phase), memory=memory,
        optimizer=optimizer, optimizer_impl=impl, loss=loss, notes=notes)


def _batch_of(graph: Graph) -> int | None:
    for dims in graph.input_bindings.values():
        if dims:
            return dims[0]
    return None


def predict_training_file(path: str, gpu: MachineProfile, precision: str = "fp32", batch: int | None = None,
                          shapes: Mapping[str, tuple[int, ...]] | None = None,
                          calibration: Calibration | None = None, strict: bool = False, optimizer: str = "adamw",
                          impl: str = "fused", loss: str = "cross_entropy", max_batch: bool = True,
                          optimize=()) -> TrainingPrediction:
    graph = load(path, batch=batch, shapes=shapes)
    b = batch if batch is not None else _batch_of(graph)
    other = None
    if max_batch and b and graph.input_bindings:
        try:
            other = load(path, batch=2 * b, shapes=shapes)
        except PredictorError:
            other = None
    return predict_training_graph(graph, gpu, precision, calibration, strict, b, optimizer, impl, loss,
                                  max_batch_graph=other, optimize=optimize)


# ------------------------------------------------------------------------------------------ memory
def estimate_memory(plan: StepPlan, profile: MachineProfile) -> tuple[MemoryEstimate, tuple]:
    """The step's peak memory and the live bytes at every kernel (for the largest batch)."""
    ag, pol, tp = plan.autograd, plan.policy, plan.precision
    numels = [numel(t) for t in ag.params.values()]
    sizes: dict[str, float] = {}
    events: list[mem.Event] = []
    static: dict[str, tuple[str, float]] = {}
    for name, t in ag.params.items():
        static[name] = ("parameters", nbytes(t, pol))
    graph_inputs = [t for node, _, _ in plan.forward for t in node.inputs
                    if t is not None and not t.is_initializer]
    produced = {t.name for node, w, _ in plan.forward for t in node.outputs}
    for t in graph_inputs:
        if t.name not in produced and t.name not in static and t.shape is not None:
            static[t.name] = ("inputs", nbytes(t, pol))
    static[plan.loss.target.name] = ("inputs", nbytes(plan.loss.target, pol))
    if tp.master_bytes:  # allocator blocks per tensor
        static["::master_weights"] = ("master_weights", sum(mem.rounded(n * tp.master_bytes) for n in numels))
    opt_name, impl = plan.optimizer_name, plan.optimizer_impl
    if numels:
        static["::optimizer_state"] = ("optimizer_state",
                                       sum(mem.rounded(b) for b in state_tensors(opt_name, impl, numels, tp)))
    static["::cublas_workspace"] = ("workspace", mem.cublas_workspace(profile.arch))
    op_by_name = {op.name: op for op in ag.ops}
    for node, work, p in plan.forward:
        op = op_by_name.get(node.name)
        if op is None:
            continue
        writes = tuple(t.name for t in op.node.outputs if t.name) if work.kernels > 0 else ()
        copies = loops.activation_repeats(plan.body_repeats, node.name)  # a body's, once per iteration
        for t in op.node.outputs:
            if t.name and t.shape is not None:
                sizes[t.name] = nbytes(t, p) * copies
        extra = plan.internals.get(node.name, ())
        for t in extra:
            sizes[t.name] = nbytes(t, p) * copies
        events.append(mem.Event(node.name, "forward", tuple(t.name for t in op.node.inputs if t is not None),
                                writes + tuple(t.name for t in extra)))
        for k in plan.forward_extra.get(node.name, ()):
            events.append(_event(k, sizes, pol))
    for k in plan.loss.forward + plan.loss.backward + plan.backward:
        events.append(_event(k, sizes, pol))
    for k in plan.optimizer:  # updates static buffers in place; only its temporaries are new
        events.append(mem.Event(k.name, k.phase, (), (), (), k.workspace_bytes))
    alias = dict(ag.alias)
    alias.update(plan.grad_alias)
    param_grads = {grad_name(n) for n in ag.params}
    for n in param_grads:
        t = ag.params[n[len(GRAD_PREFIX):]]
        sizes[n] = numel(t) * tp.grad_bytes

    def category(phase: str, buf: str) -> str:
        if buf in param_grads:
            return "gradients"
        if phase == "forward":
            return "activations"
        return "activation_grads" if phase == "backward" else "workspace"

    r = mem.replay(events, sizes, alias, static, param_grads, category)
    totals = dict(r.totals)
    totals["gradients"] = float(sum(mem.rounded(numel(t) * tp.grad_bytes) for t in ag.params.values()))
    usable = max(_memory_bytes(profile) - mem.CONTEXT_RESERVE_BYTES, 0.0)
    return MemoryEstimate(peak_bytes=r.peak_bytes, components=frozen_map(r.components), totals=frozen_map(totals),
                          peak_at=r.peak_at, capacity_bytes=_memory_bytes(profile), usable_bytes=usable,
                          fits=r.peak_bytes <= usable, step_start_bytes=r.step_start_bytes,
                          after_backward_bytes=r.after_backward_bytes), r.trace


def _event(k: Kernel, sizes: dict, pol: PrecisionPolicy) -> mem.Event:
    p = k.policy or pol
    for t in k.writes:
        if t.shape is not None and t.name not in sizes:
            sizes[t.name] = nbytes(t, p)
    return mem.Event(k.name, k.phase, tuple(t.name for t in k.reads), tuple(t.name for t in k.writes),
                     tuple(t.name for t in k.keeps), k.workspace_bytes)


def _memory_bytes(profile: MachineProfile) -> float:
    return float(getattr(profile, "memory_bytes", 0.0) or profile.hbm_bytes)
