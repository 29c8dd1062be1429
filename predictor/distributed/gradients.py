"""What one GPU's training step gives data parallelism: phase times, and when each parameter's gradient is
ready during backward (the order DDP's buckets fill in).

Uses the training-step prediction (predictor/train): the same plan of kernels, timed by the same
calibration; a parameter's gradient is ready when the last backward kernel that writes ``grad::<param>``
ends (its own wgrad, or the accumulation of a shared weight). Times are GPU time on one stream (kernels back
to back, as a captured step runs them).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from ..calibrate import Calibration, Uncalibrated
from ..graph.loader import load
from ..machine.profile import MachineProfile
from ..precision import policy as get_policy
from ..predict import predict_graph
from ..train.kernel import grad_name, numel
from ..train.result import TrainingPrediction
from ..train.step import plan_step, predict_training_graph, sequence
from ..types import PredictorError


@dataclass(frozen=True)
class Gradient:
    name: str
    numel: int
    grad_bytes: float      # in the dtype the step keeps gradients in
    ready_s: float         # from the start of backward


@dataclass(frozen=True)
class StepProfile:
    """One GPU's step, as data parallelism sees it."""

    model: str
    batch: int | None
    precision: str
    forward_s: float
    backward_s: float
    optimizer_s: float
    gradients: tuple[Gradient, ...]    # in the order they become ready
    grad_bytes_per_element: int
    param_bytes_per_element: int
    memory: Mapping[str, float]        # parameters, gradients, optimizer_state, master_weights, peak, activations
    prediction: TrainingPrediction | None = None

    @property
    def step_s(self) -> float:
        return self.forward_s + self.backward_s + self.optimizer_s

    @property
    def gradient_bytes(self) -> float:
        return float(sum(g.grad_bytes for g in self.gradients))

    @property
    def parameters(self) -> int:
        return int(sum(g.numel for g in self.gradients))


def step_profile(path: str, profile: MachineProfile, precision: str = "fp32", batch: int | None = None,
                 shapes=None, calibration: Calibration | None = None, optimizer: str = "adamw",
                 impl: str = "fused", loss: str = "cross_entropy", strict: bool = False) -> StepProfile:
    """The single-GPU step of ``path`` and its gradients' ready times."""
    graph = load(path, batch=batch, shapes=shapes)
    b = batch
    if b is None:
        for dims in graph.input_bindings.values():
            if dims:
                b = dims[0]
                break
    cal = calibration or Uncalibrated()
    pred = predict_training_graph(graph, profile, precision, cal, strict, b, optimizer, impl, loss)
    pol = get_policy(precision)
    fwd = predict_graph(graph, profile, precision, cal, strict=False, batch=b)
    plan = plan_step(graph, fwd.ops, pol, optimizer, impl, loss)
    seq = sequence(plan)
    if len(seq) != len(pred.ops):  # the prediction and its plan come from the same functions
        raise PredictorError(f"{path}: training plan and prediction disagree ({len(seq)} vs {len(pred.ops)} kernels)")
    want = {grad_name(n): n for n in plan.autograd.params}
    t, ready = 0.0, {}
    for (node, _w, _p, phase), op in zip(seq, pred.ops):
        if phase != "backward":
            continue
        t += op.time_s
        for out in node.outputs:
            if out.name in want:
                ready[want[out.name]] = t
    bwd_s = pred.phase("backward").time_s
    gb = plan.precision.grad_bytes
    grads = [Gradient(n, numel(ti), float(numel(ti) * gb), ready.get(n, bwd_s)) for n, ti in plan.autograd.params.items()]
    grads.sort(key=lambda g: g.ready_s)
    m = pred.memory
    mem = dict(m.totals) if m is not None else {}
    if m is not None:
        mem["peak"] = m.peak_bytes
        mem["capacity"] = m.capacity_bytes
        mem["usable"] = m.usable_bytes
        mem.update({f"at_peak.{k}": v for k, v in m.components.items()})
    pbytes = int(pol.storage_bytes) if hasattr(pol, "storage_bytes") else 4
    return StepProfile(model=pred.model, batch=b, precision=pred.precision, forward_s=pred.phase("forward").time_s,
                       backward_s=bwd_s, optimizer_s=pred.phase("optimizer").time_s, gradients=tuple(grads),
                       grad_bytes_per_element=int(gb), param_bytes_per_element=pbytes, memory=mem, prediction=pred)


def synthetic_step(forward_s: float, backward_s: float, optimizer_s: float,
                   gradients: list[tuple[str, int, float]], grad_bytes: int = 4,
                   memory: Mapping[str, float] | None = None) -> StepProfile:
    """A hand-made step (tests, what-ifs): gradients as (name, numel, ready_s)."""
    gs = tuple(sorted((Gradient(n, k, float(k * grad_bytes), r) for n, k, r in gradients), key=lambda g: g.ready_s))
    return StepProfile("synthetic", None, "fp32", forward_s, backward_s, optimizer_s, gs, grad_bytes, grad_bytes,
                       dict(memory or {}))
