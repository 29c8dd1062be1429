"""Where a zoo network's CUDA illegal memory access happens: one process per (network, precision, batch, setting).

    python3 -m calibration.scripts.diagnose_illegal_access --names rexnet_100,alexnet --out DIR [--timeout-s 60]

Each child runs the timing protocol's stages one by one (build, eager forwards, torch.profiler forward, CUDA-graph
capture, replays) with CUDA_LAUNCH_BLOCKING=1 and a synchronising forward hook on every leaf module, so the first
failing stage and module are named. Settings: cudnn.benchmark on (the timing protocol) and off. Writes
DIR/diagnose.json (one row per child: the stage reached, the failing module, the error's first line).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

CHILD = r'''
import json, sys, torch
from calibration.networks import zoo
from calibration.networks.gpu_common import set_precision_flags
name, precision, batch, bench = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] == "1"
state = {"stage": "start", "module": ""}
def report(err=""):
    print("RESULT " + json.dumps({**state, "error": err.splitlines()[0][:300] if err else ""}), flush=True)
try:
    set_precision_flags(precision)
    torch.backends.cudnn.benchmark = bench
    state["stage"] = "build"
    model, inputs, _ = zoo.build(name, batch, precision, "cuda")
    def hook(_mod, _inp, _out):
        torch.cuda.synchronize()
    for mname, mod in model.named_modules():
        if not list(mod.children()):
            mod.register_forward_pre_hook(lambda m, i, n=mname: state.__setitem__("module", n))
            mod.register_forward_hook(hook)
    with torch.inference_mode():
        for stage in ("eager1", "eager2", "eager3"):
            state["stage"] = stage
            model(*inputs); torch.cuda.synchronize()
        state["stage"] = "profile"
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True):
            model(*inputs); torch.cuda.synchronize()
        state["stage"] = "graph_capture"
        for mod in model.modules():
            mod._forward_hooks.clear(); mod._forward_pre_hooks.clear()
        s = torch.cuda.Stream(); s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                model(*inputs)
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            model(*inputs)
        state["stage"] = "replay"
        for _ in range(5):
            g.replay()
        torch.cuda.synchronize()
        state["stage"] = "done"
    report()
except Exception as exc:
    report(f"{type(exc).__name__}: {exc}")
'''


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--names", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--precisions", default="fp32,fp16")
    p.add_argument("--batches", default="1,32")
    p.add_argument("--timeout-s", type=float, default=60.0)
    p.add_argument("--max-seconds", type=float, default=240.0)
    a = p.parse_args(argv)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "CUDA_LAUNCH_BLOCKING": "1"}
    rows, t0 = [], time.time()
    for name in a.names.split(","):
        for precision in a.precisions.split(","):
            for batch in (int(b) for b in a.batches.split(",")):
                for bench in ("1", "0"):
                    if time.time() - t0 > a.max_seconds:
                        break
                    row = {"network": name, "precision": precision, "batch": batch, "cudnn_benchmark": bench == "1"}
                    try:
                        proc = subprocess.run([sys.executable, "-c", CHILD, name, precision, str(batch), bench],
                                              capture_output=True, text=True, timeout=a.timeout_s, env=env)
                        lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
                        row.update(json.loads(lines[-1][7:]) if lines else
                                   {"stage": "?", "error": (proc.stderr.strip().splitlines() or ["no output"])[-1]})
                        row["returncode"] = proc.returncode
                    except subprocess.TimeoutExpired:
                        row.update(stage="?", error="timeout")
                    rows.append(row)
                    print(json.dumps(row), flush=True)
                    (out / "diagnose.json").write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
