"""Fit op classes that the training networks do not pin down from the op microbenchmarks (CPU only, committed data).

Each class is fitted per precision on the microbenchmark rows of its families
(calibration/data/h200/microbench*/microbench.csv), each row rebuilt as one ONNX node and costed by the
predictor, with the model of predictor/fitted.py: the mean kernel count less the node's own becomes the hidden
kernels of the class's hidden key (priced with the main fit's ``layout`` class), and (t0, eff_compute,
eff_memory[, row_s]) are fitted by least squares on the log of the measured time (CUDA-graph replays, so the
inter-kernel gap is in it).

* ``grouped``: grouped convolutions (1 < groups < channels; RegNet, ResNeXt), which no training network has:
  cuDNN's grouped kernels take 10-90 us for a few MFLOPs at batch 1 and pick other algorithms run to run.
* ``gemm_unaligned``: batched matmuls of activations whose K or N is not a multiple of 8 (Swin's 49-token
  windows): ``bmm_unaligned`` rows with such dimensions (the aligned controls stay out).
* ``softmax`` (not fitted by default, see SOFTMAX): the row cost of PyTorch's softmax (301056 rows of 49 take
  42 us at fp16, of 64 the same).
Ignores: layout (channels-last runs other grouped kernels), run-to-run algorithm choice (kept as scatter).
"""
from __future__ import annotations

import csv
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from predictor.timing.features import gemm_shape
from predictor.timing import hidden_bytes as _hidden_bytes
from predictor.graph.cost import cost_graph
from predictor.graph.opclass import hidden_key, kernel_class
from predictor.graph.traffic import traffic_for
from predictor.precision import policy
from predictor.roofline import level_times_s
from predictor.timing import param_bounds
from predictor.types import DEFAULT_OPSET, MemLevel, Node, TensorInfo, frozen_map

MICROBENCH = Path(__file__).resolve().parents[1] / "data" / "h200" / "microbench"
PRECISIONS = ("fp32", "tf32", "fp16", "bf16")
MIN_ROWS = 4


def run_order(folder: Path) -> tuple:
    """Sort key of a microbenchmark run's folder: by name with its numbers as numbers (run9 before run10)."""
    return tuple((0, int(t), "") if t.isdigit() else (1, 0, t) for t in re.split(r"(\d+)", folder.as_posix()) if t)


def microbench_rows(families: tuple[str, ...], root: Path = MICROBENCH) -> list[dict]:
    """Rows of the given families from every microbench.csv under ``root`` without an error; a case measured
    in several runs keeps the latest run's row (runs in ``run_order``). Rows come in a canonical order (family, op,
    precision, parameters), so that neither folder names nor a file's row order move a fit that reads them."""
    out: dict[tuple, dict] = {}
    for path in sorted(root.glob("**/microbench.csv"), key=lambda p: run_order(p.parent.relative_to(root))):
        with path.open(newline="") as f:
            for r in csv.DictReader(f):
                if r["family"] in families and not r.get("error") and r.get("time_s"):
                    out[row_key(r)] = r
    return sorted(out.values(), key=lambda r: (r["family"], r["op"], r["precision"], r["params"]))


# a CUDA-graph replay shorter than this, or a call timed by events shorter than HOST_BOUND_EVENTS_S, timed the host's
# launch rather than the kernels (microbenchmarks before the timing fix of 55afb53: calibration/data/h100/microbench/
# run20's protocol_check, 1.75x too long there); rows of the fixed timing replay for >= 200 us and are never flagged
HOST_BOUND_REPLAY_S = 40e-6
HOST_BOUND_EVENTS_S = 80e-6


def host_bound(r: dict) -> bool:
    """Whether a microbenchmark row's time is the host's launch cost rather than its kernels' (an upper bound)."""
    t, method = float(r["time_s"]), r.get("method", "")
    if method.startswith("graph_x"):
        return int(method[len("graph_x"):]) * t < HOST_BOUND_REPLAY_S
    return method == "events" and t < HOST_BOUND_EVENTS_S


def row_key(r: dict) -> tuple[str, str, str]:
    """The case a microbenchmark row measured: (op, precision, parameters)."""
    return r["op"], r["precision"], r["params"]


def row_params(r: dict) -> dict:
    """A row's parameters with its op name (``op``: lstm, gru, conv2d, ...)."""
    return {**json.loads(r["params"]), "op": r["op"]}


def conv_node(params: dict) -> Node:
    """The microbenchmark's F.conv2d call as one ONNX Conv node (fp32 graph; the precision policy sets storage)."""
    n, c, h, w, k = params["N"], params["C"], params["H"], params["W"], params["K"]
    r, s, g, st, pad = params["R"], params["S"], params["groups"], params["stride"], params["pad"]
    x = TensorInfo("x", "float32", (n, c, h, w))
    wt = TensorInfo("w", "float32", (k, c // g, r, s), is_initializer=True)
    y = TensorInfo("y", "float32", (n, k, params["Ho"], params["Wo"]))
    attrs = frozen_map({"group": g, "strides": (st, st), "pads": (pad, pad, pad, pad), "kernel_shape": (r, s),
                        "dilations": (1, 1)})
    return Node(name="op", op_type="Conv", domain="", inputs=(x, wt), outputs=(y,), attrs=attrs)


def bmm_node(params: dict) -> Node:
    """torch.bmm(a [B, M, K], b [B, K, N]) as one MatMul node of two activations."""
    b, m, n, k = params["B"], params["M"], params["N"], params["K"]
    return Node(name="op", op_type="MatMul", domain="",
                inputs=(TensorInfo("x", "float32", (b, m, k)), TensorInfo("x2", "float32", (b, k, n))),
                outputs=(TensorInfo("y", "float32", (b, m, n)),))


def rnn_node(params: dict) -> Node:
    """One layer of the microbenchmark's nn.LSTM / nn.GRU (``op``) as an ONNX node: X [seq, batch, input], weights
    and the summed bias as initializers (cuDNN's layout; layer 2 of a stacked pair is the same node when
    input = hidden)."""
    gates = {"lstm": 4, "gru": 3}[params["op"]]
    s, b, i, h = params["seq"], params["batch"], params["input"], params["hidden"]
    ins = (TensorInfo("x", "float32", (s, b, i)), TensorInfo("w", "float32", (1, gates * h, i), True),
           TensorInfo("r", "float32", (1, gates * h, h), True), TensorInfo("b", "float32", (1, 2 * gates * h), True))
    return Node(name="op", op_type=params["op"].upper(), domain="", inputs=ins,
                outputs=(TensorInfo("y", "float32", (s, 1, b, h)),), attrs=frozen_map({"hidden_size": h}))


def softmax_node(params: dict) -> Node:
    """torch.softmax(x [rows, cols], dim=-1) as one Softmax node; torch.softmax(x, dim) of a row with ``shape`` and
    ``dim`` (run 17's softmax_axis)."""
    shape = tuple(params["shape"]) if "shape" in params else (params["rows"], params["cols"])
    return Node(name="op", op_type="Softmax", domain="", inputs=(TensorInfo("x", "float32", shape),),
                outputs=(TensorInfo("y", "float32", shape),), attrs=frozen_map({"axis": int(params.get("dim", -1))}))


@dataclass(frozen=True)
class MicroClass:
    name: str  # the calibration class (graph/opclass.kernel_class of its nodes)
    families: tuple[str, ...]
    node: Callable[[dict], Node]
    fit_rows: bool = False  # fit a row cost (OpWork.rows) too
    eff_compute: float | None = None  # held at this value instead of fitted (vector work far from its ceiling)
    tf32_is_fp32: bool = False  # no tensor cores: tf32 rows are not measured, fp32's parameters stand in
    per_group_hidden: bool = False  # extra kernels may be counted per group (grouped convolutions: _hidden_entries)


MICRO_CLASSES = (
    MicroClass("grouped", ("conv_grouped", "conv_grouped_width"), conv_node, per_group_hidden=True),
    MicroClass("gemm_unaligned", ("bmm_unaligned",), bmm_node),
)
# Tried and not kept: ``softmax`` with a row cost from the ``softmax`` and ``softmax_rows`` families (tf32 as fp32,
# eff_compute held at 0.7): MAPE 26-28% on its own rows at every precision, the row cost fitted at 1-2.5 ns where
# short rows cost ~12 ns each (PyTorch packs several short rows per warp): SOFTMAX, below, is kept for the next try.
SOFTMAX = MicroClass("softmax", ("softmax", "softmax_rows"), softmax_node, fit_rows=True, tf32_is_fp32=True,
                     eff_compute=0.7)


def _columns(rows: list[dict], mc: MicroClass, precision: str, profile) -> dict[str, np.ndarray]:
    cols = {k: [] for k in ("kernels", "compute_s", "gemm_k", "memory_s", "cache_s", "hidden_s", "rows_per_sm",
                            "measured_s", "measured_kernels")}
    pol = policy(precision)
    for r in rows:
        node = mc.node(row_params(r))
        gc = cost_graph([node], pol, DEFAULT_OPSET, traffic_for(profile),
                        frozenset(t.name for t in node.inputs if not t.is_initializer))
        c = gc.costs[0]
        ideal = level_times_s(c, profile, 0.0)
        cols["kernels"].append(c.kernels)
        cols["compute_s"].append(ideal["compute"] * gemm_shape(c, node, precision, profile.sm_count))
        cols["gemm_k"].append(float(c.work.gemm[3]) if c.work.gemm else 0.0)
        cols["memory_s"].append(profile.hbm_time_s(c.bytes.get(MemLevel.HBM, 0.0), c.work.bytes_written))
        cols["cache_s"].append(max(ideal[MemLevel.L1.value], ideal[MemLevel.L2.value]))
        cols["hidden_s"].append(_hidden_bytes(c, "io") / profile.bandwidth(MemLevel.HBM))
        cols["rows_per_sm"].append(c.work.rows / profile.sm_count)
        cols["measured_s"].append(float(r["time_s"]))
        cols["measured_kernels"].append(float(r["n_kernels"] or c.kernels))
    return {k: np.asarray(v, dtype=float) for k, v in cols.items()}


def _hidden_entries(rows: list[dict], mc: MicroClass, x: dict[str, np.ndarray]) -> tuple[dict, np.ndarray, np.ndarray]:
    """Hidden kernels of each hidden key among ``rows`` ({key: entry}) and, per row, the count and whether they are
    per-group kernels. An entry is the mean extra kernel count per node (layout-like kernels, a number), or, where the
    extra kernels follow the groups better (cuDNN's fp32 grouped convolution at batch 32: one kernel per group), a
    per-group entry (a dict: the class's own kernels, ``count`` per group, no extra bytes)."""
    keys = [hidden_key(mc.node(row_params(r))) for r in rows]
    extra = np.maximum(x["measured_kernels"] - x["kernels"], 0.0)
    groups = np.asarray([max(1, int(row_params(r).get("groups", 1))) for r in rows], dtype=float)
    entries, count, per_group = {}, np.zeros(len(rows)), np.zeros(len(rows), dtype=bool)
    for key in sorted(set(keys)):
        sel = np.asarray([k == key for k in keys])
        per_node = round(float(np.mean(extra[sel])), 2)
        per_g = round(float(np.mean(extra[sel] / groups[sel])), 2)
        err_node = float(np.mean(np.abs(extra[sel] - per_node)))
        err_group = float(np.mean(np.abs(extra[sel] - per_g * groups[sel])))
        if mc.per_group_hidden and per_g > 0 and err_group < 0.5 * err_node:
            entries[key] = {"kind": mc.name, "count": per_g, "bytes_of": "none", "per_group": True}
            count[sel], per_group[sel] = per_g * groups[sel], True
        else:
            entries[key] = per_node
            count[sel] = per_node
    return entries, count, per_group


def fit_micro_class(mc: MicroClass, classes: dict, gemm_k_half: float, kernel_gap_s: float, profile, log=print,
                    root: Path = MICROBENCH) -> tuple[dict, dict]:
    """(class params by precision, {hidden key: hidden entry by precision}); an entry is a count of layout-like
    kernels per node or a per-group entry (see _hidden_entries)."""
    from scipy.optimize import least_squares

    rows = [r for r in microbench_rows(mc.families, root)
            if kernel_class(mc.node(row_params(r))) == mc.name]
    params: dict[str, dict] = {}
    hidden: dict[str, dict] = {}
    for prec in PRECISIONS:
        src = "fp32" if prec == "tf32" and mc.tf32_is_fp32 else prec
        sel = [r for r in rows if r["precision"] == src]
        if len(sel) < MIN_ROWS:
            continue
        x = _columns(sel, mc, prec, profile)
        entries, n_hidden, per_group = _hidden_entries(sel, mc, x)
        lay = classes.get("layout", {}).get(prec) or classes["default"]["*"]
        k_eff = np.where(x["gemm_k"] > 0, x["gemm_k"] / (x["gemm_k"] + gemm_k_half), 1.0)
        layout_extra = np.where(per_group, 0.0, n_hidden * lay["t0_s"]
                                + np.minimum(n_hidden, 2.0) / 2.0 * x["hidden_s"] / lay["eff_memory"])
        extra = layout_extra + kernel_gap_s * (x["kernels"] + n_hidden)
        own = x["kernels"] + np.where(per_group, n_hidden, 0.0)  # kernels priced at the class's t0

        def model(theta):
            t0, ec, em = np.exp(theta[:3])
            ec = mc.eff_compute or ec
            row_s = math.exp(theta[3]) if mc.fit_rows else 0.0
            body = np.maximum(np.maximum(np.where(x["compute_s"] > 0, x["compute_s"] / (ec * k_eff), 0.0),
                                         x["memory_s"] / em), x["cache_s"])
            return own * t0 + x["rows_per_sm"] * row_s + body + extra

        bounds = [param_bounds(k, mc.name, prec) for k in ("t0_s", "eff_compute", "eff_memory")]
        lo, hi = [b[0] for b in bounds], [b[1] for b in bounds]
        th0 = [min(max(x, a), b) for x, a, b in zip([5e-6, 0.2, 0.5], lo, hi)]
        if mc.fit_rows:
            lo, hi, th0 = lo + [1e-11], hi + [1e-5], th0 + [1e-8]
        sol = least_squares(lambda th: np.log(model(th) / x["measured_s"]), np.log(th0),
                            bounds=(np.log(lo), np.log(hi)))
        err = np.abs(model(sol.x) / x["measured_s"] - 1)
        fitted = dict(zip(("t0_s", "eff_compute", "eff_memory", "row_s"), (float(v) for v in np.exp(sol.x))))
        if mc.eff_compute:
            fitted["eff_compute"] = mc.eff_compute
        params[prec] = {**fitted, "n_nodes": len(sel)}
        for key, entry in entries.items():
            hidden.setdefault(key, {})[prec] = entry
        log(f"{mc.name} {prec}: {len(sel)} microbenchmarks{' (fp32 rows)' if src != prec else ''}, "
            + ", ".join(f"{k} {v:.3g}" for k, v in fitted.items())
            + f", hidden kernels {json.dumps(entries)}; MAPE {np.mean(err):.1%}, worst {np.max(err):.1%}")
    if params:
        keys = [k for k in ("t0_s", "eff_compute", "eff_memory", "row_s") if all(k in v for v in params.values())]
        params["*"] = {k: float(np.exp(np.mean([math.log(v[k]) for v in params.values()]))) for k in keys}
    return params, hidden


def fit_micro_classes(classes: dict, gemm_k_half: float, kernel_gap_s: float, profile, log=print,
                      root: Path = MICROBENCH) -> tuple[dict, dict]:
    """Every MicroClass: ({class: params by precision}, {hidden key: count by precision})."""
    out_classes, out_hidden = {}, {}
    for mc in MICRO_CLASSES:
        params, hidden = fit_micro_class(mc, classes, gemm_k_half, kernel_gap_s, profile, log, root)
        if params:
            out_classes[mc.name] = params
            out_hidden.update(hidden)
    return out_classes, out_hidden
