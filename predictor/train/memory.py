"""Peak memory of one training step, as PyTorch's caching allocator counts it (``max_memory_allocated``).

The step is replayed in order over buffers (a buffer is a tensor name; views and pass-through gradients
alias the buffer they view): a buffer is allocated at its first write, in the allocator's 512-byte blocks,
and freed after its last read, except what lives across the step. Live at the start (after warm-up, the
measured protocol): parameters, the fp32 master copy, optimizer state, the step's inputs and loss target,
and the cuBLAS workspaces (one per handle: the forward's thread and the autograd engine's device thread;
32 MiB each on Hopper and later, 8 MiB before, PyTorch's default CUBLAS_WORKSPACE_CONFIG). Parameter
gradients, once written, live until ``zero_grad(set_to_none=True)`` after the optimizer. Forward tensors
that a backward kernel reads or keeps (saved activations) live until that kernel; everything else dies after
its last reader. The peak is the largest sum of live buffers plus the running kernel's own workspace (flash
attention's dQ accumulator, the foreach optimizer's temporaries).

Affine in the batch size at every kernel (every activation scales with the batch, the rest does not), so
two batch sizes give each kernel's live bytes as a + b x batch, and the largest batch that fits is the
smallest over kernels of (usable - a) / b (:func:`max_batch`; the peak moves between kernels as the batch
grows: at small batches it can sit at the optimizer, where parameters, gradients and state are all live).
Ignores: fragmentation (reserved over allocated), cuDNN's per-call workspaces, the CUDA context (the usable
memory is the profile's ``memory_bytes`` less CONTEXT_RESERVE_BYTES).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Iterable, Mapping, Sequence

BLOCK = 512
CUBLAS_WORKSPACE_HOPPER = 4096 * 8 * 1024            # ":4096:8" on sm90+
CUBLAS_WORKSPACE_DEFAULT = 4096 * 1024 * 2 + 16 * 1024 * 8  # ":4096:2:16:8"
CUBLAS_HANDLES = 2
# torch.cuda's total_memory is 615 MiB below nvidia-smi's total on the H200 (calibration/data/h200/env), and a
# process's CUDA context takes about 0.5 GiB more: assumed the same on every GPU
CONTEXT_RESERVE_BYTES = 1 << 30

CATEGORIES = ("parameters", "master_weights", "optimizer_state", "inputs", "workspace", "gradients",
              "activations", "activation_grads")


def rounded(n: float) -> float:
    return float(math.ceil(max(n, 0.0) / BLOCK) * BLOCK) if n > 0 else 0.0


def cublas_workspace(arch: str) -> float:
    per = CUBLAS_WORKSPACE_HOPPER if arch.lower() in ("hopper", "blackwell") else CUBLAS_WORKSPACE_DEFAULT
    return float(CUBLAS_HANDLES * per)


@dataclass(frozen=True)
class Event:
    """One kernel as memory sees it."""

    label: str
    phase: str
    reads: tuple[str, ...]
    writes: tuple[str, ...]
    keeps: tuple[str, ...] = ()
    workspace: float = 0.0


@dataclass(frozen=True)
class Replay:
    peak_bytes: float
    components: Mapping[str, float]
    peak_at: str
    step_start_bytes: float
    after_backward_bytes: float
    saved_activation_bytes: float
    totals: Mapping[str, float]
    trace: tuple[tuple[str, float], ...] = ()  # (event label, live bytes while it runs) for every event


def replay(events: Sequence[Event], sizes: Mapping[str, float], alias: Mapping[str, str],
           static: Mapping[str, tuple[str, float]], persistent: Iterable[str],
           category: Callable[[str, str], str]) -> Replay:
    """``static``: buffer -> (category, bytes) live from the start; ``persistent``: buffers that, once written,
    stay to the end; ``category(phase, buffer)`` names a new buffer's kind. Linear in the events."""

    def base(name: str) -> str:
        for _ in range(64):
            nxt = alias.get(name)
            if nxt is None or nxt == name:
                return name
            name = nxt
        return name

    keep_forever = {base(n) for n in persistent}
    last: dict[str, int] = {}
    for i, e in enumerate(events):
        for n in e.reads + e.writes + e.keeps:
            last[base(n)] = i
    by_cat = {c: 0.0 for c in CATEGORIES}
    for cat, b in static.values():
        by_cat[cat] = by_cat.get(cat, 0.0) + rounded(b)
    live: dict[str, tuple[str, float]] = {}
    cur = sum(by_cat.values())
    start = cur
    peak, peak_at, snap = cur, "step start", dict(by_cat)
    after_backward = cur
    saved = 0.0
    trace: list[tuple[str, float]] = []
    prev_phase = events[0].phase if events else ""
    for i, e in enumerate(events):
        if e.phase != prev_phase:
            if prev_phase == "backward":
                after_backward = cur
            prev_phase = e.phase
        for n in e.writes:
            b = base(n)
            if b in live or b in static:
                continue
            size = rounded(sizes.get(b, sizes.get(n, 0.0)))
            cat = category(e.phase, b)
            live[b] = (cat, size)
            by_cat[cat] = by_cat.get(cat, 0.0) + size
            cur += size
        total = cur + e.workspace
        trace.append((e.label, total))
        if total > peak:
            peak, peak_at = total, f"{e.phase}: {e.label}"
            snap = dict(by_cat)
            snap["workspace"] = snap.get("workspace", 0.0) + e.workspace
        for n in set(e.reads + e.writes + e.keeps):
            b = base(n)
            if b in live and last.get(b, -1) == i and b not in keep_forever:
                cat, size = live.pop(b)
                if cat == "activations" and e.phase != "forward":
                    saved += size
                by_cat[cat] -= size
                cur -= size
    if prev_phase == "backward":
        after_backward = cur
    totals = {c: 0.0 for c in CATEGORIES}
    for cat, b in static.values():
        totals[cat] += rounded(b)
    totals["saved_activations"] = saved
    return Replay(peak, {k: v for k, v in snap.items()}, peak_at, start, after_backward, saved, totals,
                  tuple(trace))


def max_batch(batch: int, trace: Sequence[tuple[str, float]], batch2: int, trace2: Sequence[tuple[str, float]],
              usable: float) -> int | None:
    """Largest batch whose live bytes fit in ``usable`` at every kernel, each kernel's bytes affine in the
    batch through its values at ``batch`` and ``batch2`` (kernels are matched by label; ones that only one
    batch size has are skipped). 0 when not even batch 1 fits; None when nothing grows with the batch."""
    if batch2 == batch:
        return None
    at2 = dict(trace2)
    best = math.inf
    for label, t1 in trace:
        t2 = at2.get(label)
        if t2 is None:
            continue
        slope = (t2 - t1) / (batch2 - batch)
        intercept = t1 - slope * batch
        if slope > 0:
            best = min(best, math.floor((usable - intercept) / slope))
        elif intercept > usable:
            return 0
    if best == math.inf:
        return None
    return max(int(best), 0)
