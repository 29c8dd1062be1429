"""The optimizer step: its kernels (multi-tensor launches), bytes and FLOPs per parameter, and its state.

Each optimizer is a list of passes over every parameter tensor; a pass names the per-element tensors it
reads and writes by role (p: the weights it updates, fp32 masters when there are any; g: gradient; m, v:
first and second moments; buf: momentum; tmp/u: fp32 temporaries; w16: the 16-bit model copy). Bytes per
element of a role come from train/precision.py; FLOPs per element are in the tables (FMA = 2).

``fused`` (``torch.optim.*(fused=True)``, apex FusedLAMB): one multi-tensor kernel pass (launches from
train/multitensor.py), e.g. AdamW reads p, g, m, v and writes p, m, v: 16 + 12 = 28 bytes per fp32
parameter, 14 FLOPs; Adam(W) also increments its per-tensor step counters on the device (one more
multi-tensor pass over one-element tensors). ``foreach`` (PyTorch's default on CUDA): each arithmetic step
is a ``torch._foreach_*`` op, i.e. its own multi-tensor pass (AdamW: 8 passes, 84 bytes per fp32 parameter,
and an fp32 temporary the size of all parameters for sqrt(v)). ``forloop`` (``foreach=False``): the same
passes as one kernel per parameter tensor. zero_grad(set_to_none=True) launches nothing.

Mixed precision: with fp32 masters (fp16/bf16 storage) the updated weights are copied back to the 16-bit
ones (a pass reading 4 and writing 2 bytes per parameter); fused kernels read the 16-bit gradients
directly (apex/DeepSpeed style), foreach/forloop first cast them to fp32 (a pass, plus an fp32 gradient
copy in memory). GradScaler (fp16, amp): 2 fills, the non-finite check + unscale pass over the gradients,
the found_inf sum and the scale update.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ..graph.opclass import MULTI_TENSOR_ATTR
from ..precision import PrecisionPolicy
from ..types import OpWork, PredictorError, TensorInfo, WorkKind, frozen_map
from .kernel import Kernel, tiny
from .multitensor import launches
from .precision import TrainPrecision

OPTIMIZERS = ("sgd", "adam", "adamw", "lamb")
IMPLS = ("fused", "foreach", "forloop")


@dataclass(frozen=True)
class Pass:
    label: str
    reads: tuple[str, ...]
    writes: tuple[str, ...]
    flops: float          # per element
    depth: int            # tensor lists of the multi-tensor kernel
    scalar_list: bool = False
    cleanup: int = 0      # extra tiny kernels (a norm's final reduction)


_P = Pass
_ADAM_MOMENTS = (
    _P("lerp_exp_avg", ("m", "g"), ("m",), 3, 2),
    _P("mul_exp_avg_sq", ("v",), ("v",), 1, 1),
    _P("addcmul_exp_avg_sq", ("v", "g", "g"), ("v",), 3, 3),
)
_ADAM_UPDATE = (
    _P("sqrt", ("v",), ("tmp",), 1, 2),
    _P("div_bias_correction", ("tmp",), ("tmp",), 1, 1, scalar_list=True),
    _P("add_eps", ("tmp",), ("tmp",), 1, 1),
    _P("addcdiv_param", ("p", "m", "tmp"), ("p",), 3, 3, scalar_list=True),
)
PASSES: dict[tuple[str, str], tuple[Pass, ...]] = {
    ("sgd", "fused"): (_P("sgd", ("p", "g", "buf"), ("p", "buf"), 4, 3),),
    ("adam", "fused"): (_P("adam", ("p", "g", "m", "v"), ("p", "m", "v"), 13, 4),),
    ("adamw", "fused"): (_P("adamw", ("p", "g", "m", "v"), ("p", "m", "v"), 14, 4),),
    ("lamb", "fused"): (
        _P("grad_norm", ("g",), (), 2, 1, cleanup=1),
        _P("lamb_stage1", ("p", "g", "m", "v"), ("g", "m", "v"), 16, 4),  # the update overwrites g
        _P("param_norm", ("p",), (), 2, 1, cleanup=1),
        _P("update_norm", ("g",), (), 2, 1, cleanup=1),
        _P("lamb_stage2", ("p", "g"), ("p",), 3, 2),
    ),
    ("sgd", "foreach"): (
        _P("mul_momentum", ("buf",), ("buf",), 1, 1),
        _P("add_grad", ("buf", "g"), ("buf",), 2, 2),
        _P("add_param", ("p", "buf"), ("p",), 2, 2),
    ),
    ("adam", "foreach"): _ADAM_MOMENTS + _ADAM_UPDATE,
    ("adamw", "foreach"): (_P("mul_weight_decay", ("p",), ("p",), 1, 1),) + _ADAM_MOMENTS + _ADAM_UPDATE,
    ("lamb", "foreach"): (
        _P("grad_norm", ("g",), (), 2, 1, cleanup=1),
    ) + _ADAM_MOMENTS + (
        _P("sqrt", ("v",), ("tmp",), 1, 2),
        _P("add_eps", ("tmp",), ("tmp",), 1, 1),
        _P("div_update", ("m", "tmp"), ("u",), 1, 3),
        _P("add_weight_decay", ("u", "p"), ("u",), 2, 2),
        _P("param_norm", ("p",), (), 2, 1, cleanup=1),
        _P("update_norm", ("u",), (), 2, 1, cleanup=1),
        _P("mul_trust_ratio", ("u",), ("u",), 1, 1, scalar_list=True),
        _P("add_param", ("p", "u"), ("p",), 2, 2),
    ),
}
STATE_TENSORS = {"sgd": ("buf",), "adam": ("m", "v"), "adamw": ("m", "v"), "lamb": ("m", "v")}
STEP_COUNTERS = frozenset({"adam", "adamw"})  # per-tensor step tensors (on the device when fused)
TEMPS = ("tmp", "u", "g32")


TENSORS_ATTR = MULTI_TENSOR_ATTR  # Kernel.attrs key: tensors one multi-tensor launch sequence walks


def check(optimizer: str, impl: str) -> None:
    if optimizer not in OPTIMIZERS:
        raise PredictorError(f"unknown optimizer '{optimizer}' (known: {', '.join(OPTIMIZERS)})")
    if impl not in IMPLS:
        raise PredictorError(f"unknown optimizer implementation '{impl}' (known: {', '.join(IMPLS)})")


def role_bytes(tp: TrainPrecision) -> dict[str, int]:
    g32 = 4 if tp.grad_bytes < 4 else tp.grad_bytes
    return {"p": tp.update_bytes, "g": tp.grad_bytes, "m": tp.state_bytes, "v": tp.state_bytes,
            "buf": tp.state_bytes, "tmp": 4, "u": 4, "w16": tp.param_bytes, "g32": g32}


def passes(optimizer: str, impl: str, tp: TrainPrecision) -> tuple[Pass, ...]:
    """Every pass of one step: [grad cast] + the optimizer's + [master copy]."""
    check(optimizer, impl)
    body = PASSES[(optimizer, "foreach" if impl == "forloop" else impl)]
    pre: tuple[Pass, ...] = ()
    if tp.master_bytes and impl != "fused":  # fp32 master gradients first
        pre = (_P("cast_grads", ("g",), ("g32",), 0, 2),)
        body = tuple(Pass(p.label, tuple("g32" if r == "g" else r for r in p.reads),
                          tuple("g32" if w == "g" else w for w in p.writes), p.flops, p.depth, p.scalar_list,
                          p.cleanup) for p in body)
    post = (_P("copy_to_model_weights", ("p",), ("w16",), 0, 2),) if tp.master_bytes else ()
    return pre + body + post


def state_tensors(optimizer: str, impl: str, numels: Sequence[int], tp: TrainPrecision) -> list[float]:
    """Bytes of every optimizer state tensor: the per-element ones (fp32) of each parameter, plus Adam's
    step counters (a 4-byte tensor per parameter on the device when fused; on the host otherwise)."""
    check(optimizer, impl)
    per = len(STATE_TENSORS[optimizer])
    out = [float(n * tp.state_bytes) for n in numels for _ in range(per)]
    if optimizer in STEP_COUNTERS and impl == "fused":
        out += [4.0] * len(numels)
    return out


def state_bytes(optimizer: str, impl: str, numels: Sequence[int], tp: TrainPrecision) -> float:
    """Optimizer state in bytes (see :func:`state_tensors`)."""
    return float(sum(state_tensors(optimizer, impl, numels, tp)))


def temp_bytes(optimizer: str, impl: str, numels: Sequence[int], tp: TrainPrecision) -> float:
    """Transient memory of the step: the fp32 temporaries its passes create (all parameters' size each)."""
    rb = role_bytes(tp)
    roles = {r for p in passes(optimizer, impl, tp) for r in p.reads + p.writes if r in TEMPS}
    return float(sum(numels)) * sum(rb[r] for r in roles)


def optimizer_kernels(optimizer: str, impl: str, numels: Sequence[int], tp: TrainPrecision,
                      policy: PrecisionPolicy) -> list[Kernel]:
    """The optimizer phase's kernels, in order (GradScaler's first when it runs)."""
    rb = role_bytes(tp)
    workspace = temp_bytes(optimizer, impl, numels, tp)
    out: list[Kernel] = []
    if tp.grad_scaler:
        out.append(tiny("optimizer::scaler_fills", "scaler", "optimizer", policy, "ConstantOfShape", kernels=2))
        out.append(_pass_kernel(_P("unscale_check_inf", ("g",), ("g",), 1, 1), numels, impl, rb, policy, 0.0,
                                "scaler"))
        out.append(tiny("optimizer::found_inf", "scaler", "optimizer", policy, "Add"))
    if optimizer in STEP_COUNTERS and impl == "fused":
        steps = [1] * len(numels)
        out.append(_pass_kernel(_P("step_counters", ("step",), ("step",), 1, 1), steps, impl, {"step": 4},
                                policy, 0.0, optimizer))
    for p in passes(optimizer, impl, tp):
        uses_temp = any(r in TEMPS for r in p.reads + p.writes)
        out.append(_pass_kernel(p, numels, impl, rb, policy, workspace if uses_temp else 0.0, optimizer))
    if tp.grad_scaler:
        out.append(tiny("optimizer::update_scale", "scaler", "optimizer", policy, "Add"))
    return out


def _pass_kernel(p: Pass, numels: Sequence[int], impl: str, rb: dict, policy: PrecisionPolicy,
                 workspace: float, kind: str) -> Kernel:
    n = float(sum(numels))
    if impl == "forloop":
        kernels = sum(1 for x in numels if x > 0)
    else:
        kernels = launches(numels, p.depth, p.scalar_list)
    kernels += p.cleanup
    read = {}
    for r in p.reads:
        read[f"optimizer::{r}"] = read.get(f"optimizer::{r}", 0.0) + rb[r] * n
    written = sum(rb[w] * n for w in p.writes)
    if p.cleanup and not p.writes:
        written = 4.0 * len(numels)  # one norm per tensor
    reads = tuple(TensorInfo(name, "float32", (int(n),)) for name in read)
    writes = tuple(TensorInfo(f"optimizer::{w}", "float32", (int(n),)) for w in p.writes) or \
        (TensorInfo(f"optimizer::{p.label}::norms", "float32", (len(numels),)),)
    work = OpWork(flops=frozen_map({WorkKind.VECTOR: p.flops * n}), bytes_read=float(sum(read.values())),
                  bytes_written=float(written), kernels=max(kernels, 1), input_bytes=frozen_map(read),
                  notes=(f"{impl} {kind}: {p.label}",))
    # multi-tensor kernels walk a list of tensors: the calibration's per-tensor cost applies (step.py)
    attrs = frozen_map({TENSORS_ATTR: len(numels)}) if impl != "forloop" else frozen_map()
    return Kernel(f"optimizer::{p.label}", kind, "Mul", "optimizer", work, reads, writes,
                  workspace_bytes=workspace, policy=policy, attrs=attrs)


def bytes_per_param(optimizer: str, impl: str, tp: TrainPrecision) -> tuple[float, float]:
    """(bytes read, bytes written) per parameter element of the optimizer's passes (no scaler)."""
    rb = role_bytes(tp)
    ps = passes(optimizer, impl, tp)
    return float(sum(rb[r] for p in ps for r in p.reads)), float(sum(rb[w] for p in ps for w in p.writes))


def flops_per_param(optimizer: str, impl: str, tp: TrainPrecision) -> float:
    return float(sum(p.flops for p in passes(optimizer, impl, tp)))
