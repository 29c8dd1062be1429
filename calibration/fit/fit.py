"""Fit the calibration (predictor/fitted.py's model) on the training networks measured on the H200.

    python -m calibration.fit.fit [--out predictor/data/calibration_h200.json]

Data: calibration/data/h200/timing (eager per-kernel tables and reference times) and the committed ONNX
graphs. Only networks whose zoo split is ``train`` are read; held-out networks are never seen here. Besides their
module scopes, the op microbenchmarks' kernels are samples of their own (calibration/fit/kernel_samples.py), and with
``FitSettings.table_weight`` > 0 (not the bundled fit's setting) the training networks' broadcasting elementwise
kernels too (calibration/fit/table_samples.py), and with ``FitSettings.h100_weight`` > 0 the H100's training cases
(calibration/data/h100/timing: scope samples and whole-network times priced on the H100's ERT ceilings with the same
parameters: a second memory system, 27% less HBM bandwidth at the same compute, that tells what a kernel is bound by).
Per (op class, precision) three parameters (and one shared ``gemm_k_half``, below): the fixed cost of a kernel ``t0_s`` and the fractions of the
compute and memory ceilings reached (``eff_compute``, ``eff_memory``); per (op type, precision) the hidden
kernels the runtime adds (learned from module scopes that hold a single costed node), costed as layout
copies. GEMM/conv kernels reach ``K / (K + gemm_k_half)`` of their class's compute efficiency: each output
tile pays a prologue/epilogue worth ``gemm_k_half`` steps of its K loop. Loss: log ratio of predicted to measured time per module scope, weighted by the square root of the
scope's share of its case's time, soft-L1 (robust to a few odd scopes). Hosts' dispatch cost per kernel for
the eager estimate: median over host-bound training cases of eager time per launched kernel. Inference batch norm (class
``batchnorm``) is fitted on its own kernels of two GPUs first (calibration/fit/batchnorm_fit.py) and held at those values
here (``pin_classes``; a grouped cross-validation fold refits it without the left-out families).
"""
from __future__ import annotations

import argparse
import datetime as _dt
import json
import math
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from types import SimpleNamespace

from predictor.timing import NUMPY_OPS, PARAMS, hidden_bytes_share, kernel_features, kernel_time, param_bounds
from predictor.timing.params import MIN_TENSOR_EFFICIENCY
from predictor.fitted import HiddenKernel
from predictor.graph.cost import cost_graph
from predictor.graph.fused import runtime_op
from predictor.graph.ops.rnn import is_bidirectional_rnn
from predictor.graph.opclass import KERNEL_CLASSES, hidden_entry, hidden_key, kernel_class, op_class
from predictor.graph.traffic import params_for, traffic_for
from predictor.machine.profile import load_profile
from predictor.precision import policy
from predictor.predict import prepare_graph
from predictor.roofline import level_times_s
from predictor.types import DEFAULT_OPSET, MemLevel

from .dataset import Case, graph_for, kernels_by_scope, load_cases, load_kernels, normalise_scope
from .dataset import zoo_split as _zoo_split
from .kernel_samples import FIT_FAMILIES, OTHER_GPU_FAMILIES, micro_costs, row_label
from .micro_fit import MICROBENCH
from .table_samples import table_samples

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
CASE_WEIGHT = 2.0  # weight of each training case's whole-network log error against its scope samples
MIN_SCOPES = 4  # a (class, precision) group with fewer samples uses the class's all-precision fit
DEFAULT_OUT = Path(__file__).resolve().parents[2] / "predictor" / "data" / "calibration_h200.json"


@dataclass
class NodeRows:
    """Per costed node of all samples: the fit's fixed inputs (numpy arrays, one entry per node). The feature
    fields are predictor.timing.KernelFeatures', so that predictor.timing.kernel_time prices them."""

    group: np.ndarray  # index into groups
    kernels: np.ndarray
    compute_s: np.ndarray  # ideal compute time at 100% of the ceiling, tile padding and wave efficiency included
    gemm_k: np.ndarray  # reduction length of the node's GEMM (0 when it runs none)
    hbm_s: np.ndarray  # ideal HBM time at 100% of bandwidth
    l2_s: np.ndarray
    l1_s: np.ndarray
    rows_per_sm: np.ndarray  # rows of a block-per-row kernel (OpWork.rows) per SM
    walk_waves: np.ndarray
    walk_bytes_per_sm: np.ndarray
    loop_steps: np.ndarray  # dependent loop iterations of a thread-loop kernel (OpWork.thread_loop)
    hidden: np.ndarray  # hidden kernels
    hidden_s: np.ndarray  # ideal HBM time of the bytes the hidden kernels move (hidden_bytes_share applied)
    layout_group: np.ndarray
    overlaps: np.ndarray  # 1 where the node overlaps its producer (stacked RNN layer), else 0
    sample: np.ndarray  # index of the scope sample, -1 for nodes of modules no kernel was attributed to
    case: np.ndarray  # index of the case, -1 for microbenchmark samples


_FEATURES = ("kernels", "compute_s", "gemm_k", "hbm_s", "l2_s", "l1_s", "rows_per_sm", "walk_waves",
             "walk_bytes_per_sm", "loop_steps")
_ROW_FIELDS = ("group",) + _FEATURES + ("hidden", "hidden_s", "layout_group", "overlaps", "sample", "case")


def node_columns() -> dict[str, list]:
    return {k: [] for k in _ROW_FIELDS}


def append_node(cols: dict[str, list], cost, node, precision: str, profile, hidden: dict, groups: dict,
                sample: int, case: int) -> None:
    """One costed node's row: its kernel features (predictor.timing.kernel_features), group and hidden kernels."""
    f = kernel_features(cost, profile, precision, node)
    op = runtime_op(node, cost.work)
    for k in _FEATURES:
        cols[k].append(getattr(f, k))
    key = (kernel_class(node, op, precision), precision)
    # a class the main fit does not fit (elementwise_mixed: amp_fit's, met in a 16-bit model's fp32 regions) is
    # priced here as its base class
    cols["group"].append(groups[key] if key in groups else groups[(op_class(op or node.op_type), precision)])
    n_all, n_moving = hidden_count(hidden, node, precision, op)
    cols["hidden"].append(n_all)
    cols["hidden_s"].append(hidden_bytes_share(n_moving) * _hidden_bytes(cost) / profile.bandwidth(MemLevel.HBM))
    cols["layout_group"].append(groups[("layout", precision)])
    cols["overlaps"].append(1.0 if cost.work.overlaps_producer else 0.0)
    cols["sample"].append(sample)
    cols["case"].append(case)


def node_rows(cols: dict[str, list]) -> NodeRows:
    ints = ("group", "layout_group", "sample", "case")
    return NodeRows(**{k: np.asarray(v, dtype=int if k in ints else float) for k, v in cols.items()})


def training_cases(cases: list[Case]) -> list[Case]:
    """Cases of training-split networks, except those with a bidirectional RNN layer: this fit's node model has no
    term for the overlap of a layer's two directions (``rnn_bidir_overlap``, fitted on kernel data afterwards by
    calibration/fit/rnn_bidir_fit.py), so their samples would bend the ``rnn`` class's parameters."""
    return [c for c in cases if _zoo_split(c.network) == "train" and not _has_bidirectional_rnn(c.network)]


def _has_bidirectional_rnn(network: str) -> bool:
    graph = graph_for(network, 1)
    return graph is not None and any(is_bidirectional_rnn(n) for n in graph.nodes)


def _costs(case: Case, profile):
    graph = graph_for(case.network, case.batch)
    if graph is None:
        return None, None, {}
    pol = policy(case.precision)
    prepared = prepare_graph(graph, pol)  # as predict costs it (16-bit math-path attention in fp32)
    graph, node_pol = prepared.graph, prepared.node_policy
    gc = cost_graph(graph.nodes, pol, graph.opset or DEFAULT_OPSET, traffic_for(profile),
                    graph.input_names, node_policies=node_pol)
    nodes = {n.name: n for n in graph.nodes}
    return gc, nodes, {name: p.name for name, p in node_pol.items()}


# an extra kernel moves the node's activations when it lasts at least this share of one pass over them (a layout
# transform of the input or output); shorter ones are fixed-cost kernels (memsets, batch norm's per-channel parameter
# kernels, weight transforms). Judged only where such a pass takes MOVING_MIN_IO_S or more.
MOVING_SHARE = 0.5
MOVING_MIN_IO_S = 5e-6
# op types whose extra kernels never pass over the node's own tensors: around a fused attention call cuDNN's workspace
# memset, an explicit mask's padding copy and a relative-position gather move the mask or the bias, not q, k, v or
# the output (a decode step's q, k, v hold the whole KV cache: a "moving" share there would read the cache again).
# Their duration next to a short batch-1 pass would otherwise count some of them as moving.
FIXED_COST_HIDDEN = frozenset({"Attention"})


def replay_gap_s(cases: list[Case], kernels: dict) -> float:
    """The CUDA-graph replay's time per kernel beyond the kernels' own durations: the median over the batch-1 cases
    timed by replay of (replay time - eager kernel sum) / kernels. The fit's kernel times are eager kernel durations,
    so this is what a whole-network replay adds per kernel. Batch 1 only: there the kernels are short and the gap
    shows; at batch 32 a kernel's launch overlaps the tail of the one before (the difference is often negative)."""
    xs = []
    for c in cases:
        rows = kernels.get(c.key)
        if rows and c.batch == 1 and c.reference_source.startswith("replay"):
            xs.append((c.reference_time_s - sum(r.duration_s for r in rows)) / len(rows))
    return float(np.median(xs)) if xs else 0.0


def moving_kernels(durations_s: list[float], own: int, pass_s: float) -> int | None:
    """How many of a scope's extra kernels (all but its ``own`` longest) move the node's activations: those lasting
    at least MOVING_SHARE of ``pass_s`` (one read and write of the input and the output at the HBM ceiling, halved);
    None where ``pass_s`` is below MOVING_MIN_IO_S (too short to tell a transform from a fixed-cost kernel)."""
    if pass_s < MOVING_MIN_IO_S:
        return None
    return sum(1 for d in sorted(durations_s, reverse=True)[own:] if d >= MOVING_SHARE * pass_s)


def learn_hidden_kernels(cases: list[Case], kernels: dict, profile) -> dict[str, dict[str, dict[str, float]]]:
    """Extra kernels per node of each op type and precision, from single-node module scopes: ``count`` (all, each
    paying the layout class's fixed cost) and ``moving`` (those that move the node's activations: a kernel lasting
    at least MOVING_SHARE of a pass over them, judged on nodes where the pass is long enough to tell; all of them
    where no node is)."""
    extra: dict[tuple[str, str], list[int]] = {}
    moving: dict[tuple[str, str], list[int]] = {}
    bw = profile.bandwidth(MemLevel.HBM)
    for case in cases:
        rows = kernels.get(case.key)
        gc, nodes, node_prec = _costs(case, profile)
        if not rows or gc is None:
            continue
        by_scope: dict[str, list] = {}
        for c in gc.costs:
            if c.kernels > 0:
                by_scope.setdefault(normalise_scope(nodes[c.name].scope), []).append(c)
        measured = kernels_by_scope(rows)
        for scope, cs in by_scope.items():
            if len(cs) == 1 and scope in measured and scope and not _host_driven(measured[scope]):
                n_extra = len(measured[scope]) - cs[0].kernels
                n_moving = moving_kernels([r.duration_s for r in measured[scope]], cs[0].kernels,
                                          _hidden_bytes(cs[0]) / bw / 2.0)
                op = runtime_op(nodes[cs[0].name], cs[0].work)
                key = hidden_key(nodes[cs[0].name], op)
                prec = node_prec.get(cs[0].name, case.precision)
                for k in dict.fromkeys((op, key)):
                    extra.setdefault((k, prec), []).append(n_extra)
                    if n_moving is not None:
                        moving.setdefault((k, prec), []).append(n_moving)
    table: dict[str, dict[str, dict[str, float]]] = {}
    for (op, prec), xs in sorted(extra.items()):
        if len(xs) >= 3:
            if float(np.mean(xs)) >= 0.25:
                ms = [0] * len(xs) if op in FIXED_COST_HIDDEN else moving.get((op, prec), [])
                table.setdefault(op, {})[prec] = _hidden_entry(xs, ms, cap=4.0)
            elif ":" in op:  # a refined key with (almost) no extra kernels overrides its op type's count
                table.setdefault(op, {})[prec] = {"count": 0.0, "moving": 0.0}
    return table


def _host_driven(rows) -> bool:
    """Whether a scope's kernels include a device-to-host copy: the module's Python code read a tensor (EnCodec's and
    DAC's padding helpers compute the pad widths as int64 tensors and call .item()), so its extra kernels are that
    code's scalar arithmetic, not kernels the node's op launches."""
    return any("Memcpy DtoH" in r.name for r in rows)


def _hidden_entry(xs: list[int], ms: list[int], cap: float = math.inf) -> dict[str, float]:
    """{count, moving}: the mean extra kernels per node (``xs``, at most ``cap``) and the mean activation-moving ones
    where judged (``ms``: at least three nodes, else all of them move)."""
    count = round(min(float(np.mean(xs)), cap), 2)
    return {"count": count, "moving": round(min(float(np.mean(ms)), count), 2) if len(ms) >= 3 else count}


def hidden_count(hidden: dict, node, precision: str, op: str | None = None) -> tuple[float, float]:
    """(all, activation-moving) learned extra kernels of a node, by its refined key, else by its op type (as
    FittedCalibration); a plain count (autocast's, micro_fit's) moves the activations with every kernel, a
    per-group entry moves none."""
    e = hidden_entry(hidden, node, precision, 0.0, op)
    if isinstance(e, dict):
        if "moving" in e:
            return e["count"], e["moving"]
        n = HiddenKernel(**e).count_for(node)
        return n, (0.0 if e.get("bytes_of") == "none" else n)
    return e, e


AMP_KERNELS = Path(__file__).resolve().parents[1] / "data" / "h200" / "whatif" / "amp_kernels" / "amp_kernels.json"
_AMP_MODES = {"amp": "fp16", "amp_bf16": "bf16"}


def learn_autocast_hidden(path: Path = AMP_KERNELS) -> dict[str, dict[str, dict[str, float]]]:
    """Extra kernels of a batch norm under autocast (fp32 parameters, 16-bit input), per low precision, from
    the profiled eager forwards of training-split networks (calibration/networks/amp_kernels.py): kernels of
    each module scope whose kernels all belong to aten::batch_norm, minus one (``count``); ``moving``: those lasting
    at least MOVING_SHARE of the scope's main (longest) kernel, a pass over the activations, judged where that kernel
    lasts MOVING_MIN_IO_S or more (the per-channel parameter kernels are fixed-cost)."""
    if not path.is_file():
        return {}
    doc = json.loads(path.read_text())
    extra: dict[str, list[int]] = {}
    moving: dict[str, list[int]] = {}
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
                ds = [float(r["duration_us"]) * 1e-6 for r in rs if r.get("leaf_op") != "Activity Buffer Request"]
                if ds and max(ds) >= MOVING_MIN_IO_S:
                    moving.setdefault(prec, []).append(moving_kernels(ds, 1, max(ds)))
    out = {p: _hidden_entry(xs, moving.get(p, [])) for p, xs in sorted(extra.items()) if len(xs) >= 3}
    return {"BatchNormalization:fp32_params": out} if out else {}


def build_rows(cases: list[Case], kernels: dict, profile, hidden: dict, groups: dict):
    """Scope samples of the cases: (NodeRows, measured seconds per sample, weight per sample, reference time per
    case, case index per sample)."""
    cols = node_columns()
    measured, weights, case_ref, sample_case = [], [], [], []
    for case in cases:
        rows = kernels.get(case.key)
        gc, nodes, node_prec = _costs(case, profile)
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
                sample_case.append(cid)
            else:
                sid = -1
            for c in cs:
                append_node(cols, c, nodes[c.name], node_prec.get(c.name, case.precision), profile, hidden, groups,
                            sid, cid)
    return (node_rows(cols), np.asarray(measured), np.asarray(weights), np.asarray(case_ref),
            np.asarray(sample_case, dtype=int))


def _hidden_bytes(cost) -> float:
    from predictor.timing import hidden_bytes as hb

    return hb(cost, "io")


def unpack(theta: np.ndarray):
    """(t0, eff_compute, eff_memory, row_s per group; rnn_overlap; gemm_k_half): theta holds the three class
    parameters of each of G groups, then the G row costs, then the overlap and gemm_k_half."""
    n_groups = (len(theta) - 2) // 4
    g3, row = theta[:3 * n_groups], theta[3 * n_groups:4 * n_groups]
    return (np.exp(g3[0::3]), np.exp(g3[1::3]), np.exp(g3[2::3]), np.exp(row), float(theta[-2]), math.exp(theta[-1]))


def _fixed_and_body(theta: np.ndarray, rows: NodeRows, eff_l2: np.ndarray,
                    block_s: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(fixed, rest) per node by predictor.timing's kernel_time, the hidden kernels in ``rest``; ``eff_l2`` per group
    (held fixed: a pinned class's, rnn_fit.py, else 1), ``block_s`` per group (held fixed: a pinned class's, else 0)."""
    t0, ec, em, row_s, _, k_half = unpack(theta)
    g, lg = rows.group, rows.layout_group
    prm = SimpleNamespace(t0_s=t0[g], eff_compute=ec[g], eff_memory=em[g], eff_l2=eff_l2[g], row_s=row_s[g],
                          block_s=0.0 if block_s is None else block_s[g])
    fixed, body, _ = kernel_time(rows, prm, k_half, NUMPY_OPS)
    # hidden kernels: t0 each plus the bytes the moving ones pass over (as predictor.timing.hidden_kernel_time)
    return fixed, body + rows.hidden * t0[lg] + rows.hidden_s / em[lg]


def node_times(theta: np.ndarray, rows: NodeRows, eff_l2: np.ndarray, block_s: np.ndarray | None = None
               ) -> np.ndarray:
    """Summed kernel time of each node (what an eager profile's module scope measures)."""
    fixed, rest = _fixed_and_body(theta, rows, eff_l2, block_s)
    return fixed + rest


def predict_samples(theta: np.ndarray, rows: NodeRows, n_samples: int, eff_l2: np.ndarray,
                    block_s: np.ndarray | None = None) -> np.ndarray:
    node = node_times(theta, rows, eff_l2, block_s)
    m = rows.sample >= 0
    return np.bincount(rows.sample[m], weights=node[m], minlength=n_samples)


def predict_cases(theta: np.ndarray, rows: NodeRows, n_cases: int, gap_s, eff_l2: np.ndarray,
                  block_s: np.ndarray | None = None) -> np.ndarray:
    """Whole-network time: every node plus the graph-replay gap (s; or per node) after each kernel (hidden ones too), less the
    share ``rnn_overlap`` of the fixed costs of nodes that overlap their producer (as FittedCalibration)."""
    fixed, rest = _fixed_and_body(theta, rows, eff_l2, block_s)
    overlap = unpack(theta)[4]
    gaps = gap_s * (rows.kernels + rows.hidden)
    node = fixed + rest + gaps - overlap * rows.overlaps * (fixed + gaps)
    m = rows.case >= 0
    return np.bincount(rows.case[m], weights=node[m], minlength=n_cases)


@dataclass(frozen=True)
class FitSettings:
    """The fit's hyperparameters (chosen by grouped cross-validation: calibration/fit/cv.py)."""

    case_weight: float = CASE_WEIGHT  # weight of each training case's whole-network log error
    micro_weight: float = 0.1  # weight of each microbenchmark kernel's log error (scope samples: sqrt of their share);
    # chosen by grouped CV (calibration/data/h200/accuracy/cv.json): 0.1 gave 21.4%, 0 22.7%, 0.3 23.0%, 1 28.7%
    prior: float = 0.3  # log-space ridge towards the starting values (x 0.05), for groups with little data
    micro_families: tuple[str, ...] = FIT_FAMILIES
    probe_ceilings: float = 1.0  # 1: after the solve, try low eff_compute / eff_memory per group (probe_ceilings)
    min_tensor_efficiency: float = MIN_TENSOR_EFFICIENCY  # lower bound of eff_compute of tensor-core GEMM/conv classes
    table_weight: float = 0.0  # weight of the kernel-table samples (table_samples.py) beside the scope samples; 0:
    # none are built. Tried at 1 on 2026-12-05 (grouped CV 12.6% against 12.4% without: not adopted, README)
    legacy_bounds: float = 0.0  # 1: the bounds of the fit before predictor/timing/params.py (eff_memory up to 3,
    # no floor for GEMM-like classes), for comparison in cross-validation only
    probe_pairs: float = 1.0  # 1: probe_ceilings also tries eff_compute and eff_memory together (pairs); on since
    # the eighth 2026-12-07 session (grouped CV 10.33% either way, cv_folds8_1402_probe_pairs.json): it moves 16-bit
    # softmax to its element rate (eff_compute 0.05) where eff_memory 0.27 had stood for it
    probe_fine: float = 0.0  # 1: probe_ceilings on PROBE_EFFICIENCIES_FINE instead of PROBE_EFFICIENCIES
    h100_weight: float = 0.0  # weight of the H100 training cases' scope samples and whole-network errors (priced on
    # the H100's ERT ceilings, the same parameters): a second memory system that tells a bandwidth-bound kernel from
    # one bound elsewhere; 0: none are built (see OTHER_GPUS)


@dataclass
class FitData:
    """Everything the solver needs, built once (costing the graphs is the slow part): node rows of the networks'
    scope samples (case >= 0) and of the microbenchmark kernels (case -1), measured times and weights."""

    rows: NodeRows
    measured: np.ndarray  # per sample
    weights: np.ndarray  # per sample (network scopes: sqrt of their share of the case; microbenchmarks: 1)
    sample_case: np.ndarray  # case index per sample, -1 for microbenchmark samples
    case_ref: np.ndarray  # reference time per case
    case_names: list[str]  # network per case
    keys: list[tuple[str, str]]
    groups: dict[tuple[str, str], int]
    hidden: dict
    eff_l2_by_key: dict[tuple[str, str], float]
    eff_l2: np.ndarray  # per group
    counts: np.ndarray  # nodes per group (hidden kernels counted for the layout group)
    gap_s: float
    micro_labels: list[str]
    table: np.ndarray  # per sample: a kernel-table sample (calibration/fit/table_samples.py)
    case_gpu: np.ndarray  # per case: 0 for the fitted GPU's, i >= 1 for the i-th of ``other_gpus`` (prepare_fit)
    row_gap_s: np.ndarray  # per node: the replay gap of its case's GPU (gap_s outside a case)
    # kernel samples of the classes fitted on their own kernels and held fixed here (_pinned_fits)
    pinned_samples: dict = field(default_factory=dict)
    # set by solve (pin_classes): group index -> the held parameters, and block_s per group (0 where not held)
    pinned: dict = field(default_factory=dict)
    block_s: np.ndarray | None = None
    pinned_reports: dict = field(default_factory=dict)  # per pinned class: its fit's report (batchnorm_fit.fit_precision)
    pinned_overlap: float | None = None  # rnn_overlap held by a pinned fit (rnn_fit), else fitted here


def prepare_fit(cases: list[Case], kernels: dict, profile, micro_families: tuple[str, ...] = FIT_FAMILIES,
                log=print, table: bool = False, other_gpus: tuple = ()) -> FitData:
    """The fit's samples; ``table``: with the kernel-table samples (calibration/fit/table_samples.py);
    ``other_gpus``: (cases, kernels, profile) of other GPUs (other_gpu_data), their scope samples and cases priced on
    their own ceilings with the same parameters and the fitted GPU's hidden kernels."""
    hidden = learn_hidden_kernels(cases, kernels, profile)
    keys = [(c, p) for c in FIT_CLASSES for p in PRECISIONS if p not in SHARED]
    groups = {k: i for i, k in enumerate(keys)}
    groups.update({(c, p): groups[(c, q)] for c in FIT_CLASSES for p, q in SHARED.items()})
    eff_l2: dict[tuple[str, str], float] = {}  # per group, held: the pinned recurrent classes set theirs (pin_classes)
    rows, measured, weights, case_ref, sample_case = build_rows(cases, kernels, profile, hidden, groups)
    gap_s = replay_gap_s(cases, kernels) or profile.kernel_gap_s
    costed = [c for c in cases if kernels.get(c.key) and graph_for(c.network, c.batch) is not None]  # build_rows' cases
    names, cids = [c.network for c in costed], {c.key: i for i, c in enumerate(costed)}
    case_gpu, case_gap = [0] * len(names), [gap_s] * len(names)
    for i, (o_cases, o_kernels, o_profile) in enumerate(other_gpus, start=1):
        o_rows, o_meas, o_w, o_ref, o_sc = build_rows(o_cases, o_kernels, o_profile, hidden, groups)
        o_rows.sample[o_rows.sample >= 0] += len(measured)
        o_rows.case[o_rows.case >= 0] += len(case_ref)
        rows = NodeRows(**{k: np.concatenate([getattr(rows, k), getattr(o_rows, k)]) for k in _ROW_FIELDS})
        measured, weights = np.concatenate([measured, o_meas]), np.concatenate([weights, o_w])
        sample_case = np.concatenate([sample_case, o_sc + len(case_ref)])
        case_ref = np.concatenate([case_ref, o_ref])
        o_names = [c.network for c in o_cases if o_kernels.get(c.key) and graph_for(c.network, c.batch) is not None]
        names += o_names
        case_gpu += [i] * len(o_names)
        case_gap += [replay_gap_s(o_cases, o_kernels) or o_profile.kernel_gap_s] * len(o_names)
        log(f"{o_profile.name}: {len(o_names)} cases, {len(o_meas)} scope samples, replay gap "
            f"{case_gap[-1] * 1e6 if o_names else 0:.2f} us")
    # the training networks' own broadcasting kernels, one sample per (case, op, shapes)
    # (calibration/fit/table_samples.py); the model adds the replay gap to a sample outside a case, so it is added
    # to their measured time
    cols = node_columns()
    table_meas, table_w, table_case = [], [], []
    for key, node, cost, median_s, summed_s in (table_samples(set(cids), profile) if table else []):
        sid = len(measured) + len(table_meas)
        append_node(cols, cost, node, key[1], profile, hidden, groups, sid, -1)
        cols["hidden"][-1], cols["hidden_s"][-1] = 0.0, 0.0
        table_meas.append(median_s + gap_s)
        table_w.append(math.sqrt(summed_s / (math.fsum(r.duration_s for r in kernels[key]) or 1.0)))
        table_case.append(cids[key])
    if table:
        log(f"{len(table_meas)} kernel-table samples (broadcasting elementwise kernels of the training networks)")
    measured = np.concatenate([measured, table_meas])
    weights = np.concatenate([weights, table_w])
    sample_case = np.concatenate([sample_case, np.asarray(table_case, dtype=int)])
    is_table = np.zeros(len(measured), dtype=bool)
    is_table[len(measured) - len(table_meas):] = True
    # microbenchmark kernels: one node per measured call, a sample each (calibration/fit/kernel_samples.py)
    micro_meas, labels = [], []
    for fams, m_profile, root, keep in _micro_sources(micro_families, profile):
        for r, node, cost in micro_costs(fams, m_profile, root, keep):
            sid = len(measured) + len(micro_meas)
            append_node(cols, cost, node, r["precision"], m_profile, hidden, groups, sid, -1)
            micro_meas.append(float(r["time_s"]))
            labels.append(row_label(r))
    if table_meas or micro_meas:
        extra = node_rows(cols)
        rows = NodeRows(**{k: np.concatenate([getattr(rows, k), getattr(extra, k)]) for k in _ROW_FIELDS})
    is_table = np.concatenate([is_table, np.zeros(len(micro_meas), dtype=bool)])
    measured = np.concatenate([measured, micro_meas])
    weights = np.concatenate([weights, np.ones(len(micro_meas))])
    sample_case = np.concatenate([sample_case, -np.ones(len(micro_meas), dtype=int)])
    l2 = np.ones(len(keys))
    for k, e in eff_l2.items():
        l2[groups[k]] = e
    counts = np.bincount(rows.group, minlength=len(keys)) + \
        np.bincount(rows.layout_group, weights=(rows.hidden > 0).astype(float), minlength=len(keys)).astype(int)
    case_gap_arr = np.asarray(case_gap, dtype=float)
    row_gap = np.where(rows.case >= 0, case_gap_arr[np.maximum(rows.case, 0)] if len(case_gap) else gap_s, gap_s)
    return FitData(rows, measured, weights, sample_case, case_ref, names, keys, groups, hidden, eff_l2, l2, counts,
                   gap_s, labels, is_table, np.asarray(case_gpu, dtype=int), row_gap,
                   {cls: samples() for cls, (samples, _fit, _source) in _pinned_fits().items()})


def _micro_sources(micro_families: tuple[str, ...], profile) -> list[tuple[tuple[str, ...], object, Path, object]]:
    """(families, profile, folder, keep) of the microbenchmark rows the fit reads: the fitted GPU's own but those
    timed by the host's launch (micro_fit.host_bound: their times are upper bounds); the families of
    OTHER_GPU_FAMILIES from that GPU's folder; and from there too, where that GPU re-measured a host-bound case of
    the fitted GPU's under the fixed timing, its row instead. Another GPU's rows are priced on its transferred
    profile (other_gpu_data's)."""
    from predictor.machine.transfer import transfer_profile

    from .dataset import DATA
    from .micro_fit import host_bound, microbench_rows, row_key

    out = [(micro_families, profile, MICROBENCH, lambda r: not host_bound(r))]
    bound = {row_key(r) for r in microbench_rows(micro_families, MICROBENCH) if host_bound(r)}
    for gpu, fams in OTHER_GPU_FAMILIES.items():
        picked = tuple(f for f in fams if f in micro_families)
        m_profile = transfer_profile(load_profile(gpu)).profile
        if picked:
            out.append((picked, m_profile, DATA / gpu / "microbench", None))
        own = tuple(f for f in micro_families if f not in picked)
        if own and bound:
            out.append((own, m_profile, DATA / gpu / "microbench",
                        lambda r, bound=frozenset(bound): row_key(r) in bound and not host_bound(r)))
    return out


def _pinned_fits() -> dict:
    """Classes fitted on their own kernels or calls and held at those values by the main fit: per class its
    ``samples()``, ``fit(samples, exclude, log, gap_s, gemm_k_half)`` -> ({precision: params}, report) and where it
    comes from. A report may hold ``rnn_overlap``, which the main fit then holds too."""
    from . import batchnorm_fit, gemv_fit, rnn_fit, thin_gemm_fit

    return {"batchnorm": (batchnorm_fit.samples, batchnorm_fit.fit_batchnorm,
                          "fitted on its kernels, H200 and H100 (calibration/fit/batchnorm_fit.py)"),
            "gemm_thin": (thin_gemm_fit.samples, thin_gemm_fit.fit_thin_gemm,
                          "fitted on the H100's linear_thin sweep (calibration/fit/thin_gemm_fit.py)"),
            "gemv": (gemv_fit.samples, gemv_fit.fit_gemv,
                     "fitted on its kernels, H200 and H100 (calibration/fit/gemv_fit.py)"),
            **{cls: (rnn_fit.samples, rnn_fit.pinned_fit(cls),
                     "fitted on the rnn_steps LSTM/GRU calls (calibration/fit/rnn_fit.py)") for cls in rnn_fit.CLASSES}}


def pin_classes(data: FitData, exclude: frozenset[str] = frozenset(), log=None, gemm_k_half: float = 256.0) -> dict:
    """Fit the pinned classes on their samples (networks in ``exclude`` left out) and record them in ``data``
    (``pinned``, ``block_s``, ``eff_l2`` where a class fits it, ``pinned_overlap``); returns {class: report}."""
    data.pinned, reports, data.pinned_overlap = {}, {}, None
    block = np.zeros(len(data.keys))
    for cls, (_samples, fit_class, _source) in _pinned_fits().items():
        entry, report = fit_class(data.pinned_samples.get(cls, []), exclude, log=log or (lambda *_: None),
                                  gap_s=data.gap_s, gemm_k_half=gemm_k_half)
        reports[cls] = report
        if report.get("rnn_overlap") is not None:
            data.pinned_overlap = float(report["rnn_overlap"])
        for prec in PRECISIONS:
            params = entry.get(prec) or entry.get("*")
            if params is None or (cls, prec) not in data.groups:
                continue
            gi = data.groups[(cls, prec)]
            data.pinned[gi] = {k: v for k, v in params.items() if k != "eff_l2"}
            block[gi] = params.get("block_s", 0.0)
            if "eff_l2" in params:
                data.eff_l2[gi] = params["eff_l2"]
                data.eff_l2_by_key[(cls, prec)] = params["eff_l2"]
    data.block_s = block
    return reports


# other GPUs whose training cases a joint fit reads (FitSettings.h100_weight): their measurements and the profile
# their samples are priced on (the transferred profile: the ceilings a transferred calibration is applied to)
OTHER_GPUS = ("h100",)


def other_gpu_data(gpu: str = "h100") -> tuple:
    """(training cases, kernel rows, profile) of ``gpu``'s measurements (calibration/data/GPU/timing); the profile is
    the one predict applies a transferred calibration to (machine.transfer: measured ceilings as they are)."""
    from predictor.machine.transfer import transfer_profile

    from .dataset import DATA

    timing = DATA / gpu / "timing"
    return (training_cases(load_cases(timing)), load_kernels(timing), transfer_profile(load_profile(gpu)).profile)


_PARAM_ORDER = ("t0_s", "eff_compute", "eff_memory")


def _legacy_bounds(name: str, cls: str, prec: str) -> tuple[float, float]:
    if name == "eff_memory":
        return 0.02, 3.0
    if name == "eff_compute":
        return (0.6 if cls in ("conv", "gemm") and prec != "fp32" else 0.02), 1.0
    return 2e-7, 5e-5


def _theta_bounds(data: FitData, legacy: bool = False, min_tensor: float = MIN_TENSOR_EFFICIENCY
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Starting point and bounds (log space) from predictor.timing.params: per group t0, eff_compute, eff_memory,
    then the groups' row costs, then rnn_overlap (linear) and gemm_k_half; ``min_tensor`` replaces the floor of the
    tensor-core classes' eff_compute (a fit setting, chosen by grouped cross-validation)."""
    th0, lo, hi = [], [], []
    for cls, prec in data.keys:
        for name in _PARAM_ORDER:
            a, b = (_legacy_bounds if legacy else param_bounds)(name, cls, prec)
            if not legacy and name == "eff_compute" and a == MIN_TENSOR_EFFICIENCY:
                a = min_tensor
            th0.append(math.log(min(max(PARAMS[name].start, a), b)))
            lo.append(math.log(a))
            hi.append(math.log(b))
    a, b = param_bounds("row_s")
    th0 += [math.log(PARAMS["row_s"].start)] * len(data.keys) + [0.0, math.log(256.0)]
    lo += [math.log(a)] * len(data.keys) + [0.0, math.log(1.0)]
    hi += [math.log(b)] * len(data.keys) + [0.9, math.log(16384.0)]
    n_g = len(data.keys)
    for gi, params in data.pinned.items():  # held: a bound interval of width 2e-9 around the value (log space)
        for i, name in ((3 * gi, "t0_s"), (3 * gi + 1, "eff_compute"), (3 * gi + 2, "eff_memory"), (3 * n_g + gi, "row_s")):
            if name in params:  # (a class without rows holds no row cost)
                th0[i] = math.log(params[name])
                lo[i], hi[i] = th0[i] - PIN_WIDTH, th0[i] + PIN_WIDTH
    if data.pinned_overlap is not None:  # rnn_overlap, linear
        i = 4 * n_g
        th0[i] = data.pinned_overlap
        lo[i], hi[i] = th0[i] - PIN_WIDTH, th0[i] + PIN_WIDTH
    return np.asarray(th0), np.asarray(lo), np.asarray(hi)


PIN_WIDTH = 1e-9  # half-width of a held parameter's bounds in log space


def _sample_times(theta: np.ndarray, data: FitData) -> np.ndarray:
    """Predicted time per sample: the nodes' kernel times; a microbenchmark call also pays the graph-replay gap of
    each of its kernels (its measured time is replay time per call)."""
    rows = data.rows
    node = node_times(theta, rows, data.eff_l2, data.block_s)
    node = node + np.where(rows.case < 0, data.gap_s * (rows.kernels + rows.hidden), 0.0)
    m = rows.sample >= 0
    return np.bincount(rows.sample[m], weights=node[m], minlength=len(data.measured))


def solve(data: FitData, settings: FitSettings, exclude: frozenset[str] = frozenset()):
    """Robust least squares on the log errors of the kernel samples (weighted) and of the whole training cases
    (``case_weight``); networks in ``exclude`` are left out (grouped cross-validation)."""
    from scipy.optimize import least_squares

    data.pinned_reports = pin_classes(data, exclude)
    theta0, lo, hi = _theta_bounds(data, bool(settings.legacy_bounds), settings.min_tensor_efficiency)
    keep_case = np.asarray([n not in exclude for n in data.case_names], dtype=float) * \
        np.where(data.case_gpu > 0, settings.h100_weight, 1.0)
    sample_w = data.weights * np.where(data.sample_case >= 0, keep_case[np.maximum(data.sample_case, 0)],
                                       settings.micro_weight) * _micro_family_mask(data, settings.micro_families) \
        * np.where(data.table, settings.table_weight, 1.0)
    n_cases = len(data.case_ref)

    def resid(theta):
        pred = _sample_times(theta, data)
        r = sample_w * np.log(np.maximum(pred, 1e-9) / data.measured)
        whole = predict_cases(theta, data.rows, n_cases, data.row_gap_s, data.eff_l2, data.block_s)
        rc = settings.case_weight * keep_case * np.log(np.maximum(whole, 1e-9) / data.case_ref)
        return np.concatenate([r, rc, settings.prior * 0.05 * (theta - theta0)])

    sparsity = jacobian_sparsity(data, len(theta0))
    sol = least_squares(resid, theta0, bounds=(lo, hi), loss="soft_l1", f_scale=0.1, max_nfev=200 * len(theta0),
                        jac_sparsity=sparsity)
    if settings.probe_ceilings:
        theta1 = probe_ceilings(sol.x, lo, hi, len(data.keys), lambda th: _soft_l1_cost(resid(th), 0.1),
                                PROBE_EFFICIENCIES_FINE if settings.probe_fine else PROBE_EFFICIENCIES,
                                pairs=bool(settings.probe_pairs))
        if not np.array_equal(theta1, sol.x):
            sol = least_squares(resid, theta1, bounds=(lo, hi), loss="soft_l1", f_scale=0.1,
                                max_nfev=200 * len(theta0), jac_sparsity=sparsity)
    return sol


def _micro_family_mask(data: FitData, families: tuple[str, ...]) -> np.ndarray:
    """1 for network samples and for microbenchmark samples of ``families``, 0 for other microbenchmark samples (data
    prepared with more families than a setting uses: grouped cross-validation of several settings)."""
    mask = np.ones(len(data.measured))
    n_micro = len(data.micro_labels)
    if n_micro:
        mask[len(mask) - n_micro:] = [label.split(" ", 1)[0] in families for label in data.micro_labels]
    return mask


PROBE_EFFICIENCIES = (0.3, 0.1, 0.03, 0.01)
# a finer grid (FitSettings.probe_fine): an element-rate-bound kernel class (16-bit batch norm: ~0.013 of the
# CUDA-core FMA ceiling at two FLOPs an element) sits between the coarse grid's points, where one step is too slow
PROBE_EFFICIENCIES_FINE = (0.3, 0.2, 0.1, 0.07, 0.05, 0.03, 0.02, 0.015, 0.01, 0.007)


def _soft_l1_cost(r: np.ndarray, f_scale: float) -> float:
    z = (r / f_scale) ** 2
    return float(np.sum(2.0 * (np.sqrt(1.0 + z) - 1.0)))


def probe_ceilings(theta: np.ndarray, lo: np.ndarray, hi: np.ndarray, n_groups: int, cost,
                   efficiencies: tuple[float, ...] = PROBE_EFFICIENCIES, pairs: bool = False) -> np.ndarray:
    """Move a group's eff_compute or eff_memory to a low value where that lowers the cost.

    A ceiling that binds none of a group's kernels has zero gradient (the time is a max), so a local solver leaves it
    at its start (0.7) even where the data say the kernels run far below it there (PyTorch's NCHW pooling: index
    arithmetic, 0.3-0.8 TFLOP/s of counted work). Each group's two efficiencies are tried at PROBE_EFFICIENCIES
    (within bounds), one at a time, greedily; the solver restarts from the result. With ``pairs``, a group whose
    eff_compute is still high and eff_memory low then tries both at once (PROBE_EFFICIENCIES_FINE x PAIR_MEMORY): an
    element-rate-bound class (16-bit batch norm) whose compute term at the element rate only ties its memory term,
    so that neither single move lowers the cost."""
    best, best_cost = theta.copy(), cost(theta)
    for g in range(n_groups):
        for j in (3 * g + 1, 3 * g + 2):
            for v in efficiencies:
                x = math.log(v)
                if not (lo[j] <= x <= hi[j]) or x >= best[j]:
                    continue
                trial = best.copy()
                trial[j] = x
                c = cost(trial)
                if c < best_cost * (1 - 1e-4):
                    best, best_cost = trial, c
    for g in range(n_groups) if pairs else ():
        jc, jm = 3 * g + 1, 3 * g + 2
        if best[jc] < math.log(0.5) or best[jm] >= math.log(PAIR_MEMORY[0]):
            continue  # compute already determined, or memory already high: not an element-rate candidate
        for vc in PROBE_EFFICIENCIES_FINE:
            for vm in PAIR_MEMORY:
                xc, xm = math.log(vc), math.log(vm)
                if not (lo[jc] <= xc < theta[jc] and theta[jm] < xm <= hi[jm]):
                    continue
                trial = best.copy()
                trial[jc], trial[jm] = xc, xm
                c = cost(trial)
                if c < best_cost * (1 - 1e-4):
                    best, best_cost = trial, c
    return best


# eff_memory values a pair probe tries with a low eff_compute (FitSettings.probe_pairs)
PAIR_MEMORY = (0.4, 0.6, 0.8)


def jacobian_sparsity(data: FitData, n_params: int):
    """Which parameters each residual depends on (samples, cases, prior rows): a node's group parameters, its row
    cost, its layout group's t0 and eff_memory, gemm_k_half, and rnn_overlap for an overlapping node; finite
    differences then perturb many parameters at once (scipy's column grouping)."""
    from scipy.sparse import coo_matrix

    rows, n_s, n_c, g_n = data.rows, len(data.measured), len(data.case_ref), len(data.keys)
    node_cols = [3 * rows.group, 3 * rows.group + 1, 3 * rows.group + 2, 3 * g_n + rows.group,
                 3 * rows.layout_group, 3 * rows.layout_group + 2, np.full(len(rows.group), n_params - 1)]
    r_idx, c_idx = [], []
    for cols in node_cols:
        m = rows.sample >= 0
        r_idx += [rows.sample[m]]
        c_idx += [cols[m]]
        m = rows.case >= 0
        r_idx += [n_s + rows.case[m]]
        c_idx += [cols[m]]
    ov = rows.overlaps > 0
    r_idx += [n_s + rows.case[ov & (rows.case >= 0)], rows.sample[ov & (rows.sample >= 0)]]
    c_idx += [np.full(int((ov & (rows.case >= 0)).sum()), n_params - 2), np.full(int((ov & (rows.sample >= 0)).sum()),
                                                                                 n_params - 2)]
    r_idx += [n_s + n_c + np.arange(n_params)]
    c_idx += [np.arange(n_params)]
    r, c = np.concatenate(r_idx), np.concatenate(c_idx)
    m = coo_matrix((np.ones(len(r)), (r, c)), shape=(n_s + n_c + n_params, n_params)).tocsr()
    m.data[:] = 1.0
    return m


def _at_bound(value: float, lower: float, upper: float) -> str | None:
    return "lower" if value <= lower * (1 + 1e-9) else "upper" if value >= upper * (1 - 1e-9) else None


def parameter_report(sol, data: FitData,
                     settings: FitSettings = FitSettings()) -> dict[str, dict[str, dict[str, dict]]]:
    """Per class, precision and parameter: value, relative standard error (from the Gauss-Newton covariance of the
    log-space parameters), bounds, start, whether it sits at a bound and whether the data determined it (a relative
    standard error under 0.5, off its bounds, with nodes of the group in the data)."""
    jac = sol.jac.toarray() if hasattr(sol.jac, "toarray") else np.asarray(sol.jac)
    dof = max(jac.shape[0] - jac.shape[1], 1)
    s2 = 2.0 * float(sol.cost) / dof
    cov = np.linalg.pinv(jac.T @ jac) * s2
    se = np.sqrt(np.maximum(np.diag(cov), 0.0))
    theta0, lo, hi = _theta_bounds(data, bool(settings.legacy_bounds), settings.min_tensor_efficiency)
    n_g = len(data.keys)
    out: dict = {}
    for (cls, prec), gi in data.groups.items():
        if data.counts[gi] == 0 or prec in SHARED:
            continue
        idx = {name: 3 * gi + j for j, name in enumerate(_PARAM_ORDER)}
        if np.any((data.rows.rows_per_sm + data.rows.loop_steps > 0) & (data.rows.group == gi)):
            idx["row_s"] = 3 * n_g + gi
        if gi in data.pinned:
            rep = data.pinned_reports.get(cls, {}).get(prec, {})
            out.setdefault(cls, {})[prec] = {
                name: {"value": float(v), "stderr_rel": rep.get("stderr_rel", {}).get(name),
                       "lower": param_bounds(name, cls, prec)[0], "upper": param_bounds(name, cls, prec)[1],
                       "determined": bool(rep.get("determined", {}).get(name, False)),
                       "held": _pinned_fits()[cls][2],
                       "at_bound": _at_bound(v, *param_bounds(name, cls, prec))}
                for name, v in {**data.pinned[gi], **({"eff_l2": data.eff_l2_by_key[(cls, prec)]}
                                                      if (cls, prec) in data.eff_l2_by_key else {})}.items()}
            continue
        entry = {}
        for name, i in idx.items():
            at = "lower" if sol.x[i] <= lo[i] + 1e-9 else "upper" if sol.x[i] >= hi[i] - 1e-9 else None
            entry[name] = {"value": float(math.exp(sol.x[i])), "stderr_rel": float(se[i]),
                           "lower": float(math.exp(lo[i])), "upper": float(math.exp(hi[i])),
                           "start": float(math.exp(theta0[i])), "at_bound": at,
                           "determined": bool(at is None and se[i] < 0.5)}
        out.setdefault(cls, {})[prec] = entry
    return out


def fit(cases: list[Case], kernels: dict, profile, log=print, settings: FitSettings = FitSettings(),
        data: FitData | None = None) -> dict:
    data = data or prepare_fit(cases, kernels, profile, settings.micro_families, log, settings.table_weight > 0,
                               tuple(other_gpu_data(g) for g in OTHER_GPUS) if settings.h100_weight > 0 else ())
    sol = solve(data, settings)
    rows, keys, groups, counts = data.rows, data.keys, data.groups, data.counts
    pred = _sample_times(sol.x, data)
    err = np.abs(pred / data.measured - 1)
    net, micro = (data.sample_case >= 0) & ~data.table, data.sample_case < 0
    whole = predict_cases(sol.x, rows, len(data.case_ref), data.row_gap_s, data.eff_l2, data.block_s)
    case_err = np.abs(whole / data.case_ref - 1)
    own = data.case_gpu == 0  # the fitted GPU's cases (others: FitSettings.h100_weight)
    others = sorted(set(data.case_gpu.tolist()) - {0})
    med = lambda m: float(np.median(err[m])) if m.any() else None  # noqa: E731
    log(f"fit: {int(net.sum())} module-scope samples from {len(cases)} cases, {int(data.table.sum())} kernel-table "
        f"samples and {int(micro.sum())} microbenchmark kernels, {len(keys) * 3} parameters; scope median |error| "
        f"{med(net):.1%}, kernel-table {med(data.table) or float('nan'):.1%}, microbenchmark "
        f"{med(micro) or float('nan'):.1%}, training whole-network MAPE "
        f"{np.mean(case_err[own]):.1%}, cost {sol.cost:.4g}")
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
        if counts[gi] and np.any((rows.rows_per_sm + rows.loop_steps > 0) & (rows.group == gi)):
            classes[cls][prec]["row_s"] = float(row_s[gi])
        if gi in data.pinned and prec not in SHARED:  # the held values themselves (the solver's are within
            # PIN_WIDTH), also for a precision no training node has: the class's own fit determined them
            classes.setdefault(cls, {}).setdefault(prec, {"n_nodes": int(counts[gi])})
            classes[cls][prec].update({k: float(v) for k, v in data.pinned[gi].items()})
    for (cls, prec), e in data.eff_l2_by_key.items():
        if cls in classes and prec in classes[cls]:
            classes[cls][prec]["eff_l2"] = e
    # class-wide fallback for precisions without data: the geometric mean of the fitted ones
    for cls, by_p in classes.items():
        fitted = [v for v in by_p.values()]
        by_p["*"] = {k: float(np.exp(np.mean([math.log(v[k]) for v in fitted])))
                     for k in ("t0_s", "eff_compute", "eff_memory", "row_s", "block_s") if all(k in v for v in fitted)}
    all_fits = [v for by_p in classes.values() for p, v in by_p.items() if p != "*"]
    classes["default"] = {"*": {k: float(np.exp(np.median([math.log(v[k]) for v in all_fits])))
                                for k in ("t0_s", "eff_compute", "eff_memory")}}
    return {"classes": classes, "hidden": data.hidden, "scope_median_error": med(net),
            "kernel_median_error": med(micro), "table_median_error": med(data.table),
            "n_samples": int(net.sum()), "n_kernel_samples": int(micro.sum()), "n_table_samples": int(data.table.sum()),
            "gemm_k_half": unpack(sol.x)[5], "gap_s": data.gap_s,
            "rnn_overlap": data.pinned_overlap if data.pinned_overlap is not None else unpack(sol.x)[4],
            "train_mape": float(np.mean(case_err[own])),
            "other_gpu_cases": {OTHER_GPUS[g - 1]: sorted({data.case_names[i] for i in np.flatnonzero(data.case_gpu == g)})
                                for g in others},
            "other_gpu_mape": {OTHER_GPUS[g - 1]: float(np.mean(case_err[data.case_gpu == g])) for g in others},
            "report": parameter_report(sol, data, settings), "settings": asdict(settings)}


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
    """A fitted hidden-kernel entry as the calibration file's list: the main fit's ``{count, moving}`` (layout-class
    kernels, ``moving`` of them passing over the node's activations, the rest fixed-cost), a plain count of
    layout-like kernels (autocast's, micro_fit's), or an entry of its own (a dict with a kind, e.g. micro_fit's
    per-group kernels)."""
    if isinstance(entry, dict) and "moving" in entry:
        fixed = round(entry["count"] - entry["moving"], 2)
        return ([{"kind": "layout", "count": entry["moving"], "bytes_of": "io"}] if entry["moving"] > 0 else []) + \
            ([{"kind": "layout", "count": fixed, "bytes_of": "none"}] if fixed > 0 else [])
    if isinstance(entry, dict):
        return [entry] if entry["count"] > 0 else []
    return [{"kind": "layout", "count": entry, "bytes_of": "io"}] if entry > 0 else []


# what the data behind a class can and cannot say, written into the calibration file's fit_report
CLASS_NOTES = {
    "layernorm": "layer norms and RMS norms (PyTorch's vectorized_layer_norm_kernel, rms = true for the latter: ONNX "
                 "RMSNormalization and the exporter's rms_norm decomposition, graph/runtime.py): row_s is the cost of "
                 "one row per SM (a thread block each), eff_memory the bytes' rate, and the two add up; a norm whose "
                 "input is a strided view (predictor/strided_norms.py) pays its .contiguous() copy as the hidden "
                 "kernels of LayerNormalization:strided, not in these parameters (before, those copies in the norms' "
                 "module scopes held the 16-bit eff_memory at 0.36). At fp32 eff_memory sits at its upper bound 1.0: "
                 "on the layer_norm_rows microbenchmarks 100,352 rows take 151 us at 64 elements and 303 us at 1,024, "
                 "152 us for 770 MB more (5.1 TB/s, above the HBM ceiling): rows and bytes overlap there, which the "
                 "sum does not express",
    "attention": "row_s is the cost of one query block (B x H x query tiles of 128 rows at 16-bit, 64 at fp32/tf32: "
                 "timing/features.attention_blocks, attention_tile_for; the "
                 "queries' load, the key pipeline's ramp, the output's normalisation and store), eff_compute the key "
                 "loop's rate against the ERT GEMM ceiling (the softmax's FLOPs at the CUDA-core one); no fitted call "
                 "is memory-bound, so eff_memory (0.5 at fp32, 1.0 at 16-bit) is not set by attention data (the "
                 "sdpa_decode microbenchmarks, not fitted, run within -13..+57% of it, most +1..+15%); calls with an "
                 "additive float mask run PyTorch's memory-efficient kernel at ~0.55x the cuDNN flash kernel's rate "
                 "(sdpa_masked, run 9) and share the class: not modelled",
    "gemv": "linear layers of one row (graph/opclass._one_row_linear: classifier heads and decoder steps at batch 1), "
            "held at the fit of calibration/fit/gemv_fit.py on their kernels in the H200 and H100 kernel tables (one "
            "sample per GPU, network, precision and shape: cuBLAS's gemv kernels at fp32/tf32, 8-row nvjet tiles at "
            "16-bit). t0_s is the kernel's fixed cost, eff_memory the weights' streaming rate against the HBM "
            "ceiling; eff_compute is undetermined (at its bound 1.0: no kernel is compute-bound); at 16-bit the "
            "kernels' time grows with K over too few tiles, which t0_s and eff_memory follow only to ~36% (kernel "
            "MAPE; fp32/tf32 ~12%)",
    "gemm_thin": "linear layers with a K or N below 16 (graph/ops/matmul.thin_linear_steps: CaiT's 4 x 4 talking-heads "
                 "mixing, ConViT's 3 -> 4 positional projection), held at the fit of calibration/fit/thin_gemm_fit.py "
                 "on the H100's linear_thin sweep (7 shapes x 4 row counts a precision, priced on the H100's "
                 "profile). row_s is the cost of one 32 x 32 x 32 tile step per SM (the rows are the steps, which "
                 "hold the K loop: no gemm_k_half); eff_compute is the share of the tensor (or fp32) peak the padded "
                 "FLOPs reach (~2% at 16-bit: the N and K dependence the tile steps miss), eff_memory mostly "
                 "undetermined; the sweep's heuristics (a 4 x 4 layer over 65 k rows twice as slow as over 393 k at "
                 "fp32) leave its kernels 17-35% off per precision",
    "grouped_large": "one shape only: the 128-tap, 16-group positional convolution of wav2vec2 and WavLM (768 "
                     "channels, 49 frames); eff_compute is its CUDA-core rate per precision once the SMs are full "
                     "(the features give it the per-group waves: timing/features.grouped_large_shape); t0_s is not "
                     "determined (at tf32 it sits at its 50 us upper bound), and the kernel edge from which a grouped "
                     "convolution joins this class (graph/opclass.LARGE_GROUPED, 16) is not measured between 3 and "
                     "128",
    "depthwise": "depthwise convolutions of kernel edges below 7 on NCHW input (graph/opclass.LARGE_DEPTHWISE): at "
                 "fp32 and bf16 PyTorch's own kernel (a thread per output looping over the taps), at fp16 mostly "
                 "cuDNN's grouped direct kernels plus a bias pass. row_s is the cost of one output per SM (OpWork.rows "
                 "= the outputs: the time grows with the outputs before the taps or the bytes, ~7-12 ps an output at "
                 "batch 32 whatever the element size, kernel tables), eff_compute the rate of the taps; eff_memory is "
                 "the bytes' rate where they bind",
    "depthwise_large": "depthwise convolutions of kernel edge 7 or more on NCHW input (channels-last ones are class "
                       "depthwise_nhwc): PyTorch's kernel at every precision; row_s, eff_compute and eff_memory as for "
                       "depthwise",
    "reduce": "PyTorch's thread-loop kernels: reduce_kernel (Reduce*, a decomposed variance's Welford pass) and the "
              "scans of CumSum; row_s is the time of one dependent step of the loop",
    "depthwise_nhwc": "depthwise convolutions on channels-last input (a permuted ConvNeXt-style block: "
                      "predictor/layout_views.py): ConvNeXt, MambaOut, UperNet-ConvNeXt, EdgeNeXt, GCViT, TinyViT and "
                      "MViTv2 scopes; timm's MViTv2 copies its permute to contiguous memory first, which the graph "
                      "cannot show",
}


def build_document(result: dict, cases: list[Case], profile, host_s: dict[str, float]) -> dict:
    classes = {}
    for cls, by_p in result["classes"].items():
        classes[cls] = {p: {k: v[k] for k in ("t0_s", "eff_compute", "eff_memory", "row_s", "block_s", "eff_l2")
                            if k in v}
                        for p, v in by_p.items()}
    hidden = {op: {p: _hidden_list(n) for p, n in by_p.items()} for op, by_p in result["hidden"].items()}
    nets = sorted({c.network for c in cases})
    return {
        "schema_version": 1,
        "gpu": "h200",
        "kernel_gap_s": result["gap_s"],
        "gemm_k_half": result["gemm_k_half"],
        "rnn_overlap": result["rnn_overlap"],
        "host_dispatch_s": host_s,
        "classes": classes,
        "hidden_kernels": hidden,
        "fit_report": {
            "settings": result.get("settings", {}),
            "meaning": {k: {"unit": v.unit, "meaning": v.meaning} for k, v in PARAMS.items()},
            "parameters": result.get("report", {}),
            "undetermined": sorted(f"{c}.{p}.{k}" for c, by_p in result.get("report", {}).items()
                                   for p, ps in by_p.items() for k, v in ps.items() if not v["determined"]),
            "class_notes": CLASS_NOTES,
            "note": "per parameter of the main fit: value, relative standard error (Gauss-Newton covariance of the "
                    "log-space parameters), bounds (predictor/timing/params.py), start, whether it sits at a bound, "
                    "and whether the data determined it (stderr_rel < 0.5, off its bounds); an undetermined "
                    "parameter is the starting value or a bound, not a measurement",
        },
        "provenance": {
            "fitted_by": "python -m calibration.fit.fit",
            "date": _dt.date.today().isoformat(),
            "training_networks": nets,
            "cases": len(cases),
            "module_scope_samples": result["n_samples"],
            "microbenchmark_kernel_samples": result.get("n_kernel_samples", 0),
            "kernel_median_abs_error": round(result["kernel_median_error"], 4)
            if result.get("kernel_median_error") is not None else None,
            "kernel_table_samples": result.get("n_table_samples", 0),
            "kernel_table_median_abs_error": round(result["table_median_error"], 4)
            if result.get("table_median_error") is not None else None,
            "scope_median_abs_error": round(result["scope_median_error"], 4),
            "training_whole_network_mape": round(result["train_mape"], 4),
            "data": "calibration/data/h200/timing (PyTorch 2.11 eager, cuDNN 9.19, H200, 2026-12-02) and the op "
                    "microbenchmarks calibration/data/h200/microbench (families: calibration/fit/kernel_samples.py; rows that "
                    "timed the host's launch, calibration/fit/micro_fit.host_bound, replaced by the H100's re-measured "
                    "rows of the same cases, calibration/data/h100/microbench/run21)" + (
                        "; the training networks' broadcasting elementwise kernels from the same timing tables, one "
                        "sample per case, op and shapes (calibration/fit/table_samples.py)"
                        if result.get("n_table_samples") else "") + "".join(
                        f"; {gpu}: the training networks timed there (calibration/data/{gpu}/timing: "
                        f"{', '.join(nets)}), priced on its ERT ceilings, weight {result['settings'].get('h100_weight')}"
                        f", its whole-network MAPE {result['other_gpu_mape'][gpu]:.4f}"
                        for gpu, nets in result.get("other_gpu_cases", {}).items()),
            "profile": "h200 (ERT-measured ceilings)",
            "kernel_gap_s": "median over the training networks' batch-1 replayed cases of (CUDA-graph replay time - "
                            "eager kernel sum) / kernels (calibration/fit/fit.py replay_gap_s); the ERT run's replay of "
                            "empty kernels gives " + f"{profile.kernel_gap_s:.3g} s (an empty kernel's own duration "
                            "included)",
            "host_dispatch_s": "median eager time per launched kernel over host-bound training cases "
                               "(library_kernel: of the recurrent training network, kernels inside one cuDNN call)",
            "model": "predictor/fitted.py docstring",
        },
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m calibration.fit.fit", description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--h100-weight", type=float, default=FitSettings.h100_weight,
                    help="weight of the H100's training cases (FitSettings.h100_weight; default %(default)s)")
    a = ap.parse_args(argv)
    if not (a.h100_weight >= 0 and math.isfinite(a.h100_weight)):
        print(f"error: --h100-weight must be a finite number >= 0, not {a.h100_weight}", file=sys.stderr)
        return 2
    profile = load_profile("h200")
    cases = training_cases(load_cases())
    if not cases:
        print("error: no training cases found under calibration/data/h200/timing", file=sys.stderr)
        return 2
    kernels = load_kernels()
    result = fit(cases, kernels, profile, settings=FitSettings(h100_weight=a.h100_weight))
    result["hidden"].update(learn_autocast_hidden())
    from .micro_fit import fit_micro_classes

    micro_classes, micro_hidden = fit_micro_classes(result["classes"], result["gemm_k_half"], result["gap_s"], profile)
    result["classes"].update(micro_classes)
    result["hidden"].update(micro_hidden)
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
    from .rnn_bidir_fit import fit_rnn_bidir_overlap

    bidir = fit_rnn_bidir_overlap(doc, profile)
    if bidir:
        doc["rnn_bidir_overlap"] = bidir["value"]
        doc.setdefault("fit_report", {})["rnn_bidir_overlap"] = {
            "samples": bidir["samples"], "share_quartiles": bidir["quartiles"], "share_median": bidir["median"],
            "at_bound": bidir["at_bound"], "bounds": [0.0, 0.95],
            "source": "calibration/fit/rnn_bidir_fit.py (microbenchmark run 7, rnn_bidir, one-layer calls)"}
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {a.out}: hidden kernels {json.dumps(result['hidden'])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
