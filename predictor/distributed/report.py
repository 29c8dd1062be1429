"""Output of a scaling prediction: table, JSON and CSV (the training step's conventions: seconds in
``*_s`` keys, bytes in ``*_bytes``; the table in ms and GB)."""
from __future__ import annotations

import csv
import io
import json

from .scaling import Scaling, ScalingRow

SCHEMA_VERSION = 1
CSV_COLUMNS = ("gpus", "nodes", "step_time_s", "baseline_step_time_s", "exposed_comm_s", "comm_s", "overhead_s",
               "efficiency", "speedup", "throughput_per_s", "memory_per_gpu_bytes", "hybrid_step_time_s",
               "hybrid_efficiency", "hybrid_throughput_per_s", "hybrid_staleness_steps", "input_time_s")


def _row_json(r: ScalingRow) -> dict:
    d = {"gpus": r.gpus, "nodes": r.nodes, "step_time_s": r.step_s, "baseline_step_time_s": r.baseline_step_s,
         "exposed_comm_s": r.exposed_comm_s, "comm_s": r.comm_s, "overhead_s": r.overhead_s,
         "efficiency": r.efficiency, "speedup": r.speedup, "throughput_per_s": r.throughput_per_s,
         "memory_per_gpu_bytes": r.memory_per_gpu_bytes, "input_time_s": r.input_s, "input_bound": r.input_bound,
         "parts": [{"step_time_s": p.step_s, "exposed_comm_s": p.exposed_comm_s, "comm_s": p.comm_s,
                    "buckets": [{"params": b.params, "bytes": b.bytes, "ready_s": b.ready_s, "start_s": b.start_s,
                                 "end_s": b.end_s} for b in p.buckets], "notes": list(p.notes)} for p in r.parts]}
    if r.hybrid:
        d["hybrid"] = {"step_time_s": r.hybrid_step_s, "efficiency": r.hybrid_efficiency,
                       "throughput_per_s": r.hybrid_throughput_per_s, "staleness_steps": r.hybrid_staleness,
                       "group_gpus": r.hybrid[0].group_gpus, "groups": r.hybrid[0].groups,
                       "exchange_s": sum(h.exchange_s for h in r.hybrid)}
    return d


def to_json(sc: Scaling) -> str:
    c = sc.config
    doc = {"schema_version": SCHEMA_VERSION, "mode": "train", "model": sc.model, "parts": list(sc.parts),
           "gpu": sc.gpu, "precision": sc.precision, "batch_per_gpu": sc.batch,
           "system": sc.system.to_json(),
           "data_parallel": {"strategy": c.strategy, "bucket_mb": c.bucket_mb, "grad_comm": c.grad_comm,
                             "accumulate": c.accumulate, "gradient_as_bucket_view": c.bucket_view, "nvls": c.nvls,
                             "hybrid_group_gpus": sc.hybrid_group,
                             "input_rate_per_node_per_s": c.input_rate or None},
           "scaling": [_row_json(r) for r in sc.rows]}
    return json.dumps(doc, indent=1) + "\n"


def to_csv(sc: Scaling) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for r in sc.rows:
        opt = lambda v, f="{:.6g}": "" if v is None else f.format(v)  # noqa: E731
        w.writerow([r.gpus, r.nodes, f"{r.step_s:.6g}", f"{r.baseline_step_s:.6g}", f"{r.exposed_comm_s:.6g}",
                    f"{r.comm_s:.6g}", f"{r.overhead_s:.6g}", f"{r.efficiency:.6g}", f"{r.speedup:.6g}",
                    f"{r.throughput_per_s:.6g}", f"{r.memory_per_gpu_bytes:.6g}", opt(r.hybrid_step_s),
                    opt(r.hybrid_efficiency), opt(r.hybrid_throughput_per_s), opt(r.hybrid_staleness, "{}"),
                    f"{r.input_s:.6g}"])
    return buf.getvalue()


def _ms(s: float) -> str:
    return f"{s * 1e3:.2f} ms"


def _rate(x: float) -> str:
    for unit, div in (("M", 1e6), ("k", 1e3)):
        if x >= div:
            return f"{x / div:.2f}{unit}/s"
    return f"{x:.1f}/s"


def to_table(sc: Scaling) -> str:
    c = sc.config
    s = sc.system
    lines = [f"model {sc.model}, training step, precision {sc.precision}, batch {sc.batch} per GPU, on {s.full_name} "
             f"({s.name}: {s.gpus_per_node} x {sc.gpu} per node, {s.inter.nics_per_node} x "
             f"{s.inter.nic_bandwidth_Bps / 1e9:g} GB/s {s.inter.fabric} per node)",
             f"data parallel: {c.strategy}, buckets {c.bucket_mb:g} MiB, gradient communication {c.grad_comm}, "
             f"accumulation {c.accumulate}, NVLink SHARP {'on' if c.nvls and s.intra.nvls else 'off'}"
             + (f", hybrid groups of {sc.hybrid_group} GPUs" if sc.hybrid_group else "")
             + (f", input pipeline {_rate(c.input_rate)} per node" if c.input_rate else "")]
    hdr = (f"{'GPUs':>7} {'nodes':>6} {'step':>11} {'exposed comm':>13} {'efficiency':>10} {'speedup':>10} "
           f"{'throughput':>12} {'mem/GPU':>9}")
    if sc.hybrid_group:
        hdr += f" {'hybrid step':>12} {'hybrid eff':>10} {'stale':>5}"
    lines += [hdr, "-" * len(hdr)]
    for r in sc.rows:
        line = (f"{r.gpus:>7} {r.nodes:>6} {_ms(r.step_s):>11} {_ms(r.exposed_comm_s):>13} {r.efficiency:>10.1%} "
                f"{r.speedup:>10.1f} {_rate(r.throughput_per_s):>12} {r.memory_per_gpu_bytes / 1e9:>7.2f}GB")
        if sc.hybrid_group:
            if r.hybrid:
                line += f" {_ms(r.hybrid_step_s):>12} {r.hybrid_efficiency:>10.1%} {r.hybrid_staleness:>5}"
            else:
                line += f" {'-':>12} {'-':>10} {'-':>5}"
        lines.append(line)
    lines.append("-" * len(hdr))
    lines.append("efficiency = one-GPU step / step at the same per-GPU batch (weak scaling); exposed comm = "
                 "communication not hidden behind backward; step = GPU time (kernels back to back)")
    bound = [r.gpus for r in sc.rows if r.input_bound]
    if bound:
        lines.append(f"input-bound at {', '.join(map(str, bound))} GPUs: the node's input pipeline "
                     f"({_rate(c.input_rate)}) sets the step, not the GPUs")
    notes = {n for r in sc.rows for p in r.parts for n in p.notes if r.gpus > 1}
    for n in sorted(notes):
        lines.append(f"note  {n}")
    return "\n".join(lines) + "\n"


__all__ = ["to_json", "to_csv", "to_table", "CSV_COLUMNS"]
