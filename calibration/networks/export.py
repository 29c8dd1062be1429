"""Export the zoo to weight-free ONNX graphs with a dynamic batch dim.

    python3 -m calibration.networks.export --out DIR [--names a,b] [--exporters torchscript,dynamo]

Per network and exporter: export at fp32 (example batch 2, leading dim named `batch`), check the
graph with weights under onnxruntime CPU at batch 1 and 2 against torch, strip the weights (tensors
>= 1 KB go to external data, whose file is then deleted), check the stripped graph loads and
shape-infers, and record everything in DIR/export_manifest.json (rewritten after each file).
Dynamo exports run in a child process with a time limit so that a slow or crashing export is
recorded and skipped.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import datetime as _dt
import json
import os
import subprocess
import sys
import tempfile
import time
import traceback
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from . import zoo

EXPORTERS = ("torchscript", "dynamo")
DEFAULT_DYNAMO_NAMES = ("resnet50", "vit_b_16", "bert_base", "gpt2", "lstm")
EXAMPLE_BATCH = 2          # batch 1 would be specialised by torch.export
CHECK_BATCHES = (1, 2)
MANIFEST = "export_manifest.json"


@dataclass(frozen=True)
class ExportOptions:
    """What to export and how hard to check it."""

    out_dir: str
    names: tuple[str, ...]
    exporters: tuple[str, ...] = ("torchscript",)
    dynamo_names: tuple[str, ...] = DEFAULT_DYNAMO_NAMES
    dynamo_timeout_s: float = 150.0
    dynamo_jobs: int = 3         # dynamo exports run in parallel child processes
    opset_torchscript: int = 17
    opset_dynamo: int = 18
    ort_check: bool = True
    ort_max_s: float = 20.0      # skip the ORT check when its estimated cost is larger
    max_seconds: float = 0.0     # whole-run budget; 0 = none
    rtol: float = 1e-3
    train_mode: bool = False     # module.train() before export: Dropout nodes kept (files *.<exporter>_train.onnx)


@dataclass
class ExportRecord:
    """One manifest entry (one network x exporter)."""

    network: str
    exporter: str
    file: str = ""
    opset: int = 0
    split: str = ""
    family: str = ""
    input_names: list = field(default_factory=list)
    input_shapes: list = field(default_factory=list)   # symbolic: 'batch' for the dynamic dim
    output_shapes: list = field(default_factory=list)
    n_nodes: int = 0
    n_functions: int = 0
    n_function_nodes: int = 0
    n_initializers: int = 0
    op_types: dict = field(default_factory=dict)
    file_bytes: int = 0
    stripped_data_bytes: int = 0
    n_params: int = 0
    checks: dict = field(default_factory=dict)          # 'ort_b1', 'ort_b2', 'stripped_load', ...
    export_s: float = 0.0
    total_s: float = 0.0
    versions: dict = field(default_factory=dict)
    date_utc: str = ""
    error: str = ""


def utc_now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def versions() -> dict[str, str]:
    """Versions of the exporting stack (missing packages are reported as such)."""
    out = {"python": sys.version.split()[0]}
    for mod in ("torch", "torchvision", "transformers", "timm", "onnx", "onnxscript", "onnxruntime"):
        try:
            out[mod] = __import__(mod).__version__
        except Exception as exc:  # noqa: BLE001 - a version is informative, never fatal
            out[mod] = f"unavailable ({type(exc).__name__})"
    return out


def write_manifest(out_dir: str | os.PathLike, records: list[dict], meta: dict | None = None) -> Path:
    """Write DIR/export_manifest.json atomically: {'meta': ..., 'files': [records]}."""
    path = Path(out_dir) / MANIFEST
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps({"meta": meta or {}, "files": records}, indent=1, default=str))
    tmp.replace(path)
    return path


def read_manifest(out_dir: str | os.PathLike) -> dict:
    return json.loads((Path(out_dir) / MANIFEST).read_text())


# ----------------------------------------------------------------------------- exporting
@contextlib.contextmanager
def _no_packed_sequence_detection():
    """Disable transformers' packed-sequence detection while tracing.

    It uses aten::diff (no TorchScript ONNX symbolic) and returns None for the plain
    arange position ids of these networks anyway, so the exported graph is unchanged.
    """
    try:
        import transformers.masking_utils as mu
    except Exception:  # noqa: BLE001 - transformers absent or reorganised
        yield
        return
    original = getattr(mu, "find_packed_sequence_indices", None)
    if original is None:
        yield
        return
    mu.find_packed_sequence_indices = lambda position_ids: None
    try:
        yield
    finally:
        mu.find_packed_sequence_indices = original


def _unfold_fixed(g, input, dimension, size, step):
    """aten::unfold with its dimension made non-negative first: the exporter's own symbolic (opset 12, opset 9's
    for a static size) reuses a negative dimension as the Unsqueeze and Concat axis of the one-rank-higher stack
    of windows, so ``x.unfold(-2, ...)`` exported windows along the wrong axis (PatchTST and PatchTSMixer's
    patching: an invalid graph, or a wrong one where the sizes happen to broadcast)."""
    from torch.onnx._internal.torchscript_exporter import symbolic_helper, symbolic_opset12

    rank = symbolic_helper._get_tensor_rank(input)
    if rank is not None and dimension < 0:
        dimension += rank
    return symbolic_opset12.unfold.__wrapped__(g, input, dimension, size, step)


def _repeat_interleave_fixed(g, self, repeats, dim=None, output_size=None):
    """aten::repeat_interleave on a fresh copy of a constant ``dim``: the exporter's symbolic (opset 13) adds the
    rank to a negative dim in place, in the tensor of the Constant node it reads, which the traced graph shares
    with every other use of that value (CANINE's repeat_interleave(dim=-2) turned the final encoder's
    ``key.transpose(-1, -2)`` into ``transpose(-1, 1)``: an invalid graph)."""
    from torch.onnx._internal.torchscript_exporter import symbolic_helper, symbolic_opset13

    value = symbolic_helper._maybe_get_const(dim, "t") if dim is not None else None
    if hasattr(value, "clone"):
        dim = g.op("Constant", value_t=value.clone())
    return symbolic_opset13.repeat_interleave(g, self, repeats, dim, output_size)


def _expm1(g, self):
    """aten::expm1 (no TorchScript ONNX symbolic; ONNX has no Expm1) as Exp(x) - 1: two elementwise nodes where
    PyTorch runs one kernel (Apertus' xIELU activation)."""
    import torch

    one = g.op("CastLike", g.op("Constant", value_t=torch.tensor(1.0)), self)
    return g.op("Sub", g.op("Exp", self), one)


def _rms_norm(g, self, normalized_shape, weight, eps):
    """aten::rms_norm (no TorchScript ONNX symbolic at opset 17) as x / sqrt(mean(x^2) + eps) * weight over the
    normalised trailing axes: six elementwise/reduce nodes where PyTorch runs one fused kernel (timm's RmsNorm)."""
    import torch
    from torch.onnx._internal.torchscript_exporter import symbolic_helper

    axes = list(range(-len(symbolic_helper._parse_arg(normalized_shape, "is")), 0))
    eps_value = symbolic_helper._parse_arg(eps, "f") if not symbolic_helper._is_none(eps) else 1.1920928955078125e-07
    eps_t = g.op("CastLike", g.op("Constant", value_t=torch.tensor(eps_value)), self)
    mean_sq = g.op("ReduceMean", g.op("Mul", self, self), axes_i=axes, keepdims_i=1)
    out = g.op("Div", self, g.op("Sqrt", g.op("Add", mean_sq, eps_t)))
    return out if symbolic_helper._is_none(weight) else g.op("Mul", out, weight)


@contextlib.contextmanager
def _torchscript_symbolic_fixes(opset: int):
    """Replace TorchScript exporter symbolics that write invalid graphs (see each function) while exporting at
    ``opset``; the exporter's own come back afterwards."""
    import torch

    try:
        from torch.onnx._internal.torchscript_exporter import symbolic_helper
    except ImportError:  # a torch that lays its exporter out otherwise: its own symbolics
        yield
        return
    fixes = {"aten::unfold": symbolic_helper.parse_args("v", "i", "v", "v")(_unfold_fixed),
             "aten::repeat_interleave": _repeat_interleave_fixed, "aten::expm1": _expm1,
             "aten::rms_norm": _rms_norm}
    for name, fn in fixes.items():
        torch.onnx.register_custom_op_symbolic(name, fn, opset)
    try:
        yield
    finally:
        for name in fixes:
            torch.onnx.unregister_custom_op_symbolic(name, opset)


def _export_proto(module, inputs: tuple, spec: zoo.NetworkSpec, exporter: str, opts: ExportOptions):
    """Export `module` and return the ModelProto with weights (in memory)."""
    import onnx
    import torch

    names_in, names_out = [spec.input_name], ["output"]
    if exporter == "torchscript":
        # a file, not a buffer: a network over protobuf's 2 GiB is written with its weights as external data
        with tempfile.TemporaryDirectory() as tmp, _no_packed_sequence_detection(), \
                _torchscript_symbolic_fixes(opts.opset_torchscript):
            path = os.path.join(tmp, "model.onnx")
            # PRESERVE (module in eval mode): keeps BatchNormalization nodes, which EVAL would fold into
            # the preceding Conv although PyTorch eager, the reference runtime, runs them as kernels
            torch.onnx.export(module, inputs, path, dynamo=False, opset_version=opts.opset_torchscript,
                              input_names=names_in, output_names=names_out, do_constant_folding=True,
                              training=torch.onnx.TrainingMode.PRESERVE,
                              dynamic_axes={names_in[0]: {0: "batch"}, names_out[0]: {0: "batch"}})
            return onnx.load(path)
    if exporter == "dynamo":
        batch = torch.export.Dim("batch", min=1, max=1024)
        program = torch.onnx.export(module, inputs, dynamo=True, opset_version=opts.opset_dynamo,
                                    input_names=names_in, output_names=names_out,
                                    dynamic_shapes=({0: batch},), report=False, verbose=False)
        return program.model_proto
    raise ValueError(f"unknown exporter {exporter!r}")


def _symbolic_shapes(values) -> list:
    out = []
    for v in values:
        dims = v.type.tensor_type.shape.dim
        out.append([d.dim_param if d.dim_param else d.dim_value for d in dims])
    return out


def _describe(proto, rec: ExportRecord) -> None:
    from collections import Counter

    g = proto.graph
    rec.opset = max((o.version for o in proto.opset_import if o.domain in ("", "ai.onnx")), default=0)
    rec.input_shapes = _symbolic_shapes(g.input)
    rec.output_shapes = _symbolic_shapes(g.output)
    rec.n_nodes = len(g.node)
    rec.n_functions = len(proto.functions)
    rec.n_function_nodes = sum(len(f.node) for f in proto.functions)
    rec.n_initializers = len(g.initializer)
    rec.op_types = dict(Counter(n.op_type for n in g.node).most_common())


def _max_diff(ref, got) -> dict:
    import numpy as np

    ref = np.asarray(ref, dtype=np.float64)
    got = np.asarray(got, dtype=np.float64)
    if ref.shape != got.shape:
        return {"ok": False, "error": f"shape {list(got.shape)} != torch {list(ref.shape)}"}
    diff = float(np.max(np.abs(ref - got))) if ref.size else 0.0
    scale = float(np.max(np.abs(ref))) if ref.size else 0.0
    return {"max_abs_diff": diff, "max_abs_ref": scale, "rel_diff": diff / max(scale, 1e-12),
            "finite": bool(np.isfinite(got).all()), "shape": list(got.shape)}


def _ort_check(model_bytes: bytes, module, spec: zoo.NetworkSpec, opts: ExportOptions,
               torch_b1_s: float) -> dict[str, Any]:
    """Run the graph (with weights) under onnxruntime CPU at batch 1 and 2, compare with torch."""
    import onnxruntime as ort
    import torch

    est_s = 3.0 * torch_b1_s * 2 + 1.0   # torch + ORT for 1 + 2 samples
    if est_s > opts.ort_max_s:
        return {f"ort_b{b}": {"skipped": f"estimated {est_s:.0f} s > {opts.ort_max_s:.0f} s"}
                for b in CHECK_BATCHES}
    so = ort.SessionOptions()
    so.intra_op_num_threads = torch.get_num_threads()
    so.log_severity_level = 3
    sess = ort.InferenceSession(model_bytes, so, providers=["CPUExecutionProvider"])
    out = {}
    for b in CHECK_BATCHES:
        try:
            (x,) = zoo.make_inputs(spec, b, seed=100 + b)
            with torch.inference_mode():
                ref = module(x).float().numpy()
            t0 = time.perf_counter()
            got = sess.run(None, {spec.input_name: x.numpy()})[0]
            res = _max_diff(ref, got)
            res["ort_s"] = round(time.perf_counter() - t0, 3)
            if "rel_diff" in res:
                res["ok"] = res["finite"] and res["rel_diff"] < opts.rtol
            out[f"ort_b{b}"] = res
        except Exception as exc:  # noqa: BLE001
            out[f"ort_b{b}"] = {"ok": False, "error": _short(exc)}
    return out


def strip_and_save(proto, path: Path) -> dict[str, Any]:
    """Save `proto` with tensors >= 1 KB as external data, then delete the data file."""
    import onnx

    location = path.name + ".data"
    onnx.save_model(proto, str(path), save_as_external_data=True, all_tensors_to_one_file=True,
                    location=location, size_threshold=1024, convert_attribute=False)
    data = path.parent / location
    data_bytes = data.stat().st_size if data.exists() else 0
    if data.exists():
        data.unlink()
    return {"stripped_data_bytes": data_bytes, "file_bytes": path.stat().st_size}


def check_stripped(path: Path) -> dict[str, Any]:
    """The weight-free file must load without its data and pass shape inference."""
    import onnx

    res: dict[str, Any] = {}
    try:
        m = onnx.load(str(path), load_external_data=False)
        res["load"] = True
        inferred = onnx.shape_inference.infer_shapes(m)
        res["infer_shapes"] = True
        res["n_value_info"] = len(inferred.graph.value_info)
        res["ok"] = True
    except Exception as exc:  # noqa: BLE001
        res.update(ok=False, error=_short(exc))
    return res


def _short(exc: BaseException, limit: int = 600) -> str:
    msg = f"{type(exc).__name__}: {exc}"
    return msg if len(msg) <= limit else msg[:limit] + " ..."


def export_one(name: str, exporter: str, opts: ExportOptions) -> ExportRecord:
    """Export, check and strip one network; never raises (errors go into the record)."""
    import onnx
    import torch

    t_start = time.perf_counter()
    spec = zoo.NETWORKS[name]
    rec = ExportRecord(network=name, exporter=exporter, split=spec.split, family=spec.family,
                       input_names=[spec.input_name], versions=versions(), date_utc=utc_now())
    path = Path(opts.out_dir) / f"{name}.{exporter}{'_train' if opts.train_mode else ''}.onnx"
    stage = "build"
    try:
        module, inputs, meta = zoo.build(name, EXAMPLE_BATCH)
        rec.n_params = meta["n_params"]
        stage = "torch_forward"
        (x1,) = zoo.make_inputs(spec, 1, seed=7)
        with torch.inference_mode():
            t0 = time.perf_counter()
            module(x1)
            torch_b1_s = time.perf_counter() - t0
        stage = "export"
        if opts.train_mode:  # dropout as a training step runs it (randomness: ORT values are not compared)
            module.train()
        t0 = time.perf_counter()
        proto = _export_proto(module, inputs, spec, exporter, opts)
        rec.export_s = round(time.perf_counter() - t0, 2)
        _describe(proto, rec)
        stage = "checker"
        try:
            onnx.checker.check_model(proto)
            rec.checks["onnx_checker"] = {"ok": True}
        except Exception as exc:  # noqa: BLE001
            rec.checks["onnx_checker"] = {"ok": False, "error": _short(exc)}
        if opts.ort_check and not opts.train_mode:
            stage = "ort_check"
            rec.checks.update(_ort_check(proto.SerializeToString(), module, spec, opts, torch_b1_s))
        stage = "strip"
        rec.__dict__.update(strip_and_save(proto, path))
        rec.file = path.name
        stage = "stripped_check"
        rec.checks["stripped"] = check_stripped(path)
    except Exception as exc:  # noqa: BLE001
        rec.error = f"[{stage}] {_short(exc)}"
        rec.checks.setdefault("traceback_tail", traceback.format_exc()[-1500:])
    rec.total_s = round(time.perf_counter() - t_start, 2)
    return rec


def _export_in_child(name: str, exporter: str, opts: ExportOptions, threads: int = 0) -> ExportRecord:
    """Run export_one in a child process with a time limit."""
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as tmp:
        record_path = tmp.name
    cmd = [sys.executable, "-m", "calibration.networks.export", "--worker-record", record_path,
           "--out", opts.out_dir, "--names", name, "--exporters", exporter,
           "--opset-dynamo", str(opts.opset_dynamo), "--ort-max-s", str(opts.ort_max_s)]
    if not opts.ort_check:
        cmd.append("--no-ort-check")
    if threads:
        cmd += ["--threads", str(threads)]
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=opts.dynamo_timeout_s,
                              cwd=str(Path(__file__).resolve().parents[2]))
        data = json.loads(Path(record_path).read_text()) if Path(record_path).stat().st_size else None
        if data:
            return ExportRecord(**data)
        err = f"child exited {proc.returncode}: {proc.stderr[-600:]}"
    except subprocess.TimeoutExpired:
        err = f"timeout: dynamo export of {name} exceeded {opts.dynamo_timeout_s:.0f} s (skipped)"
    except Exception as exc:  # noqa: BLE001
        err = _short(exc)
    finally:
        Path(record_path).unlink(missing_ok=True)
    return ExportRecord(network=name, exporter=exporter, error=err, date_utc=utc_now(),
                        total_s=round(time.perf_counter() - t0, 2), split=zoo.NETWORKS[name].split,
                        family=zoo.NETWORKS[name].family)


def plan(opts: ExportOptions) -> list[tuple[str, str]]:
    """(network, exporter) pairs in run order: all TorchScript first, then the dynamo subset."""
    jobs = []
    for exporter in opts.exporters:
        for name in opts.names:
            if exporter == "dynamo" and opts.dynamo_names and name not in opts.dynamo_names:
                continue
            jobs.append((name, exporter))
    return jobs


def run(opts: ExportOptions, command: str = "") -> list[dict]:
    """Export everything in `plan(opts)`, writing the manifest after each file.

    TorchScript exports run in this process; dynamo exports run meanwhile in up to
    `opts.dynamo_jobs` child processes (each with its own time limit).
    """
    import torch

    n_cpu = os.cpu_count() or 1
    jobs = plan(opts)
    n_dyn = sum(1 for _, e in jobs if e == "dynamo")
    workers = min(opts.dynamo_jobs, n_dyn)
    torch.set_num_threads(max(1, n_cpu // (workers + 1)) if workers else n_cpu)
    Path(opts.out_dir).mkdir(parents=True, exist_ok=True)
    meta = {"command": command, "date_utc": utc_now(), "versions": versions(),
            "options": asdict(opts), "cpu_count": n_cpu}
    records: list[dict] = []
    t0 = time.perf_counter()

    def over_budget() -> bool:
        return bool(opts.max_seconds) and time.perf_counter() - t0 > opts.max_seconds

    def skipped(name: str, exporter: str) -> ExportRecord:
        return ExportRecord(network=name, exporter=exporter, date_utc=utc_now(),
                            error=f"skipped: over --max-seconds {opts.max_seconds}")

    def report(rec: ExportRecord) -> None:
        records.append(asdict(rec))
        write_manifest(opts.out_dir, records, meta)
        status = "ERR " + rec.error[:70] if rec.error else "ok"
        print(f"  {rec.network:28s} {rec.exporter:11s} {rec.total_s:6.1f}s  {status}", flush=True)

    threads = max(1, n_cpu // (workers + 1))
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=workers) if workers else None
    futures = []
    for name, exporter in jobs:
        if exporter == "dynamo":
            futures.append(pool.submit(
                lambda n=name: skipped(n, "dynamo") if over_budget() else _export_in_child(n, "dynamo", opts, threads)))
    for name, exporter in jobs:
        if exporter != "dynamo":
            report(skipped(name, exporter) if over_budget() else export_one(name, exporter, opts))
    for fut in futures:
        report(fut.result())
    if pool:
        pool.shutdown()
    meta["total_s"] = round(time.perf_counter() - t0, 1)
    write_manifest(opts.out_dir, records, meta)
    return records


def _check_str(c: dict) -> str:
    if not c:
        return "-"
    if "skipped" in c:
        return "skip"
    if "rel_diff" in c:
        return f"{'ok' if c.get('ok') else 'BAD'}:{c['rel_diff']:.0e}"
    return "ERR"


def summary_table(records: list[dict]) -> str:
    """A short fixed-width table of the manifest."""
    head = f"{'network':28s} {'exporter':11s} {'opset':>5s} {'nodes':>6s} {'fn':>4s} {'KB':>7s} " \
           f"{'ort_b1':>10s} {'ort_b2':>10s} {'strip':>5s} {'s':>6s}  error"
    lines = [head]
    for r in records:
        c = r.get("checks", {})
        lines.append(
            f"{r['network']:28s} {r['exporter']:11s} {r.get('opset', 0):5d} {r.get('n_nodes', 0):6d} "
            f"{r.get('n_functions', 0):4d} {r.get('file_bytes', 0) / 1024:7.0f} "
            f"{_check_str(c.get('ort_b1', {})):>10s} {_check_str(c.get('ort_b2', {})):>10s} "
            f"{'ok' if c.get('stripped', {}).get('ok') else '-':>5s} {r.get('total_s', 0):6.1f}  "
            f"{(r.get('error') or '')[:60]}")
    n_ok = sum(1 for r in records if not r.get("error"))
    lines.append(f"{n_ok}/{len(records)} exported without error")
    return "\n".join(lines)


def _split_list(arg: str | None) -> tuple[str, ...]:
    return tuple(t.strip() for t in (arg or "").split(",") if t.strip())


def parse_args(argv: list[str] | None = None) -> tuple[ExportOptions, argparse.Namespace]:
    p = argparse.ArgumentParser(prog="python3 -m calibration.networks.export", description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True, help="output folder")
    p.add_argument("--names", default="", help="comma list of networks, or train/heldout/all (default: default sweep)")
    p.add_argument("--exporters", default="torchscript", help="comma list of: " + ",".join(EXPORTERS))
    p.add_argument("--dynamo-names", default=",".join(DEFAULT_DYNAMO_NAMES),
                   help="networks to export with dynamo ('all' = every selected network)")
    p.add_argument("--dynamo-timeout-s", type=float, default=150.0, help="per-network limit of a dynamo export")
    p.add_argument("--dynamo-jobs", type=int, default=3, help="parallel dynamo child processes")
    p.add_argument("--threads", type=int, default=0, help=argparse.SUPPRESS)
    p.add_argument("--opset-torchscript", type=int, default=17)
    p.add_argument("--opset-dynamo", type=int, default=18)
    p.add_argument("--no-ort-check", action="store_true", help="skip the onnxruntime checks")
    p.add_argument("--ort-max-s", type=float, default=20.0, help="skip ORT check above this estimated cost")
    p.add_argument("--max-seconds", type=float, default=0.0, help="whole-run budget (0 = none)")
    p.add_argument("--train-mode", action="store_true",
                   help="export the module in train() mode (Dropout kept; files NAME.EXPORTER_train.onnx; no ORT "
                        "value check: dropout is random)")
    p.add_argument("--worker-record", default="", help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    exporters = _split_list(a.exporters)
    bad = [e for e in exporters if e not in EXPORTERS]
    if bad:
        p.error(f"unknown exporter(s) {bad}; choose from {EXPORTERS}")
    try:
        names = tuple(zoo.parse_names(a.names))
    except KeyError as exc:
        p.error(str(exc))
    dyn = _split_list(a.dynamo_names)
    opts = ExportOptions(out_dir=a.out, names=names, exporters=exporters,
                         dynamo_names=() if dyn == ("all",) else dyn, dynamo_timeout_s=a.dynamo_timeout_s,
                         dynamo_jobs=max(1, a.dynamo_jobs),
                         opset_torchscript=a.opset_torchscript, opset_dynamo=a.opset_dynamo,
                         ort_check=not a.no_ort_check, ort_max_s=a.ort_max_s, max_seconds=a.max_seconds,
                         train_mode=a.train_mode)
    return opts, a


def main(argv: list[str] | None = None) -> int:
    opts, a = parse_args(argv)
    warnings.filterwarnings("ignore")
    if a.worker_record:  # child process of _export_in_child: one job, record to a file
        import torch

        if a.threads:
            torch.set_num_threads(a.threads)
        Path(opts.out_dir).mkdir(parents=True, exist_ok=True)
        rec = export_one(opts.names[0], opts.exporters[0], opts)
        Path(a.worker_record).write_text(json.dumps(asdict(rec), default=str))
        return 0
    command = " ".join([Path(sys.executable).name, "-m", "calibration.networks.export", *(argv or sys.argv[1:])])
    print(f"exporting {len(plan(opts))} files to {opts.out_dir}", flush=True)
    records = run(opts, command)
    print(summary_table(records))
    return 0


if __name__ == "__main__":
    sys.exit(main())
