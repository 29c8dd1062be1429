"""Elementwise backward: activations, arithmetic, casts, and the fused GELU/SiLU kernels.

Unary ops: one kernel reading the output gradient and the saved tensor (the op's input or output, as
PyTorch's derivative formula uses it: ``threshold_backward(grad, result)`` for ReLU, ``sigmoid_backward(grad,
result)``, ``gelu_backward(grad, self)``...) and writing the input gradient; FLOPs per element in the table.
Binary ops (derivatives.yaml):

    Add      dA = dY, dB = dY                    no kernel (the output gradient itself); a broadcast
                                                 operand: a ``sum_to_size`` reduction kernel
    Sub      dA = dY, dB = -dY                   neg kernel for B
    Mul      dA = dY * B, dB = dY * A            1 kernel per operand (saves the other operand)
    Div      dA = dY / B, dB = -dY * A / B^2     1 kernel for A, 2 for B ((A / B) / B, then * -dY)
    Pow      dX = dY * c * X^(c-1)               3 kernels (pow, scale, multiply), as pow_backward
    Where    dX = where(c, dY, 0), dY' = where(c, 0, dY)   1 kernel per branch (saves the condition)
    Max/Min  a mask-multiply kernel per operand (saves both)

A broadcast operand's product is computed at full size and then reduced (2 kernels).
Fused (graph/runtime.py's GELU / SiLU chains): one kernel reading dY and x, about twice the forward
arithmetic (the derivative re-evaluates the function and its slope). Casts: the gradient is cast back
(1 kernel) when the forward cast launched one. Dropout (a training export's): dY times the saved mask.
"""
from __future__ import annotations

from ...graph.ops._common import TRANSCENDENTAL as T
from ...types import WorkKind
from ..registry import backward

# op -> (FLOPs per element of the backward kernel, what the formula reads: "input", "output" or "none")
UNARY: dict[str, tuple[float, str]] = {
    "Relu": (1, "output"),            # grad * (y > 0): compare-select
    "LeakyRelu": (2, "input"), "ThresholdedRelu": (1, "input"),
    "Sigmoid": (3, "output"),         # grad * y * (1 - y)
    "Tanh": (3, "output"),            # grad * (1 - y^2)
    "Exp": (1, "output"),             # grad * y
    "Log": (1, "input"),              # grad / x
    "Sqrt": (2, "output"),            # grad / (2 y)
    "Reciprocal": (3, "output"),      # -grad * y^2
    "Neg": (1, "none"),
    "Abs": (2, "input"),              # grad * sign(x)
    "Sign": (0, "none"), "Floor": (0, "none"), "Ceil": (0, "none"), "Round": (0, "none"),
    "Clip": (2, "input"),             # grad where min <= x <= max
    "Erf": (T + 3, "input"),          # grad * 2/sqrt(pi) * exp(-x^2): square, exp, 2 multiplies
    "Gelu": (2 * T + 6, "input"),     # gelu_backward: cdf (erf) and pdf (exp) of x, 6 multiply-adds
    "Sin": (T + 1, "input"), "Cos": (T + 2, "input"),
    "Softplus": (T + 3, "input"),     # grad * sigmoid(x)
    "Softsign": (4, "input"),
    "Elu": (3, "output"), "Selu": (3, "input"), "Celu": (3, "input"),
    "HardSigmoid": (3, "input"), "HardSwish": (4, "input"),
    "Mish": (3 * T + 8, "input"),
    "Swish": (T + 6, "input"),
}


def _unary(fpe: float, reads: str):
    def rule(ctx):
        gy = ctx.grad_out(0)
        saved = ctx.input(0) if reads == "input" else ctx.output(0) if reads == "output" else None
        ctx.save(saved)
        return [ctx.kernel("bwd", (gy, saved), (ctx.grad_in(0),), vector=fpe * ctx.numel(gy))]

    rule.__doc__ = f"1 kernel, {fpe} FLOPs per element, reads dY and the op's {reads}."
    return rule


for _op, (_f, _r) in UNARY.items():
    backward(_op, diff=(0,))(_unary(_f, _r))


@backward("PRelu")
def prelu(ctx):
    """dX = dY * (x > 0 ? 1 : slope) (1 kernel); dslope = sum of dY * x where x < 0 (+ reduction)."""
    x, slope, gy = ctx.input(0), ctx.input(1), ctx.grad_out(0)
    ctx.save(x, slope)
    out = ctx.elementwise_grad(0, "d0", (gy, x, slope), 2) if ctx.needs_grad(0) else []
    if ctx.needs_grad(1):
        out += ctx.elementwise_grad(1, "d1", (gy, x), 2)
    return out


@backward("Add", "Sum")
def add(ctx):
    out = []
    for i in range(len(ctx.node.inputs)):
        if ctx.needs_grad(i):
            out.extend(ctx.pass_or_reduce(i, f"d{i}"))
    return out


@backward("Mean")
def mean(ctx):
    n = sum(1 for t in ctx.node.inputs if t is not None)
    return [k for i in range(len(ctx.node.inputs)) if ctx.needs_grad(i)
            for k in ctx.elementwise_grad(i, f"d{i}", (ctx.grad_out(0),), 1)] if n > 1 else _view(ctx)


def _view(ctx):
    ctx.passthrough(0)
    return []


@backward("Sub")
def sub(ctx):
    out = ctx.pass_or_reduce(0, "d0") if ctx.needs_grad(0) else []
    if ctx.needs_grad(1):
        out += ctx.elementwise_grad(1, "d1", (ctx.grad_out(0),), 1, op_type="Neg")
    return out


@backward("Mul")
def mul(ctx):
    out = []
    for i in (0, 1):
        if ctx.needs_grad(i):
            other = ctx.input(1 - i)
            ctx.save(other)
            out += ctx.elementwise_grad(i, f"d{i}", (ctx.grad_out(0), other), 1)
    return out


@backward("Div")
def div(ctx):
    a, b = ctx.input(0), ctx.input(1)
    gy = ctx.grad_out(0)
    out = []
    if ctx.needs_grad(0):
        ctx.save(b)
        out += ctx.elementwise_grad(0, "d0", (gy, b), 1)
    if ctx.needs_grad(1):
        ctx.save(a, b)
        tmp = ctx.temp("a_over_b2", gy)
        out.append(ctx.kernel("d1_ratio", (a, b), (tmp,), vector=2 * ctx.numel(gy)))
        out += ctx.elementwise_grad(1, "d1", (gy, tmp), 2)
    return out


@backward("Pow")
def pow_(ctx):
    x, gy = ctx.input(0), ctx.grad_out(0)
    out = []
    if ctx.needs_grad(0):
        ctx.save(x, ctx.input(1))
        t1 = ctx.temp("pow", x)
        t2 = ctx.temp("scaled", x)
        n = ctx.numel(x)
        out.append(ctx.kernel("d0_pow", (x, ctx.input(1)), (t1,), vector=(2 * T + 2) * n))  # exp(c1 log x)
        out.append(ctx.kernel("d0_scale", (t1,), (t2,), vector=n))
        out += ctx.elementwise_grad(0, "d0", (gy, t2), 1)
    if ctx.needs_grad(1):  # d/dc x^c = x^c log x
        ctx.save(x, ctx.output(0))
        out += ctx.elementwise_grad(1, "d1", (gy, x, ctx.output(0)), T + 2)
    return out


@backward("Where", diff=(1, 2))
def where(ctx):
    cond = ctx.input(0)
    ctx.save(cond)
    out = []
    for i in (1, 2):
        if ctx.needs_grad(i):
            out += ctx.elementwise_grad(i, f"d{i}", (ctx.grad_out(0), cond), 1)
    return out


@backward("Max", "Min")
def max_min(ctx):
    out = []
    ins = [t for t in ctx.node.inputs if t is not None]
    ctx.save(*ins)
    for i in range(len(ctx.node.inputs)):
        if ctx.needs_grad(i):
            out += ctx.elementwise_grad(i, f"d{i}", (ctx.grad_out(0), *ins), 2)
    return out


@backward("FusedElementwise", diff=(0,))
def fused_elementwise(ctx):
    """GELU/SiLU as one kernel: dX from dY and x, twice the forward's FLOPs per element."""
    x, gy = ctx.input(0), ctx.grad_out(0)
    ctx.save(x)
    return [ctx.kernel("bwd", (gy, x), (ctx.grad_in(0),), vector=2 * ctx.work.flops.get(WorkKind.VECTOR, 0.0))]


@backward("FusedVar", diff=(0,))
def fused_var(ctx):
    """torch.var / std (one Welford kernel forward): var_backward is 2 / (N - correction) * dY * (x - mean(x)): the
    mean again (a reduction reading x), the centred x, and its product with dY broadcast over the reduced rows (3
    kernels). Ignores std's extra small kernel (dY / (2 std)) on the reduced tensor."""
    x, gy = ctx.input(0), ctx.grad_out(0)
    ctx.save(x)
    n = ctx.numel(x)
    mean = ctx.temp("mean", like=gy)
    centred = ctx.temp("centred", like=x)
    return [ctx.kernel("bwd_mean", (x,), (mean,), vector=n),
            ctx.kernel("bwd_centre", (x, mean), (centred,), vector=n),
            ctx.kernel("bwd", (centred, gy), (ctx.grad_in(0),), vector=2 * n)]


@backward("Dropout", diff=(0,))
def dropout(ctx):
    """Training-mode dropout (train/forward.py): dX = dY * mask * scale, 1 kernel reading the 1-byte mask."""
    x = ctx.input(0)
    mask = ctx.internal("mask", "bool", ctx.shape(x))
    return [ctx.kernel("bwd", (ctx.grad_out(0), mask), (ctx.grad_in(0),), vector=2 * ctx.numel(x))]


@backward("Cast", "CastLike", diff=(0,))
def cast(ctx):
    """The gradient cast back to the input's type: 1 kernel (the forward cast launched one)."""
    return [ctx.kernel("bwd", (ctx.grad_out(0),), (ctx.grad_in(0),))]


@backward("AmpCast", domain="ai.predictor", diff=(0,))
def amp_cast(ctx):
    """autocast's cast: its backward (ToCopyBackward) casts the gradient back, 1 kernel. A weight's cast
    gradient becomes the fp32 parameter gradient."""
    return [ctx.kernel("bwd", (ctx.grad_out(0),), (ctx.grad_in(0),))]
