"""Loop and Scan bodies in a training step: every iteration's forward, backward and memory.

graph/control_flow.py inlines a body once and records how many times each of its nodes runs
(``ControlFlow.repeats``); the inference pipeline multiplies their costs. A training step unrolls the loop as
PyTorch's autograd records it, so here:

* **forward**: each body node's kernels (and the training-only kernels after it) run ``repeats`` times;
* **backward**: each backward kernel of a body node (``Kernel.source``) runs ``repeats`` times, the
  per-iteration gradient accumulations included;
* **carried state**: the inlined body reads the loop's initial value in every iteration, where the unrolled
  loop reads the previous iteration's output. When that output requires a gradient (the body uses
  parameters), the initial value is made to require one too (:func:`carried_seeds`), so the body's kernels
  compute the data gradient that flows from iteration t to t-1 (for every iteration: the first one's,
  which nothing needs when the initial value is data, is one of ``repeats``);
* **parameters read in a body**: each iteration adds its weight gradient into the parameter's gradient
  buffer: ``repeats - 1`` accumulation kernels (an Add over the parameter) per parameter and body node
  (:func:`iteration_accumulations`);
* **memory**: the tensors a body node writes are kept for every iteration (the backward of iteration t reads
  iteration t's activations): their bytes are multiplied by ``repeats`` (:func:`activation_repeats`).

Not modelled: ONNX Runtime's or PyTorch's per-iteration host overhead, and a body whose iterations differ
(a data-dependent early exit is costed at the trip count or its bound).
"""
from __future__ import annotations

from typing import Mapping, Sequence

from ..types import OpPrediction, frozen_map
from .autograd import AutogradGraph
from .kernel import Kernel, grad_of, make_work, numel

NOTE = ("Loop/Scan bodies: forward and backward kernels repeated per iteration, every iteration's activations "
        "kept for the backward, weight gradients accumulated over the iterations")


def body_repeats(graph) -> Mapping[str, int]:
    """Forward node -> runs per step (more than 1) of the graph's Loop/Scan bodies; empty without any."""
    control = getattr(graph, "control", None)
    return control.repeats if control is not None and control.repeats else frozen_map()


def carried_seeds(ag: AutogradGraph, graph) -> frozenset:
    """Initial values of loop-carried state whose next value requires a gradient, and that only body nodes
    read (a tensor also read outside the loop keeps its own autograd status)."""
    control = getattr(graph, "control", None)
    carried = getattr(control, "carried", None)
    if not carried:
        return frozenset()
    repeats = control.repeats
    readers: dict[str, set[str]] = {}
    for op in ag.ops:
        for t in op.node.inputs:
            if t is not None:
                readers.setdefault(t.name, set()).add(op.name)
    out = set()
    for init, nxt in carried.items():
        if init in ag.requires_grad or nxt not in ag.requires_grad:
            continue
        users = readers.get(init, set())
        if users and all(repeats.get(name, 1) > 1 for name in users):
            out.add(init)
    return frozenset(out)


def iteration_accumulations(ag: AutogradGraph, repeats: Mapping[str, int],
                            backward: Sequence[Kernel]) -> tuple[list[Kernel], dict[str, int]]:
    """The backward with, after each body node's kernels, the Adds that sum its iterations' weight gradients
    into each parameter it reads; and how many times each added kernel runs (``repeats - 1``)."""
    extra: dict[str, list[Kernel]] = {}
    times: dict[str, int] = {}
    for op in ag.ops:
        r = repeats.get(op.name, 1)
        if r <= 1 or not ag.needs_backward(op):
            continue
        for i, need in enumerate(ag.needs(op)):
            t = op.node.inputs[i]
            if not need or t is None or t.name not in ag.params:
                continue
            g = grad_of(t)
            k = Kernel(f"{op.name}::accumulate_iterations::{t.name}", "accumulate", "Add", "backward",
                       make_work((g, g), (g,), op.policy, vector=numel(t)), (g, g), (g,), policy=op.policy,
                       source=op.name, scope=op.node.scope)
            extra.setdefault(op.name, []).append(k)
            times[k.name] = r - 1
    if not extra:
        return list(backward), times
    last = {k.source: j for j, k in enumerate(backward) if k.source in extra}
    out: list[Kernel] = []
    for j, k in enumerate(backward):
        out.append(k)
        if last.get(k.source) == j:
            out.extend(extra.pop(k.source))
    return out, times


def kernel_repeats(repeats: Mapping[str, int], forward_extra: Mapping[str, Sequence[Kernel]],
                   backward: Sequence[Kernel], accumulations: Mapping[str, int]) -> Mapping[str, int]:
    """Kernel or forward node name -> how many times it runs in the step (only those that run more than once)."""
    if not repeats:
        return frozen_map()
    out = {name: r for name, r in repeats.items() if r > 1}
    for node, ks in forward_extra.items():
        if repeats.get(node, 1) > 1:
            out.update((k.name, repeats[node]) for k in ks)
    for k in backward:
        if k.name in accumulations:
            out[k.name] = accumulations[k.name]
        elif repeats.get(k.source, 1) > 1:
            out[k.name] = repeats[k.source]
    return frozen_map(out)


def repeat(ops: Sequence[OpPrediction], times: Mapping[str, int]) -> tuple[OpPrediction, ...]:
    """Each op run ``times[name]`` times (time, FLOPs, bytes and kernels multiplied)."""
    if not times:
        return tuple(ops)
    from ..graph.control_flow import scaled

    return tuple(scaled(o, times[o.cost.name]) if times.get(o.cost.name, 1) != 1 else o for o in ops)


def activation_repeats(repeats: Mapping[str, int], node_name: str) -> int:
    """How many copies of a forward node's outputs the step keeps (one per iteration)."""
    return max(1, int(repeats.get(node_name, 1)))
