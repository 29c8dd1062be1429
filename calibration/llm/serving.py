"""LLM serving on one GPU: prefill and KV-cache decode steps in CUDA graphs, and the decoders' ONNX exports.

    python3 -m calibration.llm.serving --out DIR [--archs llama,gpt2,opt] [--precisions fp16,bf16]
        [--prompts 128,512,2048,8192] [--contexts 128,512,2048,8192] [--batches 1,4,16,64]
        [--max-seconds 150] [--no-export] [--dry-run-cpu]

Models are built from configs with random weights (calibration/llm/decoders.py: LLaMA-, GPT-2- and OPT-shaped
decoders; nothing is downloaded). Protocol per architecture, in its own process (a CUDA error poisons a process):
  * prefill: one forward of [batch, prompt] token ids (causal flash attention, last-position logits, the
    per-layer keys/values as outputs), captured in a CUDA graph;
  * decode: one step of [batch, 1] tokens against a preallocated static cache [batch, kv_heads, C, head_dim]
    per layer (writes position `context`, attends over `context + 1` keys), captured in a CUDA graph per
    (batch, context) as serving engines run it; a case whose cache does not fit is recorded as skipped;
  * each case: side-stream warm-up, capture, 3 warm replays, then `repeats` rounds of n replays each timed
    by its own CUDA events (calibration/networks/gpu_common.py); median of the round medians.
Exports (a CPU child process running beside the GPU work, fp32, TorchScript exporter, opset 20): per
architecture `<arch>.prefill.onnx` (input_ids [batch, sequence]) and `<arch>.decode.onnx` (input_ids
[batch, 1] plus past_key_values.<i>.key/value [batch, kv_heads, past_sequence, head_dim]; outputs logits and
present.<i>.key/value), traced at batch 2, sequence 16 / past 16 with those axes dynamic, weight-free
(tensors >= 1 KB stripped as in calibration/networks/export.py).
The GPU work ends by --max-seconds (default 150): each architecture gets a share of what is left, a child
past its share is killed, and what it measured is kept (its JSON is rewritten after every case). The export
children (one per architecture, in parallel) may run --export-grace-s (60) longer, then are killed.
Writes DIR/serving.json (compact: GPU, driver, torch/transformers versions, date, exact configs, cases) and
DIR/onnx/*.onnx + DIR/onnx/export_manifest.json.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ARCHS = ("llama", "gpt2", "opt")
PRECISIONS = ("fp16", "bf16")
ROOT = Path(__file__).resolve().parents[2]
EXPORT_BATCH, EXPORT_SEQ = 2, 16          # trace sizes > 1 so that no axis is specialised
OPSET = 20                                 # Gelu (tanh) as one op, LayerNormalization native
SIZES = {"prompts": "128,512,2048,8192", "prefill_batches": "1,4", "contexts": "128,512,2048,8192",
         "batches": "1,4,16,64"}
DRY_SIZES = {"prompts": "8,16", "prefill_batches": "1,2", "contexts": "8,16", "batches": "1,2"}
MEMORY_FRACTION = 0.7                      # a case's cache may use this share of the free GPU memory


def _ints(arg: str) -> tuple[int, ...]:
    return tuple(int(t) for t in arg.split(",") if t.strip())


def _names(arg: str) -> tuple[str, ...]:
    return tuple(t.strip() for t in arg.split(",") if t.strip())


def _short(exc: BaseException, limit: int = 400) -> str:
    msg = f"{type(exc).__name__}: {exc}"
    return msg if len(msg) <= limit else msg[:limit] + " ..."


def _write(path: Path, doc: dict) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(doc, separators=(",", ":"), default=str, allow_nan=True))
    tmp.replace(path)


def _round(x: float) -> float:
    return float(f"{x:.6g}") if math.isfinite(x) else x


# ----------------------------------------------------------------------------- one architecture (child process)
def _configs(dry: bool):
    from . import decoders

    return decoders.TINY if dry else decoders.CONFIGS


def _poisoned(exc: BaseException) -> bool:
    """A CUDA error other than out-of-memory leaves the context unusable."""
    msg = str(exc)
    return ("CUDA error" in msg or "illegal" in msg or "device-side assert" in msg) and "out of memory" not in msg


def _time_graph(fn, opts: argparse.Namespace, deadline: float) -> dict[str, Any]:
    """Capture fn in a CUDA graph and time its replays: median of `repeats` round medians (seconds)."""
    from calibration.networks.gpu_common import capture_graph, summarize, sync, time_each

    graph, out = capture_graph(fn, warmup=3)
    for _ in range(3):
        graph.replay()
    sync()
    est_s = max(min(time_each(graph.replay, 3)), 1e-6)
    left = max(0.0, deadline - time.time())
    case_s = min(opts.case_budget_s, left / 4)
    n = int(max(opts.min_replays, min(opts.replays, case_s / (opts.repeats * est_s))))
    medians, p10, p90 = [], [], []
    for _ in range(opts.repeats):
        st = summarize(time_each(graph.replay, n))
        medians.append(st["median_s"])
        p10.append(st["p10_s"])
        p90.append(st["p90_s"])
    del graph, out
    return {"median_s": _round(summarize(medians)["median_s"]), "round_medians_s": [_round(m) for m in medians],
            "p10_s": _round(min(p10)), "p90_s": _round(max(p90)), "n_replays": n, "rounds": opts.repeats}


def run_arch(arch: str, opts: argparse.Namespace) -> int:
    """Measure one architecture; rewrite DIR/serving_<arch>.json after every case."""
    import torch

    from calibration.networks import gpu_common
    from calibration.networks.gpu_common import environment

    from . import decoders

    dry = opts.dry_run_cpu
    gpu_common.use_device("cpu" if dry else "cuda")
    device = "cpu" if dry else "cuda"
    cfg = _configs(dry)[arch]
    path = Path(opts.out) / f"serving_{arch}.json"
    doc: dict[str, Any] = {"arch": arch, "config": cfg.to_dict(), "environment": environment(),
                           "dry_run_cpu": dry, "cases": [], "errors": []}
    deadline = opts.deadline
    if not dry and not torch.cuda.is_available():
        doc["errors"].append("CUDA not available")
        _write(path, doc)
        return 1
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    poisoned = False
    for precision in opts.precisions:
        if poisoned or time.time() > deadline:
            doc["errors"].append(f"{precision}: skipped ({'poisoned' if poisoned else 'over budget'})")
            continue
        dtype = torch.float32 if dry else {"fp16": torch.float16, "bf16": torch.bfloat16}[precision]
        elem = torch.finfo(dtype).bits // 8
        try:
            t0 = time.perf_counter()
            model = decoders.build(cfg, device, dtype)
            doc.setdefault("n_params", sum(p.numel() for p in model.parameters()))
            doc.setdefault("build_s", {})[precision] = round(time.perf_counter() - t0, 2)
        except Exception as exc:  # noqa: BLE001
            doc["errors"].append(f"{precision} build: {_short(exc)}")
            poisoned = _poisoned(exc)
            continue
        weight_bytes = sum(p.numel() * p.element_size() for p in model.parameters())
        jobs: list[dict] = [{"kind": "prefill", "batch": b, "prompt": s} for s in opts.prompts
                            for b in opts.prefill_batches]
        jobs += [{"kind": "decode", "batch": b, "context": c} for b in opts.batches for c in opts.contexts]
        caches: dict[int, tuple] = {}
        for job in jobs:
            case = {**job, "precision": precision, "dtype": str(dtype).replace("torch.", "")}
            if poisoned or time.time() > deadline - 1.0:
                case["error"] = "skipped: " + ("poisoned process" if poisoned else "over budget")
                doc["cases"].append(case)
                continue
            b = job["batch"]
            t_case = time.perf_counter()
            try:
                with torch.inference_mode():
                    if job["kind"] == "prefill":
                        caches.clear()
                        s = job["prompt"]
                        case["kv_cache_bytes"] = decoders.kv_cache_bytes(cfg, b, s, elem)
                        ids = torch.randint(0, cfg.vocab, (b, s), device=device)
                        case.update(_time_graph(lambda: model.prefill(ids), opts, deadline))
                    else:
                        c = job["context"]
                        need = decoders.kv_cache_bytes(cfg, b, c + 1, elem)
                        case["kv_cache_bytes"] = decoders.kv_cache_bytes(cfg, b, c, elem)
                        free = torch.cuda.mem_get_info()[0] if not dry else math.inf
                        have = caches.get(b)
                        if have is None or have[2] < c + 1:
                            caches.clear()
                            if not dry:
                                torch.cuda.empty_cache()
                                free = torch.cuda.mem_get_info()[0]
                            fits = [x + 1 for x in opts.contexts
                                    if decoders.kv_cache_bytes(cfg, b, x + 1, elem) <= MEMORY_FRACTION * free]
                            if c + 1 > max(fits, default=0):
                                case["error"] = (f"skipped: KV cache {need / 1e9:.1f} GB > {MEMORY_FRACTION} x free "
                                                 f"{free / 1e9:.1f} GB")
                                doc["cases"].append(case)
                                continue
                            cmax = max(fits)
                            shape = (b, cfg.kv_heads, cmax, cfg.head_dim)
                            kc = [torch.randn(shape, device=device, dtype=dtype) for _ in range(cfg.layers)]
                            vc = [torch.randn(shape, device=device, dtype=dtype) for _ in range(cfg.layers)]
                            have = caches[b] = (kc, vc, cmax)
                        kc, vc, _ = have
                        ids = torch.randint(0, cfg.vocab, (b, 1), device=device)
                        case.update(_time_graph(lambda: model.decode_static(ids, kc, vc, c), opts, deadline))
                        case["tokens_per_s"] = _round(b / case["median_s"])
                case["weight_bytes"] = weight_bytes
            except Exception as exc:  # noqa: BLE001 - recorded per case
                case["error"] = _short(exc)
                if _poisoned(exc):
                    poisoned = True
                elif not dry:
                    caches.clear()
                    torch.cuda.empty_cache()
            case["wall_s"] = round(time.perf_counter() - t_case, 2)
            doc["cases"].append(case)
            doc["elapsed_s"] = round(time.time() - opts.started, 1)
            _write(path, doc)
            print(f"  {arch} {precision} {job} {case.get('median_s', case.get('error', ''))}", flush=True)
        caches.clear()
        model = None  # free it before the next precision
        if not dry:
            torch.cuda.empty_cache()
    doc["finished"] = True
    _write(path, doc)
    return 0


# ----------------------------------------------------------------------------- exports (CPU child process)
def _strip_external(proto, tmp_dir: Path):
    """Inline the external tensors under 1 KB (shape constants), leave the rest as dangling references."""
    from onnx import external_data_helper

    for t in external_data_helper._get_all_tensors(proto):
        if t.data_location == t.EXTERNAL:
            info = {e.key: e.value for e in t.external_data}
            if int(info.get("length", 1 << 30)) < 1024:
                external_data_helper.load_external_data_for_tensor(t, str(tmp_dir))
                t.data_location = t.DEFAULT
                del t.external_data[:]
    return proto


def export_arch(arch: str, out_dir: Path, dry: bool) -> list[dict]:
    """Weight-free prefill and decode graphs of one architecture (fp32, TorchScript exporter)."""
    import tempfile

    import onnx
    import torch

    from calibration.networks.export import check_stripped, strip_and_save

    from . import decoders

    cfg = _configs(dry)[arch]
    model = decoders.build(cfg, "cpu", torch.float32, init=False)
    model.set_export_mode(True)
    records = []
    ids = torch.zeros((EXPORT_BATCH, EXPORT_SEQ), dtype=torch.long)
    n = cfg.layers
    present = [f"present.{i}.{kv}" for i in range(n) for kv in ("key", "value")]
    past = [f"past_key_values.{i}.{kv}" for i in range(n) for kv in ("key", "value")]
    kv_axes = {0: "batch", 2: "past_sequence"}
    specs = {
        "prefill": (decoders.PrefillGraph(model), (ids,), ["input_ids"],
                    {"input_ids": {0: "batch", 1: "sequence"}, "logits": {0: "batch"},
                     **{p: {0: "batch", 2: "sequence"} for p in present}}),
        "decode": (decoders.DecodeGraph(model),
                   (ids[:, :1], *[torch.zeros(EXPORT_BATCH, cfg.kv_heads, EXPORT_SEQ, cfg.head_dim)
                                  for _ in range(2 * n)]),
                   ["input_ids", *past],
                   {"input_ids": {0: "batch"}, "logits": {0: "batch"}, **{p: kv_axes for p in past},
                    **{p: {0: "batch", 2: "total_sequence"} for p in present}}),
    }
    for kind, (module, args, in_names, axes) in specs.items():
        rec: dict[str, Any] = {"arch": arch, "graph": kind, "file": f"{arch}.{kind}.onnx", "opset": OPSET,
                               "trace_batch": EXPORT_BATCH, "trace_sequence": EXPORT_SEQ}
        t0 = time.perf_counter()
        try:
            with tempfile.TemporaryDirectory() as tmp:
                tmp_path = Path(tmp) / "model.onnx"
                with torch.no_grad():
                    torch.onnx.export(module, args, str(tmp_path), dynamo=False, opset_version=OPSET,
                                      input_names=in_names, output_names=["logits", *present],
                                      dynamic_axes=axes, do_constant_folding=True)
                proto = _strip_external(onnx.load(str(tmp_path), load_external_data=False), Path(tmp))
                rec.update(strip_and_save(proto, out_dir / rec["file"]))
            rec["checks"] = {"stripped": check_stripped(out_dir / rec["file"])}
            rec["n_nodes"] = len(proto.graph.node)
        except Exception as exc:  # noqa: BLE001
            rec["error"] = _short(exc, 800)
        rec["export_s"] = round(time.perf_counter() - t0, 2)
        records.append(rec)
        print(f"  export {arch} {kind} {rec.get('error', 'ok')}", flush=True)
    return records


def export_meta(opts: argparse.Namespace) -> dict:
    from calibration.networks.export import versions

    return {"versions": versions(), "opset": OPSET, "dry_run_cpu": opts.dry_run_cpu,
            "configs": {a: _configs(opts.dry_run_cpu)[a].to_dict() for a in opts.archs},
            "convention": "fp32 TorchScript export, tensors >= 1 KB stripped (data file deleted); decode graph: "
                          "past_key_values.<i>.key/value inputs, present = concat(past, new) outputs"}


def run_export(arch: str, opts: argparse.Namespace) -> int:
    """Export one architecture (a child process per architecture, all running beside the GPU work)."""
    import warnings

    warnings.filterwarnings("ignore")
    import torch

    torch.set_num_threads(max(1, (os.cpu_count() or 1) // (len(opts.archs) + 1)))
    out_dir = Path(opts.out) / "onnx"
    out_dir.mkdir(parents=True, exist_ok=True)
    records = export_arch(arch, out_dir, opts.dry_run_cpu)
    _write(out_dir / f"export_{arch}.json", {"records": records})
    return 0


def merge_exports(opts: argparse.Namespace, procs: dict) -> dict:
    """Wait for the export children (killing those past the limit) and write the manifest."""
    from calibration.networks.export import write_manifest

    out_dir = Path(opts.out) / "onnx"
    limit = opts.started + opts.max_seconds + opts.export_grace_s
    records: list[dict] = []
    for arch, proc in procs.items():
        try:
            proc.wait(timeout=max(1.0, limit - time.time()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        part = out_dir / f"export_{arch}.json"
        if part.exists():
            records += json.loads(part.read_text())["records"]
            part.unlink()
        else:
            records.append({"arch": arch, "error": f"no export (killed past --max-seconds + {opts.export_grace_s:.0f} s "
                                                    "or crashed)", "returncode": proc.returncode})
    meta = export_meta(opts)
    write_manifest(out_dir, records, meta)
    return {"meta": meta, "files": records}


# ----------------------------------------------------------------------------- orchestration (parent process)
def _child_cmd(opts: argparse.Namespace, role: list[str], deadline: float) -> list[str]:
    cmd = [sys.executable, "-m", "calibration.llm.serving", *role, "--out", opts.out,
           "--deadline", repr(deadline), "--started", repr(opts.started),
           "--archs", ",".join(opts.archs), "--precisions", ",".join(opts.precisions),
           "--prompts", ",".join(map(str, opts.prompts)), "--contexts", ",".join(map(str, opts.contexts)),
           "--batches", ",".join(map(str, opts.batches)),
           "--prefill-batches", ",".join(map(str, opts.prefill_batches)),
           "--replays", str(opts.replays), "--min-replays", str(opts.min_replays),
           "--repeats", str(opts.repeats), "--case-budget-s", str(opts.case_budget_s)]
    return cmd + (["--dry-run-cpu"] if opts.dry_run_cpu else [])


def _env(cpu_only: bool) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    if cpu_only:
        env["CUDA_VISIBLE_DEVICES"] = ""
    return env


def orchestrate(opts: argparse.Namespace, command: str) -> dict:
    out = Path(opts.out)
    out.mkdir(parents=True, exist_ok=True)
    end = opts.started + opts.max_seconds
    exporters = {}
    if opts.export:  # one CPU child per architecture, beside the GPU work
        for arch in opts.archs:
            exporters[arch] = subprocess.Popen(_child_cmd(opts, ["--export-worker", arch], end), cwd=str(ROOT),
                                               env=_env(True), stdout=sys.stdout, stderr=subprocess.STDOUT)
    doc: dict[str, Any] = {"command": command, "protocol": __doc__.split("\n\n")[2].strip(),
                           "options": {k: v for k, v in vars(opts).items() if k not in ("worker", "deadline")},
                           "archs": {}}
    for i, arch in enumerate(opts.archs):
        left = end - time.time() - 5
        share = left / (len(opts.archs) - i)
        if share < 10:
            doc["archs"][arch] = {"error": "skipped: over budget"}
            continue
        deadline = time.time() + share - 5        # the child stops starting cases here
        try:
            proc = subprocess.run(_child_cmd(opts, ["--worker", arch], deadline), cwd=str(ROOT), env=_env(False),
                                  timeout=share + 5)
            rc: Any = proc.returncode
        except subprocess.TimeoutExpired:
            rc = "killed: over its share of --max-seconds"
        path = out / f"serving_{arch}.json"
        sub = json.loads(path.read_text()) if path.exists() else {"error": "no result"}
        sub["returncode"] = rc
        doc["archs"][arch] = sub
        doc.setdefault("environment", sub.get("environment"))
        _write(out / "serving.json", doc)
    if exporters:
        doc["exports"] = merge_exports(opts, exporters)
    doc["elapsed_s"] = round(time.time() - opts.started, 1)
    _write(out / "serving.json", doc)
    for arch in opts.archs:
        (out / f"serving_{arch}.json").unlink(missing_ok=True)
    return doc


def summary(doc: dict) -> str:
    lines = [f"{'arch':6s} {'prec':4s} {'kind':7s} {'batch':>5s} {'tokens':>6s} {'ms':>9s} {'tok/s':>9s}  error"]
    for arch, sub in doc.get("archs", {}).items():
        for c in sub.get("cases", []):
            ms = c.get("median_s", math.nan) * 1e3
            lines.append(f"{arch:6s} {c['precision']:4s} {c['kind']:7s} {c['batch']:5d} "
                         f"{c.get('prompt', c.get('context', 0)):6d} {ms:9.3f} {c.get('tokens_per_s', math.nan):9.0f}"
                         f"  {c.get('error', '')[:60]}")
        for e in sub.get("errors", []) + ([sub["error"]] if sub.get("error") else []):
            lines.append(f"{arch:6s} error: {e}")
    for r in doc.get("exports", {}).get("files", []):
        lines.append(f"export {r.get('file', r.get('arch'))}: {r.get('error', 'ok')}")
    lines.append(f"elapsed {doc.get('elapsed_s', 0):.0f} s")
    return "\n".join(lines)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python3 -m calibration.llm.serving", description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True)
    p.add_argument("--archs", default=",".join(ARCHS))
    p.add_argument("--precisions", default=",".join(PRECISIONS))
    p.add_argument("--prompts", default="", help="prefill prompt lengths (default 128,512,2048,8192)")
    p.add_argument("--prefill-batches", default="", help="prefill batches (default 1,4)")
    p.add_argument("--contexts", default="", help="decode context lengths (default 128,512,2048,8192)")
    p.add_argument("--batches", default="", help="decode batches (default 1,4,16,64)")
    p.add_argument("--replays", type=int, default=30)
    p.add_argument("--min-replays", type=int, default=5)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--case-budget-s", type=float, default=0.4, help="target timing seconds per case")
    p.add_argument("--max-seconds", type=float, default=150.0, help="whole run, exports included")
    p.add_argument("--no-export", dest="export", action="store_false")
    p.add_argument("--dry-run-cpu", action="store_true",
                   help="tiny configs on the CPU (host timers, no CUDA graphs): exercises the code, numbers meaningless")
    p.add_argument("--worker", default="", help=argparse.SUPPRESS)
    p.add_argument("--export-worker", default="", help=argparse.SUPPRESS)
    p.add_argument("--export-grace-s", type=float, default=60.0,
                   help="how long after --max-seconds the exports may still run (default 60)")
    p.add_argument("--deadline", type=float, default=0.0, help=argparse.SUPPRESS)
    p.add_argument("--started", type=float, default=0.0, help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    a.archs, a.precisions = _names(a.archs), _names(a.precisions)
    bad = [x for x in a.archs if x not in ARCHS] + [x for x in a.precisions if x not in PRECISIONS]
    if bad:
        p.error(f"unknown arch/precision {bad}; archs {ARCHS}, precisions {PRECISIONS}")
    sizes = DRY_SIZES if a.dry_run_cpu else SIZES
    for key in sizes:
        setattr(a, key, _ints(getattr(a, key) or sizes[key]))
    a.started = a.started or time.time()
    a.deadline = a.deadline or a.started + a.max_seconds
    return a


def main(argv: list[str] | None = None) -> int:
    opts = parse_args(argv)
    if opts.worker:
        import warnings

        warnings.filterwarnings("ignore")
        return run_arch(opts.worker, opts)
    if opts.export_worker:
        return run_export(opts.export_worker, opts)
    command = " ".join(["python3", "-m", "calibration.llm.serving", *(argv if argv is not None else sys.argv[1:])])
    print(f"LLM serving: {','.join(opts.archs)} x {','.join(opts.precisions)} -> {opts.out} "
          f"(budget {opts.max_seconds:.0f} s)", flush=True)
    doc = orchestrate(opts, command)
    print(summary(doc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
