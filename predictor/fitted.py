"""Fitted calibration: achieved efficiency per op class and precision, fixed costs, hidden kernels.

Per kernel of a node of class C at precision P (parameters fitted on H200 measurements):

    t = t0[C,P] + rows / SMs x row_s[C,P] + waves x (block_s[C,P] + walked bytes x row_s[C,P])
        + max( sum_units FLOPs / (peak x eff_compute[C,P] x wave_eff),
               bytes_HBM / (BW_HBM x eff_memory[C,P]), bytes_L2 / (BW_L2 x eff_l2[C,P]), bytes_L1 / BW_L1 )

``eff_l2`` is 1 except for the recurrent classes ``rnn`` and ``rnn_gemv`` (batch-1 layers), whose step kernels re-read
the recurrent weights from L2: fitted with their other parameters and ``rnn_overlap`` on the microbenchmark's LSTM/GRU
calls by calibration/fit/rnn_fit.py, and held by the main fit.

``rows`` (OpWork.rows) counts the rows of a kernel that gives each row a thread block (layer norm, class
``layernorm``: 100352 rows of 96 elements take ~8x their bytes' time on the H200). A stacked RNN layer
(OpWork.overlaps_producer) runs beside the layer before it: ``rnn_overlap`` of its fixed costs (t0, rows and
graph gaps) is hidden. The two directions of a bidirectional RNN layer run on two streams: ``rnn_bidir_overlap`` of
one direction's fixed costs is hidden under the other's (their bodies add). A block-walk kernel (OpWork.channel_walk = (blocks, bytes per block): cuDNN's batch norms in
training mode, a block per channel, and at fp16 under autocast, a block per (image, channel) plane) runs
ceil(blocks / SMs) waves, each costing ``block_s`` plus its block's bytes at ``row_s`` per byte (classes
``norm_train``, ``norm_amp``).

``wave_eff`` (GEMM/conv only) is the share of SMs busy over the waves of output tiles, the best of 128x128, 128x64
and 64x64 on tensor cores (the libraries pick smaller tiles for small problems; 64x64 for fp32 CUDA-core kernels; K
split when tiles are fewer than SMs), times K / (K + gemm_k_half): each tile's prologue and epilogue cost
``gemm_k_half`` steps of its K loop; GEMM FLOPs are counted with tile padding (M to 128, N to 64), which
the kernels execute (checked against ncu's tensor FLOPs, calibration/data/h200/ncu/report).
Hidden kernels the runtime adds to a node (layout transforms around NCHW convolutions at 16-bit
precision, casts) cost t0 each plus one memory-bound pass over the node's input and output bytes (half of it
for a single kernel); they are looked up by graph/opclass.hidden_key (1x1 vs kxk convolutions, ...), else by
op type (a fused node's base op: a ``FusedConv`` keeps a Conv's); a ``per_group`` entry counts per group of a grouped
convolution (cuDNN's fp32 kernel per group at batch 32) and, with ``bytes_of`` "none", costs its class's t0 each; a
node the ``channels_last`` pass put in
NHWC layout (``graph/fused.py``) gets none of kind ``layout``. The network time
is the sum over kernels plus the inter-kernel gap of a CUDA-graph replay (``kernel_gap_s``: what a replay adds per
kernel to the eager kernel durations, measured on the training networks). Ignores: kernel overlap across
streams, clock changes, data-dependent speed (zeros run faster than random data).
The file is plain JSON with provenance; nothing in it is executed.
"""
from __future__ import annotations

import dataclasses
import json
import math
import os
from typing import Any, Mapping

from .frozen import frozen_dataclass
from .graph.fused import base_op, channels_last, runtime_op
from .graph.opclass import hidden_entry, kernel_class, op_class
from .graph.ops.rnn import is_bidirectional_rnn
from .machine.profile import MachineProfile, _reject_constant
from .precision import PrecisionPolicy
from .roofline import bound_of, level_times_s
from .timing import hidden_kernel_time, kernel_features, kernel_time
# the wave and tile terms of a kernel's features live with them (predictor/timing/features.py); named here too
from .timing.features import (  # noqa: F401
    SIMT_TILE, SPLIT_K_MIN, TENSOR_TILES, channel_walk_units, gemm_wave, tile_padding, walk_waves, wave_efficiency,
)
from .timing.features import hidden_bytes as _hidden_bytes
from .types import Bound, MemLevel, Node, OpCost, OpPrediction, PredictorError, Unit, frozen_map

SCHEMA_VERSION = 1
_NO_TIME = frozen_map({k: 0.0 for k in ("compute", "L1", "L2", "HBM", "latency")})


@frozen_dataclass
class ClassParams:
    """The fitted parameters of one kernel class at one precision."""

    t0_s: float
    eff_compute: float
    eff_memory: float
    row_s: float = 0.0  # per row of a block-per-row kernel (OpWork.rows), per SM: rows / SMs x row_s; per byte walked
    # by a walking thread block (OpWork.channel_walk)
    block_s: float = 0.0  # per wave of walking thread blocks (OpWork.channel_walk)
    eff_l2: float = 1.0  # achieved fraction of the ERT L2 bandwidth (fp32 recurrent steps: cuBLAS GEMV kernels)


@frozen_dataclass
class HiddenKernel:
    """Kernels the runtime adds around a node (layout transforms, casts)."""

    kind: str  # e.g. "layout", "cast"
    count: float  # kernels per node on average (fitted from the kernel-to-op mapping)
    bytes_of: str  # "input", "output", "io" (which tensors it moves, read + write) or "none"
    per_group: bool = False  # count is per group of a grouped convolution (cuDNN's per-group fp32 kernels)

    def count_for(self, node: Node) -> float:
        """Kernels this entry adds to ``node``: count, times the node's groups when ``per_group``."""
        return self.count * (int(node.attrs.get("group", 1) or 1) if self.per_group else 1)


class FittedCalibration:
    """Implements the Calibration protocol of predictor.calibrate from a fitted parameter file."""

    predict_op_by_key = True  # predict_op reads only the node's key and the cost's numbers (predict.predict_ops)

    def __init__(self, doc: Mapping[str, Any], source: str = "<calibration>", transferred_from: str | None = None):
        self.doc = doc
        self.source = source
        self.gpu = str(doc["gpu"])
        self.transferred_from = transferred_from
        self.kernel_gap_s = float(doc["kernel_gap_s"])
        self.gemm_k_half = float(doc.get("gemm_k_half", 0.0))
        # training steps: cost per tensor of a multi-tensor optimizer kernel (predictor/train/step.py)
        self.multi_tensor_per_tensor_s = float(doc.get("multi_tensor_per_tensor_s", 0.0))
        # share of the fixed costs (t0, gaps) of a stacked RNN layer hidden under its producer layer's
        self.rnn_overlap = float(doc.get("rnn_overlap", 0.0))
        # share of one direction's fixed costs (t0, gaps) of a bidirectional RNN layer hidden under the other's
        self.rnn_bidir_overlap = float(doc.get("rnn_bidir_overlap", 0.0))
        self.host = {k: float(v) for k, v in doc.get("host_dispatch_s", {}).items()}
        self.classes = {c: {p: ClassParams(**v) for p, v in by_p.items()} for c, by_p in doc["classes"].items()}
        self.hidden = {op: {p: [HiddenKernel(**h) for h in hs] for p, hs in by_p.items()}
                       for op, by_p in doc.get("hidden_kernels", {}).items()}
        name = f"fitted:{self.gpu}"
        self.name = name if transferred_from is None else f"{name} (transferred to another GPU)"
        self._transfers: dict = {}

    def transfer_for(self, profile: MachineProfile):
        """How this calibration is carried to ``profile`` (predictor/machine/transfer.py); None on its own GPU."""
        if self.transferred_from is None:
            return None
        key = (profile.name, profile.path)
        if key not in self._transfers:
            from .machine.transfer import transfer_profile

            self._transfers[key] = transfer_profile(profile, self.transferred_from)
        return self._transfers[key]

    # ------------------------------------------------------------------------------------------
    def params(self, cls: str, precision: str) -> ClassParams:
        by_p = self.classes.get(cls) or self.classes["default"]
        return by_p.get(precision) or by_p.get("*") or self.classes["default"]["*"]

    def _kernel_time(self, cost: OpCost, profile: MachineProfile, prm: ClassParams, precision: str,
                     node: Node | None = None) -> tuple[float, dict[str, float]]:
        fixed, body, times = kernel_time(kernel_features(cost, profile, precision, node), prm, self.gemm_k_half)
        return fixed + body, times

    def hidden_kernels(self, node: Node, precision: str, op: str | None = None) -> list[HiddenKernel]:
        """The hidden kernels the runtime adds to ``node``: those fitted for its (base) op type; none of kind
        ``layout`` when a pass put the node in channels-last layout (graph/fused.py, optimize/layout.py)."""
        # by the refined key (1x1 vs kxk conv, ...), else the op type
        hidden = hidden_entry(self.hidden, node, precision, [], op or base_op(node))
        if hidden and channels_last(node):
            return [h for h in hidden if h.kind != "layout"]
        return hidden

    def predict_op(self, node: Node, cost: OpCost, profile: MachineProfile,
                   policy: PrecisionPolicy) -> OpPrediction:
        if cost.kernels == 0:
            return OpPrediction(cost=cost, time_s=0.0, bound=Bound.LATENCY, level_time_s=_NO_TIME, efficiency=1.0)
        moved = self.transfer_for(profile)
        if moved is not None:  # another GPU: datasheet ceilings at their achievable fractions
            profile = moved.profile
        ideal_times = level_times_s(cost, profile, profile.kernel_gap_s)
        ideal, _ = bound_of(ideal_times)
        op = runtime_op(node, cost.work)
        cls = kernel_class(node, op, policy.name)
        pred = self._predict_as(cls, node, cost, profile, policy, moved, op, ideal)
        if cls == "rnn_gemv":  # cuBLAS runs GEMV steps at batch 1 because they are the faster kernels: never slower
            batched = self._predict_as("rnn", node, cost, profile, policy, moved, op, ideal)  # than the batched GEMM
            if batched.time_s < pred.time_s:  # steps (a transferred GPU's L2 bandwidth can make them so)
                return batched
        return pred

    def _predict_as(self, cls: str, node: Node, cost: OpCost, profile: MachineProfile, policy: PrecisionPolicy,
                    moved, op: str, ideal: float) -> OpPrediction:
        """The node's prediction with the parameters of kernel class ``cls``."""
        prm = self.params(cls, policy.name)
        if moved is not None:  # fp32 issue width of the target's SMs (machine/transfer.py)
            eff = moved.efficiency(cls, policy.name, prm.eff_compute)
            if eff != prm.eff_compute:
                prm = dataclasses.replace(prm, eff_compute=eff)
        t, times = self._kernel_time(cost, profile, prm, policy.name, node)
        extra_names, extra_t = [], 0.0
        hidden = self.hidden_kernels(node, policy.name, op)
        counts = [h.count_for(node) for h in hidden]
        for h, n in zip(hidden, counts):
            hp = self.params(h.kind, policy.name)
            extra_t += hidden_kernel_time(n, _hidden_bytes(cost, h.bytes_of) / profile.bandwidth(MemLevel.HBM),
                                          hp.t0_s, hp.eff_memory)
            extra_names.append(f"{h.kind} x{n:g}")
        n_kernels = cost.kernels + sum(counts)
        total = t + extra_t + n_kernels * self.kernel_gap_s
        if cost.work.overlaps_producer:  # stacked RNN layer: part of its fixed costs hides under the previous
            total -= self.rnn_overlap * (times["latency"] + n_kernels * self.kernel_gap_s)
        if self.rnn_bidir_overlap and is_bidirectional_rnn(node):  # the directions run on two streams
            total -= self.rnn_bidir_overlap * 0.5 * (times["latency"] + n_kernels * self.kernel_gap_s)
        bound = _bound(times)
        return OpPrediction(cost=cost, time_s=total, bound=bound, level_time_s=frozen_map(times),
                            efficiency=min(ideal / total, 1.0) if total > 0 else 1.0,
                            extra_kernels=tuple(extra_names), extra_time_s=extra_t)

    def eager_time_s(self, preds: list[OpPrediction], n_host_ops: int) -> float:
        """GPU time when the host issues kernels one by one: each kernel starts no earlier than its launch.

        Host issue times: ``host_dispatch_s.kernel`` per kernel (one for all of a node's hidden kernels, which its
        library call launches) and ``host_dispatch_s.op`` per node that launches none (views, shape ops); a recurrent
        layer is one library call whose kernels after the first cost ``host_dispatch_s.library_kernel`` each (cuDNN
        launches them without PyTorch's dispatcher).
        Ignores: the host running ahead across a whole network, CPU jitter.
        """
        per_kernel = self.host.get("kernel", 0.0)
        per_op = self.host.get("op", 0.0)
        per_library = self.host.get("library_kernel", per_kernel)
        host = gpu = 0.0
        rnn: dict[str, bool] = {}  # op type -> of class rnn
        for p in preds:
            c = p.cost
            if c.kernels == 0:
                host += per_op
                continue
            kernels = c.kernels + (1 if p.extra_kernels else 0)  # one dispatch for a node's hidden kernels
            is_rnn = rnn.get(c.op_type)
            if is_rnn is None:
                is_rnn = rnn[c.op_type] = op_class(c.op_type) == "rnn"
            library = c.kernels - 1 if is_rnn else 0
            host += (kernels - library) * per_kernel + library * per_library
            gpu = max(gpu, host) + p.time_s
        return max(gpu, host)


def _bound(times: dict[str, float]) -> Bound:
    body = {k: v for k, v in times.items() if k != "latency"}
    key = max(body, key=body.get)
    if times["latency"] > body[key]:
        return Bound.LATENCY
    return Bound.COMPUTE if key == "compute" else Bound(key)


_CLASS_KEYS = ("t0_s", "eff_compute", "eff_memory")
_OPTIONAL_CLASS_KEYS = ("row_s", "eff_l2", "block_s")
_HIDDEN_KEYS = ("kind", "count", "bytes_of")
_OPTIONAL_HIDDEN_KEYS = ("per_group",)
_BYTES_OF = ("input", "output", "io", "none")
MAX_CALIBRATION_BYTES = 16 << 20


def _num(where: str, field: str, x: Any, lo: float, hi: float, lo_open: bool = False) -> float:
    """``x`` as a float in [lo, hi] (or (lo, hi]); otherwise an error that names the field."""
    ok = not isinstance(x, bool) and isinstance(x, (int, float)) and math.isfinite(x) \
        and (x > lo if lo_open else x >= lo) and x <= hi
    if not ok:
        what = "a positive number" if lo_open and lo == 0 else "a non-negative number" if lo == 0 else "a number"
        raise PredictorError(f"calibration {where}: field '{field}' must be {what} "
                             f"{'above' if lo_open else 'from'} {lo:g} up to {hi:g}, got {x!r}"[:300])
    return float(x)


def _obj(where: str, field: str, x: Any, what: str) -> dict:
    if not isinstance(x, dict):
        raise PredictorError(f"calibration {where}: field '{field}' must be an object {what}")
    return x


def parse_calibration(doc: Any, where: str) -> dict:
    """Validate a calibration document (every field FittedCalibration reads); errors name the field."""
    if not isinstance(doc, dict) or doc.get("schema_version") != SCHEMA_VERSION:
        raise PredictorError(f"calibration {where}: field 'schema_version' must be {SCHEMA_VERSION}")
    for field in ("gpu", "kernel_gap_s", "classes"):
        if field not in doc:
            raise PredictorError(f"calibration {where}: field '{field}' is missing")
    if not isinstance(doc["gpu"], str) or not doc["gpu"]:
        raise PredictorError(f"calibration {where}: field 'gpu' must be a non-empty string")
    classes = doc["classes"]
    if not isinstance(classes, dict) or not isinstance(classes.get("default"), dict) \
            or "*" not in classes["default"]:
        raise PredictorError(f"calibration {where}: field 'classes' needs a 'default' class with a '*' entry")
    for c, by_p in classes.items():
        if not isinstance(by_p, dict):
            raise PredictorError(f"calibration {where}: field 'classes.{c}' must be an object by precision")
        for p, v in by_p.items():
            for k in _CLASS_KEYS:
                x = v.get(k) if isinstance(v, dict) else None
                if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x) or x <= 0:
                    raise PredictorError(f"calibration {where}: field 'classes.{c}.{p}.{k}' must be a positive number")
            _num(where, f"classes.{c}.{p}.t0_s", v["t0_s"], 0.0, 1.0, lo_open=True)
            for k in ("eff_compute", "eff_memory"):  # a fraction of the ceiling it names (predictor/timing/params.py)
                _num(where, f"classes.{c}.{p}.{k}", v[k], 0.0, 1.0, lo_open=True)
            for k in ("row_s", "block_s"):
                if k in v:
                    _num(where, f"classes.{c}.{p}.{k}", v[k], 0.0, 1e-3)
            if "eff_l2" in v:
                _num(where, f"classes.{c}.{p}.eff_l2", v["eff_l2"], 1e-3, 1.0)
            for k in v:
                if k not in _CLASS_KEYS + _OPTIONAL_CLASS_KEYS:
                    raise PredictorError(f"calibration {where}: field 'classes.{c}.{p}.{k}' is not a parameter "
                                         f"({', '.join(_CLASS_KEYS + _OPTIONAL_CLASS_KEYS)})")
    gap = doc["kernel_gap_s"]
    if isinstance(gap, bool) or not isinstance(gap, (int, float)) or not math.isfinite(gap) or gap < 0:
        raise PredictorError(f"calibration {where}: field 'kernel_gap_s' must be a non-negative number")
    _num(where, "kernel_gap_s", gap, 0.0, 1.0)
    if "gemm_k_half" in doc:
        _num(where, "gemm_k_half", doc["gemm_k_half"], 0.0, 1e9)
    for key in ("rnn_overlap", "rnn_bidir_overlap"):
        if key in doc:
            _num(where, key, doc[key], 0.0, 0.95)
    if "multi_tensor_per_tensor_s" in doc:
        _num(where, "multi_tensor_per_tensor_s", doc["multi_tensor_per_tensor_s"], 0.0, 1e-3)
    for k, x in _obj(where, "host_dispatch_s", doc.get("host_dispatch_s", {}), "of seconds by name").items():
        _num(where, f"host_dispatch_s.{k}", x, 0.0, 1.0)
    _obj(where, "fit_report", doc.get("fit_report", {}), "(the fit's settings and parameter report)")
    hidden = _obj(where, "hidden_kernels", doc.get("hidden_kernels", {}), "by op type")
    for op, by_p in hidden.items():
        for p, hs in _obj(where, f"hidden_kernels.{op}", by_p, "by precision").items():
            if not isinstance(hs, list):
                raise PredictorError(f"calibration {where}: field 'hidden_kernels.{op}.{p}' must be a list")
            for j, h in enumerate(hs):
                f = f"hidden_kernels.{op}.{p}[{j}]"
                if not isinstance(h, dict) or not set(_HIDDEN_KEYS) <= set(h) \
                        or not set(h) <= set(_HIDDEN_KEYS + _OPTIONAL_HIDDEN_KEYS):
                    raise PredictorError(f"calibration {where}: field '{f}' must be an object with "
                                         f"{', '.join(_HIDDEN_KEYS)} (and optionally "
                                         f"{', '.join(_OPTIONAL_HIDDEN_KEYS)})")
                if not isinstance(h.get("per_group", False), bool):
                    raise PredictorError(f"calibration {where}: field '{f}.per_group' must be true or false")
                if not isinstance(h["kind"], str) or not h["kind"]:
                    raise PredictorError(f"calibration {where}: field '{f}.kind' must be a non-empty string")
                _num(where, f"{f}.count", h["count"], 0.0, 1e3)
                if h["bytes_of"] not in _BYTES_OF:
                    raise PredictorError(f"calibration {where}: field '{f}.bytes_of' must be one of "
                                         f"{', '.join(_BYTES_OF)}")
    return doc


DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")  # the bundled calibrations


def bundled_calibration(profile: MachineProfile) -> FittedCalibration | None:
    """The bundled fit for this GPU, or the H200 fit transferred to it; None when no fit is bundled."""
    files = set(os.listdir(DATA_DIR)) if os.path.isdir(DATA_DIR) else set()
    own = f"calibration_{profile.name}.json"
    name = own if own in files else ("calibration_h200.json" if "calibration_h200.json" in files else None)
    if name is None:
        return None
    with open(os.path.join(DATA_DIR, name), encoding="utf-8") as f:
        doc = parse_calibration(json.load(f), name)
    transferred = None if name == own else doc["gpu"]
    return FittedCalibration(doc, name, transferred)


def load_calibration(path: str, profile: MachineProfile | None = None) -> FittedCalibration:
    """A fitted calibration JSON; with ``profile``, carried to it as the bundled fit is (predictor/machine/transfer.py)
    when the file was fitted on another GPU (its ``gpu`` field)."""
    if not os.path.isfile(path):  # also keeps devices (/dev/zero) and FIFOs from being read
        raise PredictorError(f"no such calibration file: {path}")
    try:
        with open(path, encoding="utf-8") as f:
            if os.fstat(f.fileno()).st_size > MAX_CALIBRATION_BYTES:
                raise PredictorError(f"calibration {path} is larger than 16 MB; not a calibration")
            doc = json.load(f, parse_constant=_reject_constant)
    except OSError as e:
        raise PredictorError(f"cannot read calibration {path}: {e.strerror}") from None
    except ValueError as e:
        raise PredictorError(f"calibration {path} is not valid JSON: {' '.join(str(e).split())[:200]}") from None
    except RecursionError:
        raise PredictorError(f"calibration {path} is not valid JSON: nested too deeply") from None
    parsed = parse_calibration(doc, path)
    transferred = parsed["gpu"] if profile is not None and parsed["gpu"] != profile.name else None
    return FittedCalibration(parsed, path, transferred)


__all__ = ["FittedCalibration", "bundled_calibration", "load_calibration", "parse_calibration", "Unit"]
