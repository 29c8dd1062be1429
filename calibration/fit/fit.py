"""Fit the calibration (predictor/fitted.py's model) on the training networks measured on the H200.

    python -m calibration.fit.fit [--out predictor/data/calibration_h200.json]

Data: calibration/data/h200/timing (eager per-kernel tables and reference times) and the committed ONNX
graphs. Only networks whose zoo split is ``train`` are read; held-out networks are never seen here.
Per (op class, precision) three parameters (and one shared ``gemm_k_half``, below): the fixed cost of a kernel ``t0_s`` and the fractions of the
compute and memory ceilings reached (``eff_compute``, ``eff_memory``); per (op type, precision) the hidden
kernels the runtime adds (learned from module scopes that hold a single costed node), costed as layout
copies. GEMM/conv kernels reach ``K / (K + gemm_k_half)`` of their class's compute efficiency: each output
tile pays a prologue/epilogue worth ``gemm_k_half`` steps of its K loop. Loss: log ratio of predicted to measured time per module scope, weighted by the square root of the
scope's share of its case's time, soft-L1 (robust to a few odd scopes). Hosts' dispatch cost per kernel for
the eager estimate: median over host-bound training cases of eager time per launched kernel.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from predictor.fitted import gemm_wave, tile_padding
from predictor.graph.cost import cost_graph
from predictor.graph.fused import runtime_op
from predictor.graph.opclass import KERNEL_CLASSES, hidden_entry, hidden_key, kernel_class, op_class
from predictor.graph.traffic import params_for, traffic_for
from predictor.machine.profile import load_profile
from predictor.precision import policy
from predictor.roofline import level_times_s
from predictor.types import MemLevel

from .dataset import Case, graph_for, kernels_by_scope, load_cases, load_kernels, normalise_scope

PRECISIONS = ("fp32", "tf32", "fp16", "bf16")
# precisions that share one parameter set (tried: fp16 with bf16 made both splits worse, 14%/23% MAPE
# against 12%/21%: their kernels differ enough, e.g. cuDNN picks other conv kernels for bf16)
SHARED: dict[str, str] = {}


def _gp(precision: str) -> str:
    return SHARED.get(precision, precision)
# every kernel class but those only training steps have (calibration/fit/optimizer_fit.py, train_fit.py fit them)
TRAINING_CLASSES = ("optimizer", "depthwise_grad", "norm_train")
# and those only autocast runs (calibration/fit/amp_fit.py)
AMP_CLASSES = ("norm_amp", "elementwise_mixed")
FIT_CLASSES = tuple(c for c in KERNEL_CLASSES if c not in TRAINING_CLASSES + AMP_CLASSES) + ("layout",)
TENSOR_PRECISIONS = ("tf32", "fp16", "bf16")
MIN_TENSOR_EFFICIENCY = 0.6
CASE_WEIGHT = 2.0  # weight of each training case's whole-network log error against its scope samples
MIN_SCOPES = 4  # a (class, precision) group with fewer samples uses the class's all-precision fit
DEFAULT_OUT = Path(__file__).resolve().parents[2] / "predictor" / "data" / "calibration_h200.json"


@dataclass
class NodeRows:
    """Per costed node of all samples: the fit's fixed inputs (numpy arrays, one entry per node)."""

    group: np.ndarray  # index into groups
    kernels: np.ndarray
    compute_s: np.ndarray  # ideal compute time at 100% of the ceiling / wave efficiency
    gemm_k: np.ndarray  # reduction length of the node's GEMM (0 when it runs none)
    memory_s: np.ndarray  # ideal HBM time at 100% of bandwidth (scaled by the class's eff_memory)
    cache_s: np.ndarray  # ideal L1/L2 time (slowest of the two) at the measured cache bandwidths, the L2 time
    # divided by the group's eff_l2 (held fixed: rnn_gemv_l2_efficiency)
    hidden: np.ndarray  # hidden kernels
    hidden_s: np.ndarray  # ideal HBM time of the hidden kernels' bytes
    layout_group: np.ndarray
    rows_per_sm: np.ndarray  # rows of a block-per-row kernel (OpWork.rows) per SM
    overlaps: np.ndarray  # 1 where the node overlaps its producer (stacked RNN layer), else 0
    sample: np.ndarray  # index of the scope sample, -1 for nodes of modules no kernel was attributed to
    case: np.ndarray  # index of the case


def _zoo_split(network: str) -> str:
    from calibration.networks.zoo import NETWORKS

    spec = NETWORKS.get(network)
    return spec.split if spec else "unknown"


def training_cases(cases: list[Case]) -> list[Case]:
    return [c for c in cases if _zoo_split(c.network) == "train"]


def _costs(case: Case, profile):
    graph = graph_for(case.network, case.batch)
    if graph is None:
        return None, None
    pol = policy(case.precision)
    gc = cost_graph(graph.nodes, pol, graph.opset or 21, traffic_for(profile),
                    frozenset(t.name for t in graph.inputs))
    nodes = {n.name: n for n in graph.nodes}
    return gc, nodes


def learn_hidden_kernels(cases: list[Case], kernels: dict, profile) -> dict[str, dict[str, float]]:
    """Average extra kernels per node of each op type and precision, from single-node module scopes."""
    extra: dict[tuple[str, str], list[int]] = {}
    for case in cases:
        rows = kernels.get(case.key)
        gc, nodes = _costs(case, profile)
        if not rows or gc is None:
            continue
        by_scope: dict[str, list] = {}
        for c in gc.costs:
            if c.kernels > 0:
                by_scope.setdefault(normalise_scope(nodes[c.name].scope), []).append(c)
        measured = kernels_by_scope(rows)
        for scope, cs in by_scope.items():
            if len(cs) == 1 and scope in measured and scope:
                n_extra = len(measured[scope]) - cs[0].kernels
                op = runtime_op(nodes[cs[0].name], cs[0].work)
                extra.setdefault((op, case.precision), []).append(n_extra)
                key = hidden_key(nodes[cs[0].name], op)
                if key != op:
                    extra.setdefault((key, case.precision), []).append(n_extra)
    table: dict[str, dict[str, float]] = {}
    for (op, prec), xs in sorted(extra.items()):
        if len(xs) >= 3:
            avg = float(np.mean(xs))
            if avg >= 0.25:
                table.setdefault(op, {})[prec] = round(min(avg, 4.0), 2)
            elif ":" in op:  # a refined key with (almost) no extra kernels overrides its op type's count
                table.setdefault(op, {})[prec] = 0.0
    return table


def hidden_count(hidden: dict, node, precision: str, op: str | None = None) -> float:
    """The learned count of a node: by its refined key, else by its op type (as FittedCalibration)."""
    return hidden_entry(hidden, node, precision, 0.0, op)


AMP_KERNELS = Path(__file__).resolve().parents[1] / "data" / "h200" / "whatif" / "amp_kernels" / "amp_kernels.json"
_AMP_MODES = {"amp": "fp16", "amp_bf16": "bf16"}


def learn_autocast_hidden(path: Path = AMP_KERNELS) -> dict[str, dict[str, float]]:
    """Extra kernels of a batch norm under autocast (fp32 parameters, 16-bit input), per low precision, from
    the profiled eager forwards of training-split networks (calibration/networks/amp_kernels.py): kernels of
    each module scope whose kernels all belong to aten::batch_norm, minus one."""
    if not path.is_file():
        return {}
    doc = json.loads(path.read_text())
    extra: dict[str, list[int]] = {}
    for case in doc.get("cases", []):
        prec = _AMP_MODES.get(case.get("mode", ""))
        if prec is None or case.get("error") or _zoo_split(case.get("network", "")) != "train":
            continue
        scopes: dict[str, list[dict]] = {}
        for r in case.get("rows", []):
            scopes.setdefault(r["module_path"], []).append(r)
        for rs in scopes.values():
            if rs and all(r["aten_op"] == "aten::batch_norm" for r in rs):
                extra.setdefault(prec, []).append(len(rs) - 1)
    return {"BatchNormalization:fp32_params": {p: round(float(np.mean(xs)), 2) for p, xs in sorted(extra.items())
                                               if len(xs) >= 3}} if extra else {}


def build_rows(cases: list[Case], kernels: dict, profile, hidden: dict, groups: dict,
               eff_l2: dict[tuple[str, str], float] | None = None):
    """Scope samples of the cases: (NodeRows, measured seconds per sample, weight per sample)."""
    cols = {k: [] for k in ("group", "kernels", "compute_s", "gemm_k", "memory_s", "cache_s", "hidden", "hidden_s",
                            "layout_group", "rows_per_sm", "overlaps", "sample", "case")}
    measured, weights, case_ref = [], [], []
    for case in cases:
        rows = kernels.get(case.key)
        gc, nodes = _costs(case, profile)
        if not rows or gc is None:
            continue
        meas = {s: sum(r.duration_s for r in rs) for s, rs in kernels_by_scope(rows).items()}
        total = sum(meas.values()) or 1.0
        by_scope: dict[str, list] = {}
        for c in gc.costs:
            if c.kernels > 0:
                by_scope.setdefault(normalise_scope(nodes[c.name].scope), []).append(c)
        cid = len(case_ref)
        case_ref.append(case.reference_time_s)
        for scope, cs in by_scope.items():
            if scope in meas and meas[scope] > 0:
                sid = len(measured)
                measured.append(meas[scope])
                weights.append(math.sqrt(meas[scope] / total))
            else:
                sid = -1
            for c in cs:
                ideal = level_times_s(c, profile, 0.0)
                wave = gemm_wave(c.work.gemm, case.precision, profile.sm_count)
                op = runtime_op(nodes[c.name], c.work)
                h = hidden_count(hidden, nodes[c.name], case.precision, op)
                hb = _hidden_bytes(c)
                cols["group"].append(groups[(kernel_class(nodes[c.name], op), case.precision)])
                cols["kernels"].append(c.kernels)
                cols["compute_s"].append(ideal["compute"] * tile_padding(c.work.gemm) / wave)
                cols["gemm_k"].append(float(c.work.gemm[3]) if c.work.gemm else 0.0)
                cols["memory_s"].append(ideal[MemLevel.HBM.value])
                l2 = (eff_l2 or {}).get((kernel_class(nodes[c.name], op), case.precision), 1.0)
                cols["cache_s"].append(max(ideal[MemLevel.L1.value], ideal[MemLevel.L2.value] / l2))
                cols["hidden"].append(h)
                cols["hidden_s"].append(hb / profile.bandwidth(MemLevel.HBM))
                cols["layout_group"].append(groups[("layout", case.precision)])
                cols["rows_per_sm"].append(c.work.rows / profile.sm_count)
                cols["overlaps"].append(1.0 if c.work.overlaps_producer else 0.0)
                cols["sample"].append(sid)
                cols["case"].append(cid)
    ints = ("group", "layout_group", "sample", "case")
    arrays = NodeRows(**{k: np.asarray(v, dtype=int if k in ints else float) for k, v in cols.items()})
    return arrays, np.asarray(measured), np.asarray(weights), np.asarray(case_ref)


GEMV_KERNEL = "gemv"  # cuBLAS's matrix-vector kernels (gemv2T_kernel_val, internal::gemvx::kernel)


def rnn_gemv_l2_efficiency(cases: list[Case], kernels: dict, profile) -> dict[tuple[str, str], float]:
    """{("rnn_gemv", precision): eff_l2} from the recurrent training networks' batch-1 profiles: at fp32 and tf32 cuBLAS
    runs each recurrent step as a GEMV kernel that streams the recurrent weights R from L2; eff_l2 is the L2 time of
    R's requests (as the traffic model counts them) at the ERT L2 bandwidth over the median GEMV kernel's time (the
    H200's LSTM of width 512: 4.19 MB in 3.08 us, 1.36 TB/s). Precisions whose step kernel is a GEMM (16-bit: latency-bound nvjet kernels) get none."""
    out: dict[tuple[str, str], list[float]] = {}
    for case in cases:
        if case.batch != 1 or case.family != "rnn":
            continue
        rows = kernels.get(case.key) or []
        gemv = sorted(r.duration_s for r in rows if GEMV_KERNEL in r.name)
        graph = graph_for(case.network, case.batch)
        r_bytes = [n.inputs[2].numel * 4 / n.inputs[2].shape[0] for n in (graph.nodes if graph else [])
                   if op_class(n.op_type) == "rnn" and len(n.inputs) > 2 and n.inputs[2] is not None
                   and n.inputs[2].shape] if case.precision in ("fp32", "tf32") else []
        if len(gemv) < 8 or not r_bytes:
            continue
        median_s = gemv[len(gemv) // 2]
        # the traffic model counts L2 requests (distinct bytes x (1 + l2_far_fraction): two partitions)
        requests = float(np.median(r_bytes)) * (1.0 + params_for(profile.arch).l2_far_fraction)
        out.setdefault(("rnn_gemv", case.precision), []).append(
            min(1.0, requests / profile.bandwidth(MemLevel.L2) / median_s))

    return {k: float(np.median(v)) for k, v in out.items()}


def _hidden_bytes(cost) -> float:
    from predictor.fitted import _hidden_bytes as hb

    return hb(cost, "io")


def unpack(theta: np.ndarray):
    """(t0, eff_compute, eff_memory, row_s per group; rnn_overlap; gemm_k_half): theta holds the three class
    parameters of each of G groups, then the G row costs, then the overlap and gemm_k_half."""
    n_groups = (len(theta) - 2) // 4
    g3, row = theta[:3 * n_groups], theta[3 * n_groups:4 * n_groups]
    return (np.exp(g3[0::3]), np.exp(g3[1::3]), np.exp(g3[2::3]), np.exp(row), float(theta[-2]), math.exp(theta[-1]))


def _fixed_and_body(theta: np.ndarray, rows: NodeRows) -> tuple[np.ndarray, np.ndarray]:
    t0, ec, em, row_s, _, k_half = unpack(theta)
    g, lg = rows.group, rows.layout_group
    k_eff = np.where(rows.gemm_k > 0, rows.gemm_k / (rows.gemm_k + k_half), 1.0)
    body = np.maximum(np.maximum(np.where(rows.compute_s > 0, rows.compute_s / (ec[g] * k_eff), 0.0),
                                 rows.memory_s / em[g]), rows.cache_s)
    fixed = rows.kernels * t0[g] + rows.rows_per_sm * row_s[g]
    # hidden kernels: t0 each plus one pass over the node's bytes (half for one kernel: hidden_bytes_share)
    hidden = rows.hidden * t0[lg] + np.minimum(rows.hidden, 2.0) / 2.0 * rows.hidden_s / em[lg]
    return fixed, body + hidden


def node_times(theta: np.ndarray, rows: NodeRows) -> np.ndarray:
    """Summed kernel time of each node (what an eager profile's module scope measures)."""
    fixed, rest = _fixed_and_body(theta, rows)
    return fixed + rest


def predict_samples(theta: np.ndarray, rows: NodeRows, n_samples: int) -> np.ndarray:
    node = node_times(theta, rows)
    m = rows.sample >= 0
    return np.bincount(rows.sample[m], weights=node[m], minlength=n_samples)


def predict_cases(theta: np.ndarray, rows: NodeRows, n_cases: int, gap_s: float) -> np.ndarray:
    """Whole-network time: every node plus the graph-replay gap after each kernel (hidden ones too), less the
    share ``rnn_overlap`` of the fixed costs of nodes that overlap their producer (as FittedCalibration)."""
    fixed, rest = _fixed_and_body(theta, rows)
    overlap = unpack(theta)[4]
    gaps = gap_s * (rows.kernels + rows.hidden)
    node = fixed + rest + gaps - overlap * rows.overlaps * (fixed + gaps)
    return np.bincount(rows.case, weights=node, minlength=n_cases)


def fit(cases: list[Case], kernels: dict, profile, log=print) -> dict:
    from scipy.optimize import least_squares

    hidden = learn_hidden_kernels(cases, kernels, profile)
    # groups: per (class, precision), plus per class over all precisions ("*") used as the prior
    keys = [(c, p) for c in FIT_CLASSES for p in PRECISIONS if p not in SHARED]
    groups = {k: i for i, k in enumerate(keys)}
    groups.update({(c, p): groups[(c, q)] for c in FIT_CLASSES for p, q in SHARED.items()})
    eff_l2 = rnn_gemv_l2_efficiency(cases, kernels, profile)
    for (cls, prec), e in sorted(eff_l2.items()):
        log(f"{cls} {prec}: recurrent GEMV kernels stream R from L2 at {e:.3f} of the ERT L2 bandwidth")
    rows, measured, weights, case_ref = build_rows(cases, kernels, profile, hidden, groups, eff_l2)
    n = len(measured)
    n_cases = len(case_ref)
    counts = np.bincount(rows.group, minlength=len(keys)) + \
        np.bincount(rows.layout_group, weights=(rows.hidden > 0).astype(float), minlength=len(keys)).astype(int)
    # row cost per group: starts at 0.1 us per row per SM; rnn overlap starts at none
    extra0 = [math.log(1e-7)] * len(keys) + [0.0, math.log(256.0)]
    theta0 = np.append(np.tile([math.log(3e-6), math.log(0.7), math.log(0.6)], len(keys)), extra0)
    prior = 0.3  # pulls groups with little data to the common starting point (log-space ridge)

    def resid(theta):
        pred = predict_samples(theta, rows, n)
        r = weights * np.log(np.maximum(pred, 1e-9) / measured)
        whole = predict_cases(theta, rows, n_cases, profile.kernel_gap_s)
        rc = CASE_WEIGHT * np.log(np.maximum(whole, 1e-9) / case_ref)
        return np.concatenate([r, rc, prior * 0.05 * (theta - theta0)])

    lo = np.append(np.tile([math.log(2e-7), math.log(0.02), math.log(0.02)], len(keys)),
                   [math.log(1e-10)] * len(keys) + [0.0, math.log(1.0)])
    # library GEMM/conv kernels on tensor cores reach most of the ceiling, itself a cuBLAS GEMM (ERT run):
    # their small-problem losses are tiles, waves, K-loop overheads and fixed costs, not a low asymptote
    for (cls, prec), i in groups.items():
        if cls in ("conv", "gemm") and prec in TENSOR_PRECISIONS:
            lo[3 * i + 1] = math.log(MIN_TENSOR_EFFICIENCY)
    hi = np.append(np.tile([math.log(5e-5), math.log(1.0), math.log(3.0)], len(keys)),
                   [math.log(1e-5)] * len(keys) + [0.9, math.log(16384.0)])
    sol = least_squares(resid, theta0, bounds=(lo, hi), loss="soft_l1", f_scale=0.1, max_nfev=200 * len(theta0))
    pred = predict_samples(sol.x, rows, n)
    err = np.abs(pred / measured - 1)
    whole = predict_cases(sol.x, rows, n_cases, profile.kernel_gap_s)
    log(f"fit: {n} module-scope samples from {len(cases)} cases, {len(keys) * 3} parameters; "
        f"scope median |error| {np.median(err):.1%}, training whole-network MAPE "
        f"{np.mean(np.abs(whole / case_ref - 1)):.1%}, cost {sol.cost:.4g}")
    classes: dict[str, dict[str, dict]] = {}
    for (cls, prec), i in sorted(groups.items(), key=lambda kv: PRECISIONS.index(kv[0][1])):
        if counts[i] == 0:
            continue
        classes.setdefault(cls, {})[prec] = {
            "t0_s": float(math.exp(sol.x[3 * i])), "eff_compute": float(math.exp(sol.x[3 * i + 1])),
            "eff_memory": float(math.exp(sol.x[3 * i + 2])), "n_nodes": int(counts[i]),
            **({"shared_with": _gp(prec)} if prec in SHARED else {})}
    # the row cost of groups whose nodes have rows (layer norm, softmax: a block or warp per row)
    row_s = unpack(sol.x)[3]
    for (cls, prec), gi in groups.items():
        if counts[gi] and np.any((rows.rows_per_sm > 0) & (rows.group == gi)):
            classes[cls][prec]["row_s"] = float(row_s[gi])
    for (cls, prec), e in eff_l2.items():
        if cls in classes and prec in classes[cls]:
            classes[cls][prec]["eff_l2"] = e
    # class-wide fallback for precisions without data: the geometric mean of the fitted ones
    for cls, by_p in classes.items():
        fitted = [v for v in by_p.values()]
        by_p["*"] = {k: float(np.exp(np.mean([math.log(v[k]) for v in fitted])))
                     for k in ("t0_s", "eff_compute", "eff_memory", "row_s") if all(k in v for v in fitted)}
    all_fits = [v for by_p in classes.values() for p, v in by_p.items() if p != "*"]
    classes["default"] = {"*": {k: float(np.exp(np.median([math.log(v[k]) for v in all_fits])))
                                for k in ("t0_s", "eff_compute", "eff_memory")}}
    return {"classes": classes, "hidden": hidden, "scope_median_error": float(np.median(err)), "n_samples": n,
            "gemm_k_half": unpack(sol.x)[5], "rnn_overlap": unpack(sol.x)[4], "train_mape": float(np.mean(np.abs(whole / case_ref - 1)))}


def host_dispatch(cases: list[Case]) -> dict[str, float]:
    """Host time per launch for the eager estimate: ``kernel``, the median eager time per launched kernel over
    host-bound training cases (eager > 1.5 x GPU time); ``library_kernel``, the same over the recurrent ones (nearly every kernel launched inside one cuDNN call)."""
    def median_per_kernel(sel: list[Case]) -> float:
        xs = [c.eager_median_s / c.n_kernels_eager for c in sel if c.n_kernels_eager and math.isfinite(c.eager_median_s)
              and c.eager_median_s > 1.5 * c.reference_time_s]
        return float(np.median(xs)) if xs else 0.0
    rnn = [c for c in cases if c.family == "rnn"]
    out = {"kernel": median_per_kernel(cases), "op": 0.0}
    if median_per_kernel(rnn):
        out["library_kernel"] = median_per_kernel(rnn)
    return out


def _hidden_list(entry) -> list[dict]:
    """A fitted hidden-kernel entry as the calibration file's list: a count of layout-like kernels per node (a number),
    or an entry of its own (a dict, e.g. micro_fit's per-group kernels)."""
    if isinstance(entry, dict):
        return [entry] if entry["count"] > 0 else []
    return [{"kind": "layout", "count": entry, "bytes_of": "io"}] if entry > 0 else []


def build_document(result: dict, cases: list[Case], profile, host_s: dict[str, float]) -> dict:
    classes = {}
    for cls, by_p in result["classes"].items():
        classes[cls] = {p: {k: v[k] for k in ("t0_s", "eff_compute", "eff_memory", "row_s", "eff_l2") if k in v}
                        for p, v in by_p.items()}
    hidden = {op: {p: _hidden_list(n) for p, n in by_p.items()} for op, by_p in result["hidden"].items()}
    nets = sorted({c.network for c in cases})
    return {
        "schema_version": 1,
        "gpu": "h200",
        "kernel_gap_s": profile.kernel_gap_s,
        "gemm_k_half": result["gemm_k_half"],
        "rnn_overlap": result["rnn_overlap"],
        "host_dispatch_s": host_s,
        "classes": classes,
        "hidden_kernels": hidden,
        "provenance": {
            "fitted_by": "python -m calibration.fit.fit",
            "date": _dt.date.today().isoformat(),
            "training_networks": nets,
            "cases": len(cases),
            "module_scope_samples": result["n_samples"],
            "scope_median_abs_error": round(result["scope_median_error"], 4),
            "training_whole_network_mape": round(result["train_mape"], 4),
            "data": "calibration/data/h200/timing (PyTorch 2.11 eager, cuDNN 9.19, H200, 2026-12-02)",
            "profile": "h200 (ERT-measured ceilings)",
            "kernel_gap_s": "per-kernel time of a CUDA-graph replay of empty kernels (ERT run)",
            "host_dispatch_s": "median eager time per launched kernel over host-bound training cases "
                               "(library_kernel: of the recurrent training network, kernels inside one cuDNN call)",
            "model": "predictor/fitted.py docstring",
        },
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m calibration.fit.fit", description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    a = ap.parse_args(argv)
    profile = load_profile("h200")
    cases = training_cases(load_cases())
    if not cases:
        print("error: no training cases found under calibration/data/h200/timing", file=sys.stderr)
        return 2
    kernels = load_kernels()
    result = fit(cases, kernels, profile)
    result["hidden"].update(learn_autocast_hidden())
    from .micro_fit import fit_micro_classes

    micro_classes, micro_hidden, overlap = fit_micro_classes(result["classes"], result["gemm_k_half"],
                                                             profile.kernel_gap_s, profile)
    result["classes"].update(micro_classes)
    result["hidden"].update(micro_hidden)
    if overlap is not None:
        result["rnn_overlap"] = overlap
    doc = build_document(result, cases, profile, host_dispatch(cases))
    from .optimizer_fit import fit_optimizer

    doc["classes"]["optimizer"], doc["multi_tensor_per_tensor_s"] = fit_optimizer(doc)
    from .train_fit import fit_depthwise_grad, fit_norm_train

    norm = fit_norm_train(doc)
    if norm:
        doc["classes"]["norm_train"] = norm

    grad = fit_depthwise_grad(doc)
    if grad:
        doc["classes"]["depthwise_grad"] = grad
    from .amp_fit import fit_elementwise_mixed, fit_norm_amp

    for cls, entry in (("norm_amp", fit_norm_amp(doc)), ("elementwise_mixed", fit_elementwise_mixed(doc))):
        if entry:
            doc["classes"][cls] = entry
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {a.out}: hidden kernels {json.dumps(result['hidden'])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
