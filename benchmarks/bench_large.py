"""Large-model check: a 6.7 B-parameter decoder (synth_transformer.py's default config: 32 layers,
d_model 4096, SwiGLU d_ff 11008, vocab 32000, sequence 2048) whose weights are external data that does
not exist must analyse in under 5 s and 500 MB.

Builds the graph (``--model``, default ``<tmp>/llama7b.onnx``) unless it exists, then times
``predict MODEL --gpu h200 -o /dev/null`` in fresh processes (median of ``--repeat`` runs after one
warm-up) and records each run's peak resident memory (RUSAGE_CHILDREN of a wrapper whose only child is
``predict``). Writes ``benchmarks/results/large_model.json`` and prints a summary; exit status 1 when a
limit is missed.

    python benchmarks/bench_large.py [--model PATH] [--repeat 3] [--batch 1]
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _measure import machine_info, measure, predict_cmd  # noqa: E402

LIMIT_S = 5.0
LIMIT_MB = 500.0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=str(Path(tempfile.gettempdir()) / "llama7b.onnx"))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--out", default=str(HERE / "results" / "large_model.json"))
    a = ap.parse_args(argv)
    model = Path(a.model)
    from synth_transformer import DecoderConfig, build_decoder

    cfg = DecoderConfig()
    if not model.exists():
        import onnx

        onnx.save_model(build_decoder(cfg), str(model))
    cmd = predict_cmd() + [str(model), "--gpu", "h200", "--batch", str(a.batch), "-o", "/dev/null"]
    started = time.time()
    r = measure(cmd, repeat=a.repeat)
    if "error" in r:
        print(f"error: predict failed on {model}: {r['error']}", file=sys.stderr)
        return 1
    ok = r["wall_s_median"] < LIMIT_S and r["max_rss_mb"] < LIMIT_MB
    from predictor.graph.loader import read_model

    proto = read_model(str(model))
    result = {
        "model": model.name, "file_bytes": model.stat().st_size, "nodes": len(proto.graph.node),
        "initializers": len(proto.graph.initializer),
        "config": {"layers": cfg.n_layers, "d_model": cfg.d_model, "heads": cfg.n_heads, "d_ff": cfg.d_ff,
                   "vocab": cfg.vocab, "seq": cfg.seq, "params": cfg.params},
        "weights": "external data (weights.bin) that does not exist",
        "command": "predict MODEL --gpu h200 --batch %d -o /dev/null" % a.batch,
        "repeat": a.repeat, "wall_s_median": r["wall_s_median"], "wall_s_runs": r["wall_s_runs"],
        "cpu_s_median": r["cpu_s_median"], "peak_rss_mb": r["max_rss_mb"],
        "limits": {"wall_s": LIMIT_S, "peak_rss_mb": LIMIT_MB}, "within_limits": ok,
        "machine": machine_info(), "duration_s": time.time() - started,
    }
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"{model.name}: {result['nodes']} nodes, {cfg.params / 1e9:.2f} B parameters (external, absent), "
          f"file {model.stat().st_size / 1e6:.2f} MB")
    print(f"predict: {r['wall_s_median']:.2f} s wall (median of {a.repeat}), {r['cpu_s_median']:.2f} s CPU, "
          f"peak RSS {r['max_rss_mb']:.0f} MB -> {'within' if ok else 'OVER'} the {LIMIT_S:.0f} s / {LIMIT_MB:.0f} MB limits")
    print(f"written {out}", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
