"""Training-step accuracy: ``predict --mode train`` against the measured H200 training steps.

    python -m calibration.evaluate.training_accuracy [--out calibration/data/h200/accuracy] [--names a,b]

Measured: calibration/data/h200/training/<net>/training.json and training/run2/<net>/training.json (a later
run replaces the cases it repeats; run2 adds the whole step in a CUDA graph and per-phase graph times), by
calibration/training/measure.py: PyTorch eager,
fp32 parameters, AdamW(fused=True), MSE between the output cast to fp32 and a fixed target, batch 8 and 32,
fp32 / tf32 / amp / amp_bf16). Predicted: the committed TorchScript graph at the case's batch and precision
(its training-mode export ``NET.torchscript_train.onnx`` where one is committed: the measured steps run the
module in train(), so with dropout, which an eval-mode export drops),
with the bundled fit, the case's optimizer (fused or not) and loss (``loss`` field of a case when present,
else the protocol's MSE).

Compared per case (error = predicted / measured - 1):

* GPU time of the step: against the best GPU-time field the case has. ``step_graph_median_s`` (the whole step
  replayed as one CUDA graph) when a measurement has it, else the sum of the profiled step's kernel times
  (``kernel_sum_*_s``, every kernel of one step: a GPU-busy time without launch gaps). ``gpu_reference`` says
  which. Also against ``step_median_s`` (``gpu_vs_step_error``).
* Networks whose CUDA-graph capture runs another program than eager (the accuracy protocol's rule: every
  inference timing case of the network has ``program_differs``, calibration/data/h200/timing; transformers' BERT,
  DistilBERT and GPT-2 materialise the attention mask under capture and leave fused attention for the math path):
  their step is compared with the eager program's GPU time instead, the summed kernel times of one profiled eager
  step (a run without graph steps, whose kernel sums are not inflated) + 0.45 us per kernel (``gpu_reference``
  ``eager_kernel_sum+launch``), as the inference benchmark does; their graph phases, of the other program, are
  reported but not scored (``phase_scored`` false).
* Eager time (the calibration's host-dispatch timeline, FittedCalibration.eager_time_s) against
  ``step_median_s``: that median is CUDA-event time of an eager step, host-bound at small batch.
* Per phase only where a measurement has ``graph_<phase>_median_s``; the eager per-phase medians and kernel
  sums are reported but not scored (their attribution of kernels to phases is known to be unreliable).
* Kernels: predicted against measured per step (``n_kernels_*``).
* Memory: predicted peak against ``peak_allocated_bytes`` (torch.cuda.max_memory_allocated of one step), and
  the live bytes at the step's start and after the backward against the measured ones.
Fields a later measurement adds are carried into each row's ``measured`` object; nothing measured is edited.
Writes training_accuracy.json (provenance, every case, summaries) and training_accuracy.md.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import json
import math
import statistics
import sys
from pathlib import Path

from predictor.fitted import bundled_calibration
from predictor.machine.profile import load_profile

from ..fit.dataset import DATA, ONNX_DIR, TIMING_DIR
from ..networks.gpu_common import REFERENCE_LAUNCH_S

TRAINING_DIR = DATA / "h200" / "training"
OUT = DATA / "h200" / "accuracy"
PHASES = ("forward", "backward", "optimizer")
GPU_TIME_FIELDS = ("step_graph_median_s",)  # preferred over the kernel sum, in this order
DEFAULT_LOSS = "mse"                         # calibration/training/measure.py's protocol
MEMORY_TARGET = 0.10


def finite_number(x) -> float | None:
    """``x`` as a float when it is a finite number (not a bool), else None."""
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) else None


def _err(pred: float | None, meas: float | None) -> float | None:
    return pred / meas - 1.0 if pred is not None and meas else None


def gpu_reference(case: dict) -> tuple[float | None, str]:
    """(measured GPU time of the step, which field): a CUDA-graph time when present, else the kernel sum."""
    for f in GPU_TIME_FIELDS:
        v = finite_number(case.get(f))
        if v:
            return v, f
    if "graph_error" in case:
        # the protocol with graph steps profiles with a synchronize inside each phase, and its forward kernel
        # sums came out inflated (regnet fp32 b8: 272 ms of kernels against a 5.2 ms graph forward): no fallback
        return None, ""
    parts = [finite_number(case.get(f"kernel_sum_{p}_s")) for p in PHASES]
    if all(v is not None for v in parts) and sum(parts) > 0:
        return float(sum(parts)), "kernel_sum"
    return None, ""


def capture_differs_networks(timing_dir: Path = TIMING_DIR) -> frozenset[str]:
    """Networks every inference timing case of which says the captured program differs from eager."""
    flags: dict[str, list[bool]] = {}
    for path in sorted(timing_dir.glob("**/timing.json")):
        for c in json.loads(path.read_text()).get("cases", []):
            if isinstance(c, dict) and isinstance(c.get("program_differs"), bool):
                flags.setdefault(c.get("network"), []).append(c["program_differs"])
    return frozenset(n for n, fs in flags.items() if fs and all(fs))


def eager_program_times() -> dict[tuple, tuple[float, int, str]]:
    """{(network, precision, batch): (eager program GPU time s, kernels, file)}: the summed kernel times of one
    profiled eager step + REFERENCE_LAUNCH_S per kernel, from the latest run without graph steps (``graph_error``
    absent: those runs profile without a synchronize inside the phases) that has every phase's sum."""
    out = {}
    paths = sorted(TRAINING_DIR.glob("*/training.json")) + sorted(TRAINING_DIR.glob("run*/*/training.json"))
    for path in paths:
        for c in json.loads(path.read_text()).get("cases", []):
            if not isinstance(c, dict) or c.get("error") or "graph_error" in c:
                continue
            sums = [finite_number(c.get(f"kernel_sum_{p}_s")) for p in PHASES]
            kernels = sum(int(c.get(f"n_kernels_{p}") or 0) for p in PHASES)
            if all(v is not None for v in sums) and sum(sums) > 0 and kernels:
                out[(c.get("network"), c.get("precision"), c.get("batch"))] = (
                    float(sum(sums)) + REFERENCE_LAUNCH_S * kernels, kernels, str(path.relative_to(DATA.parent.parent)))
    return out


# run2 captured each case's CUDA-graph step right after its eager measurement; the captured steps kept
# device memory, so allocated bytes grow case by case within a file (resnet18: step start 215, 366, 420,
# 557 MB). Only the first case of each run2 file has a clean allocator peak; run3 captures after every eager
# case of the network (calibration/training/measure.py), run1 captured none.
LEAKY_MEMORY_RUNS = frozenset({"run2"})
MEMORY_FIELDS = ("peak_allocated_bytes", "allocated_step_start_bytes", "allocated_after_backward_bytes")


def load_cases(names: set[str] | None = None) -> list[tuple[dict, dict, str, dict | None]]:
    """(case, environment, file, memory case) per measured (network, precision, batch) without an error: the
    latest run's case for time, and the latest case with a clean allocator measurement for memory (None
    when there is none)."""
    out: dict[tuple, list] = {}
    # the first run (<net>/training.json), then later runs (run2/<net>/...) replacing the cases they repeat
    paths = sorted(TRAINING_DIR.glob("*/training.json")) + sorted(TRAINING_DIR.glob("run*/*/training.json"))
    for path in paths:
        doc = json.loads(path.read_text())
        env = doc.get("environment", {}) if isinstance(doc, dict) else {}
        leaky = path.parent.parent.name in LEAKY_MEMORY_RUNS
        first = True
        for case in doc.get("cases", []) if isinstance(doc, dict) else []:
            if not isinstance(case, dict) or case.get("error") or (names and case.get("network") not in names):
                continue
            clean = not leaky or first
            first = False
            if finite_number(case.get("step_median_s")) is None and gpu_reference(case)[0] is None:
                continue
            key = (case.get("network"), case.get("precision"), case.get("batch"))
            mem = case if clean else (out[key][3] if key in out else None)
            out[key] = [case, env, str(path.relative_to(DATA.parent.parent)), mem]
    return [tuple(v) for v in out.values()]


def optimizer_impl(case: dict) -> str:
    """The optimizer implementation a measured case ran: fused, foreach or forloop."""
    kw = case.get("optimizer_kwargs") or {}
    if kw.get("fused"):
        return "fused"
    return "forloop" if kw.get("foreach") is False else "foreach"


def training_graph(net: str) -> Path | None:
    """The graph a training step of ``net`` is predicted from: its training-mode export if committed, else the
    eval-mode one (None when neither is)."""
    for name in (f"{net}.torchscript_train.onnx", f"{net}.torchscript.onnx", f"{net}.dynamo.onnx"):
        if (ONNX_DIR / name).exists():
            return ONNX_DIR / name
    return None


def evaluate(names: set[str] | None = None) -> list[dict]:
    from predictor.train import predict_training_file

    profile = load_profile("h200")
    cal = bundled_calibration(profile)
    rows = []
    differs = capture_differs_networks()
    eager_program = eager_program_times()
    for case, _env, source, mem_case in load_cases(names):
        mem_case = mem_case or {}
        net = case["network"]
        model = training_graph(net)
        if model is None:
            continue
        pred = predict_training_file(str(model), profile, case["precision"], int(case["batch"]), calibration=cal,
                                     optimizer=case.get("optimizer") or "adamw", impl=optimizer_impl(case),
                                     loss=case.get("loss") or DEFAULT_LOSS, max_batch=False)
        gpu_meas, gpu_field = gpu_reference(case)
        key = (net, case["precision"], case["batch"])
        scored = net not in differs
        if not scored and key in eager_program:
            gpu_meas, gpu_field = eager_program[key][0], "eager_kernel_sum+launch"
        step = finite_number(case.get("step_median_s"))
        phases = {}
        for ph in pred.phases:
            graph_t = finite_number(case.get(f"graph_{ph.name}_median_s"))
            phases[ph.name] = {
                "predicted_s": ph.time_s, "predicted_eager_s": ph.eager_time_s, "predicted_kernels": ph.kernels,
                "measured_graph_s": graph_t, "error": _err(ph.time_s, graph_t) if scored else None,
                "graph_error": _err(ph.time_s, graph_t),
                "measured_eager_median_s": finite_number(case.get(f"{ph.name}_median_s")),
                "measured_kernel_sum_s": finite_number(case.get(f"kernel_sum_{ph.name}_s")),
                "measured_kernels": case.get(f"n_kernels_{ph.name}")}
        m = pred.memory
        peak = finite_number(mem_case.get("peak_allocated_bytes"))
        kernels_meas = sum(int(case.get(f"n_kernels_{p}") or 0) for p in PHASES) or None
        measured = {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in case.items()
                    if k not in ("flags", "optimizer_kwargs", "output_shape") and not isinstance(v, (dict, list))}
        rows.append({
            "network": net, "split": case.get("split", ""), "precision": case["precision"], "batch": case["batch"],
            "optimizer": pred.optimizer, "optimizer_impl": pred.optimizer_impl, "loss": pred.loss, "source": source,
            "graph": model.name,
            "gpu_predicted_s": pred.total_time_s, "gpu_measured_s": gpu_meas, "gpu_reference": gpu_field,
            "gpu_error": _err(pred.total_time_s, gpu_meas), "step_median_s": step,
            "gpu_vs_step_error": _err(pred.total_time_s, step),
            "eager_predicted_s": pred.eager_time_s, "eager_error": _err(pred.eager_time_s, step),
            "kernels_predicted": pred.kernels, "kernels_measured": kernels_meas,
            "kernels_error": _err(float(pred.kernels), float(kernels_meas) if kernels_meas else None),
            "phases": phases, "phase_scored": scored,
            "gpu_reference_source": eager_program[key][2] if gpu_field == "eager_kernel_sum+launch" else source,
            "memory_predicted_bytes": m.peak_bytes, "memory_measured_bytes": peak,
            "memory_error": _err(m.peak_bytes, peak), "memory_peak_at": m.peak_at,
            "memory_components": dict(m.components),
            "step_start_predicted_bytes": m.step_start_bytes,
            "step_start_error": _err(m.step_start_bytes, finite_number(mem_case.get("allocated_step_start_bytes"))),
            "after_backward_predicted_bytes": m.after_backward_bytes,
            "after_backward_error": _err(m.after_backward_bytes,
                                         finite_number(mem_case.get("allocated_after_backward_bytes"))),
            "unsupported": dict(pred.unsupported),
            "measured": measured,
        })
    return rows


def summarise(rows: list[dict], key: str) -> dict:
    errs = [(abs(r[key]), r) for r in rows if r.get(key) is not None]
    if not errs:
        return {"n": 0, "mape": None, "median": None, "worst": None, "worst_case": None, "mean_signed": None}
    worst = max(errs, key=lambda e: e[0])
    return {"n": len(errs), "mape": statistics.fmean(e for e, _ in errs), "median": statistics.median(e for e, _ in errs),
            "worst": worst[0], "worst_case": f"{worst[1]['network']} {worst[1]['precision']} b{worst[1]['batch']}",
            "mean_signed": statistics.fmean(r[key] for _, r in errs)}


METRICS = ("gpu_error", "gpu_vs_step_error", "eager_error", "kernels_error", "memory_error", "step_start_error",
           "after_backward_error")


def summaries(rows: list[dict]) -> dict:
    groups = {"all": rows}
    for split in sorted({r["split"] for r in rows}):
        groups[f"split:{split}"] = [r for r in rows if r["split"] == split]
    for prec in sorted({r["precision"] for r in rows}):
        groups[f"precision:{prec}"] = [r for r in rows if r["precision"] == prec]
    out = {g: {k: summarise(rs, k) for k in METRICS} for g, rs in groups.items()}
    mem = [abs(r["memory_error"]) for r in rows if r.get("memory_error") is not None]
    out["all"]["memory_within_target"] = {"target": MEMORY_TARGET, "n": len(mem),
                                          "within": sum(e <= MEMORY_TARGET for e in mem)}
    return out


def provenance(rows: list[dict], argv: list[str] | None = None) -> dict:
    profile = load_profile("h200")
    cal = bundled_calibration(profile)
    envs = {}
    for case, env, source, _mem in load_cases({r["network"] for r in rows}):
        envs[source] = {k: env.get(k) for k in ("date_utc", "command", "torch", "cuda_runtime", "gpu_name") if k in env}
    args = list(sys.argv[1:] if argv is None else argv)
    return {"command": " ".join(["python -m calibration.evaluate.training_accuracy", *args]),
            "date_utc": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "profile": profile.name, "calibration": cal.name if cal else "uncalibrated",
            "calibration_source": cal.source if cal else None, "measured": envs,
            "notes": ["measured step_median_s is eager CUDA-event time (host-bound at small batch)",
                      "per-phase kernel attribution of the measurement is unreliable: phases are not scored "
                      "unless graph_<phase>_median_s is present",
                      "gpu_reference 'kernel_sum': the sum of one profiled step's kernel times (no launch gaps)"]}


def _pct(x) -> str:
    return "-" if x is None else f"{x:+.0%}"


def markdown(doc: dict) -> str:
    lines = ["| network | precision | batch | split | GPU pred / meas (ms) | ref | GPU err | eager pred / step (ms) "
             "| eager err | kernels pred / meas | peak mem pred / meas (GB) | mem err |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in doc["cases"]:
        gm = f"{r['gpu_measured_s'] * 1e3:.2f}" if r["gpu_measured_s"] else "-"
        ep = f"{r['eager_predicted_s'] * 1e3:.2f}" if r["eager_predicted_s"] is not None else "-"
        st = f"{r['step_median_s'] * 1e3:.2f}" if r["step_median_s"] else "-"
        mm = f"{r['memory_measured_bytes'] / 1e9:.3f}" if r["memory_measured_bytes"] else "-"
        lines.append(f"| {r['network']} | {r['precision']} | {r['batch']} | {r['split']} | "
                     f"{r['gpu_predicted_s'] * 1e3:.2f} / {gm} | {r['gpu_reference']} | {_pct(r['gpu_error'])} | "
                     f"{ep} / {st} | {_pct(r['eager_error'])} | {r['kernels_predicted']} / {r['kernels_measured']} | "
                     f"{r['memory_predicted_bytes'] / 1e9:.3f} / {mm} | {_pct(r['memory_error'])} |")
    lines += ["", "| group | metric | n | MAPE | median | worst |", "| --- | --- | --- | --- | --- | --- |"]
    for g, by_metric in doc["summary"].items():
        for k in ("gpu_error", "eager_error", "memory_error"):
            s = by_metric[k]
            if s["n"]:
                lines.append(f"| {g} | {k} | {s['n']} | {s['mape']:.1%} | {s['median']:.1%} | {s['worst']:.1%} "
                             f"({s['worst_case']}) |")
    w = doc["summary"]["all"]["memory_within_target"]
    lines.append("")
    lines.append(f"memory within {w['target']:.0%} of the allocator peak: {w['within']} of {w['n']} cases")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m calibration.evaluate.training_accuracy",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--names", default="", help="comma list of networks (default: every measured one)")
    a = ap.parse_args(argv)
    names = {n for n in a.names.split(",") if n} or None
    rows = evaluate(names)
    doc = {"provenance": provenance(rows, argv), "summary": summaries(rows), "cases": rows}
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "training_accuracy.json").write_text(json.dumps(doc, indent=1, allow_nan=False) + "\n")
    md = markdown(doc)
    (a.out / "training_accuracy.md").write_text(md)
    print(md, end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
