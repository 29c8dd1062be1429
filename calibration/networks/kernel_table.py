"""Turn a torch.profiler trace into one row per GPU kernel with its module path, aten op and shapes.

Kernels are linked to the CPU op that launched them (profiler correlation ids); the module path is
the innermost enclosing `module::<qualified path>` range recorded by `ModuleRanges`, and `aten_op`
is the outermost aten op inside that module range (what an ONNX node maps to, e.g. aten::conv2d),
while `leaf_op` is the op that launched the kernel (e.g. aten::cudnn_convolution).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

MODULE_PREFIX = "module::"
NAME_CHARS = 200
SHAPES_CHARS = 400


@dataclass(frozen=True)
class KernelRow:
    kernel_idx: int
    kernel_name: str
    duration_us: float
    start_us: float            # relative to the first kernel's start
    module_path: str
    aten_op: str
    leaf_op: str
    input_shapes: str          # compact JSON of the aten_op's input shapes


class ModuleRanges:
    """Context manager: wrap every submodule's forward in a profiler range `module::<path>`."""

    def __init__(self, model: Any):
        self.model = model
        self.handles: list[Any] = []
        self.stack: list[Any] = []

    def __enter__(self) -> "ModuleRanges":
        import torch

        def pre(path: str):
            def hook(_mod, _inp):
                rf = torch.autograd.profiler.record_function(MODULE_PREFIX + (path or "<root>"))
                rf.__enter__()
                self.stack.append(rf)
            return hook

        def post(_mod, _inp, _out):
            if self.stack:
                self.stack.pop().__exit__(None, None, None)

        for path, mod in self.model.named_modules():
            self.handles.append(mod.register_forward_pre_hook(pre(path)))
            self.handles.append(mod.register_forward_hook(post))
        return self

    def __exit__(self, *exc: Any) -> None:
        for h in self.handles:
            h.remove()
        while self.stack:
            self.stack.pop().__exit__(None, None, None)


def _is_device_event(fe: Any) -> bool:
    from torch.autograd import DeviceType

    return getattr(fe, "device_type", None) == DeviceType.CUDA


def _attribution(op: Any) -> tuple[str, str, str, str]:
    """(module_path, aten_op, leaf_op, input_shapes) for the CPU op that launched a kernel."""
    if op is None:
        return "", "", "", ""
    leaf = op.name
    top, node, module = op, op, ""
    while node is not None:
        if node.name.startswith(MODULE_PREFIX):
            module = node.name[len(MODULE_PREFIX):]
            break
        top = node
        node = node.cpu_parent
    shapes = getattr(top, "input_shapes", None) or []
    try:
        shapes_s = json.dumps(shapes, separators=(",", ":"))
    except TypeError:
        shapes_s = str(shapes)
    return module, top.name, leaf, shapes_s[:SHAPES_CHARS]


def device_events(prof: Any) -> list[Any]:
    """GPU activities (kernels, memcpy, memset) of a finished profiler, in start order."""
    evs = [fe for fe in prof.events() if _is_device_event(fe)]
    return sorted(evs, key=lambda fe: fe.time_range.start)


def cpu_ops_by_id(events: list[Any]) -> dict[int, Any]:
    """Frontend CPU ops (aten ops, record_function ranges) by id; kernels link to these ids.

    Device events and runtime calls (cudaLaunchKernel...) carry CUPTI correlation ids, a separate
    id space, and have a non-zero linked id: they are left out.
    """
    return {fe.id: fe for fe in events
            if not _is_device_event(fe) and getattr(fe, "linked_correlation_id", 0) == 0}


def launched_kernels(prof: Any) -> list[tuple[Any, str, float, float]]:
    """(launching CPU op or None, name, duration_us, start_us) per GPU activity, in start order.

    Uses the kernels' linked correlation ids where the profiler exposes them; older profilers only
    hang kernels off their launching op (no start times: start_us is NaN, order is launch order).
    """
    events = list(prof.events())
    dev = sorted((fe for fe in events if _is_device_event(fe)), key=lambda fe: fe.time_range.start)
    if not dev or hasattr(dev[0], "linked_correlation_id"):
        cpu_by_id = cpu_ops_by_id(events)
        t0 = dev[0].time_range.start if dev else 0.0
        return [(cpu_by_id.get(fe.linked_correlation_id), fe.name, fe.time_range.elapsed_us(),
                 fe.time_range.start - t0) for fe in dev]
    out = []
    for op in sorted((fe for fe in events if not _is_device_event(fe) and fe.kernels),
                     key=lambda fe: fe.time_range.start):
        out += [(op, k.name, float(k.duration), float("nan")) for k in op.kernels]
    return out


def kernel_rows(prof: Any) -> list[KernelRow]:
    """One KernelRow per GPU activity of the trace, attributed to module / aten op."""
    rows = []
    for i, (op, name, dur_us, start_us) in enumerate(launched_kernels(prof)):
        module, aten, leaf, shapes = _attribution(op)
        rows.append(KernelRow(i, name[:NAME_CHARS], round(dur_us, 3), round(start_us, 3), module, aten, leaf,
                              shapes))
    return rows


def enclosing_range(op: Any, prefix: str) -> str | None:
    """Name of the innermost CPU range starting with `prefix` that encloses op (op included)."""
    while op is not None:
        if op.name.startswith(prefix):
            return op.name
        op = op.cpu_parent
    return None


def is_memop(name: str) -> bool:
    return name.startswith(("Memcpy", "Memset"))
