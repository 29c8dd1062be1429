"""Sweep speed: the whole 4 x 4 x 4 sweep of ResNet-50 (v100,a100,h100,h200 x fp32,tf32,bf16,fp8 x batch
1,8,32,128; 64 settings, of which 16 are n/a: v100 has no tf32/bf16/fp8 ceiling, a100 no fp8) against
one prediction.

Whole process, fresh each run (median of ``--repeat`` after one warm-up, the two commands interleaved):
``predict MODEL --gpu h200 --batch 32 -o /dev/null`` and the sweep ``predict MODEL --gpu ... --precision ...
--batch ... -o /dev/null``. Reported as ratios: sweep / one prediction, and sweep / 64 separate
predictions (64 x one prediction). In one process (best of ``--repeat``): ``predictor.sweep.run_sweep``
against a loop of 64 ``predict_file`` calls (the model loaded for every setting) with the same profiles
and calibrations, and the time of the 4 loads. Writes ``benchmarks/results/sweep.json``; exit status 1
when the sweep takes more than a quarter of 64 separate predictions.

    python benchmarks/bench_sweep.py [--model examples/resnet50.onnx] [--repeat 5]
"""
from __future__ import annotations

import argparse
import gc
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _measure import REPO, machine_info, measure_interleaved, predict_cmd  # noqa: E402

GPUS = ("v100", "a100", "h100", "h200")
PRECISIONS = ("fp32", "tf32", "bf16", "fp8")
BATCHES = (1, 8, 32, 128)
LIMIT_VS_SEPARATE = 0.25


def in_process(model: str, repeat: int) -> dict:
    sys.path.insert(0, str(REPO))
    from predictor.fitted import bundled_calibration
    from predictor.graph.loader import load
    from predictor.machine.profile import load_profile
    from predictor.predict import predict_file
    from predictor.sweep import run_sweep
    from predictor.types import PredictorError

    profiles = [load_profile(g) for g in GPUS]
    cals = {p.name: bundled_calibration(p) for p in profiles}

    def sweep():
        return run_sweep(model, profiles, PRECISIONS, BATCHES, calibration_for=lambda p: cals[p.name])

    def separate():
        ok = 0
        for p in profiles:
            for prec in PRECISIONS:
                for b in BATCHES:
                    try:
                        predict_file(model, p, precision=prec, batch=b, calibration=cals[p.name])
                        ok += 1
                    except PredictorError:
                        pass
        return ok

    def loads():
        for b in BATCHES:
            load(model, batch=b)

    def best(fn):
        times = []
        for _ in range(repeat):
            gc.disable()
            t = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t)
            gc.enable()
        return min(times)

    s = sweep()
    assert s.succeeded == separate() == 48, s.succeeded
    t_sweep, t_sep, t_load = best(sweep), best(separate), best(loads)
    return {"run_sweep_s": t_sweep, "predict_file_x64_s": t_sep, "four_loads_s": t_load,
            "run_sweep_vs_predict_file_x64": t_sweep / t_sep, "settings": len(s.rows), "predicted": s.succeeded,
            "per_setting_after_loads_ms": (t_sweep - t_load) / len(s.rows) * 1e3}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=str(REPO / "examples" / "resnet50.onnx"))
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--out", default=str(HERE / "results" / "sweep.json"))
    a = ap.parse_args(argv)
    started = time.time()
    single = predict_cmd() + [a.model, "--gpu", "h200", "--batch", "32", "-o", "/dev/null"]
    full = predict_cmd() + [a.model, "--gpu", ",".join(GPUS), "--precision", ",".join(PRECISIONS),
                            "--batch", ",".join(map(str, BATCHES)), "-o", "/dev/null"]
    r = measure_interleaved({"single": single, "sweep": full}, repeat=a.repeat)
    for k, v in r.items():
        if "error" in v:
            print(f"error: {k} failed: {v['error']}", file=sys.stderr)
            return 1
    one, sw = r["single"]["wall_s_median"], r["sweep"]["wall_s_median"]
    n = len(GPUS) * len(PRECISIONS) * len(BATCHES)
    inproc = in_process(a.model, a.repeat)
    result = {
        "model": Path(a.model).name, "axes": {"gpu": GPUS, "precision": PRECISIONS, "batch": BATCHES},
        "settings": n, "predicted": inproc["predicted"],
        "commands": {"single": " ".join(single[1:]), "sweep": " ".join(full[1:])},
        "repeat": a.repeat,
        "process": {"single_wall_s_median": one, "sweep_wall_s_median": sw,
                    "single_cpu_s_median": r["single"]["cpu_s_median"],
                    "sweep_cpu_s_median": r["sweep"]["cpu_s_median"],
                    "sweep_peak_rss_mb": r["sweep"]["max_rss_mb"],
                    "sweep_vs_single": sw / one, "sweep_vs_separate_x64": sw / (n * one)},
        "in_process": inproc,
        "limit_sweep_vs_separate": LIMIT_VS_SEPARATE,
        "within_limits": sw / (n * one) <= LIMIT_VS_SEPARATE,
        "machine": machine_info(), "duration_s": time.time() - started,
    }
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    ip = inproc
    print(f"{result['model']}: {n} settings ({ip['predicted']} predicted, the rest n/a)")
    print(f"process: sweep {sw:.2f} s, one prediction {one:.2f} s (wall, median of {a.repeat}): sweep = "
          f"{sw / one:.1f}x one prediction = {sw / (n * one):.3f}x {n} separate predictions")
    print(f"in process: run_sweep {ip['run_sweep_s']:.3f} s vs {n} predict_file calls {ip['predict_file_x64_s']:.3f} s "
          f"({ip['run_sweep_vs_predict_file_x64']:.2f}x); 4 loads {ip['four_loads_s']:.3f} s, "
          f"{ip['per_setting_after_loads_ms']:.1f} ms per setting after them")
    print(f"written {out}", file=sys.stderr)
    return 0 if result["within_limits"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
