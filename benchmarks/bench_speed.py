"""Whole-process speed of ``predict`` against onnx-tool's profiler on the same ONNX files.

For each graph: the wall time of ``predict FILE --gpu h200 -o /dev/null`` in a fresh process (median of
``--repeat`` runs after one warm-up), and the wall time of a fresh process running onnx-tool's
profiling on the same file::

    m = onnx_tool.Model(path); m.graph.shape_infer({input: array}); m.graph.profile()

Graphs: (a) the 2,000-node synthetic decoder of ``synth_transformer.py`` (``--layers 74 --d-model 256
--heads 4 --d-ff 1024 --vocab 1000 --seq 128 --inline-weights``: weights inside the file, 313 MB);
(b) the committed real graphs vit_b_16, swin_t, gpt2, bert_base and resnet50 (torchscript exports). The committed
graphs carry no weights (their external ``.data`` files were stripped): ``predict`` reads them as they
are, onnx-tool cannot load them (``onnx.load`` wants the weights). So each real graph is also written
with zero-filled weights inside the file, and both tools are timed on that copy: the ratio compares
the two tools on the same file. ``--all-committed`` also times ``predict`` alone on every committed
graph.

The runs of the commands on one graph are interleaved (predict, onnx-tool, predict, ...), so a machine
shared with other work slows both alike; the table gives the median and the minimum of the wall times
and the median CPU time (user + system). The measured processes run with this interpreter's
environment minus PYTHONDONTWRITEBYTECODE, so the warm-up leaves both tools with their bytecode caches,
as installed. Results go to
``benchmarks/results/speed.json``; a markdown table is printed.

    python benchmarks/bench_speed.py [--repeat 5] [--workdir DIR] [--all-committed]
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

from _measure import REPO, machine_info, measure, measure_interleaved, predict_cmd  # noqa: E402

ONNX_DIR = REPO / "calibration" / "data" / "networks" / "onnx"
REAL = ("vit_b_16.torchscript.onnx", "swin_t.torchscript.onnx", "gpt2.torchscript.onnx", "bert_base.torchscript.onnx",
        "resnet50.torchscript.onnx")
SYNTH_ARGS = dict(layers=74, d_model=256, heads=4, d_ff=1024, vocab=1000, seq=128)

# onnx-tool's profiling of one file, in its own process: argv = path, JSON {input: [shape, numpy dtype]}
ONNX_TOOL = (
    "import json, sys\n"
    "import numpy as np\n"
    "import onnx_tool\n"
    "m = onnx_tool.Model(sys.argv[1])\n"
    "inputs = {k: np.zeros(s, dtype=d) for k, (s, d) in json.loads(sys.argv[2]).items()}\n"
    "m.graph.shape_infer(inputs)\n"
    "m.graph.profile()\n"
)


def synthetic(workdir: Path) -> Path:
    path = workdir / "synth_decoder_2000.onnx"
    if not path.exists():
        import onnx

        from synth_transformer import DecoderConfig, build_decoder

        cfg = DecoderConfig(SYNTH_ARGS["layers"], SYNTH_ARGS["d_model"], SYNTH_ARGS["heads"], SYNTH_ARGS["d_ff"],
                            SYNTH_ARGS["vocab"], SYNTH_ARGS["seq"])
        onnx.save_model(build_decoder(cfg, inline_weights=True), str(path))
    return path


def with_inline_weights(src: Path, workdir: Path) -> Path:
    """A copy of ``src`` whose external (missing) weights are zeros stored inside the file."""
    dst = workdir / (src.stem + ".inline.onnx")
    if dst.exists() and dst.stat().st_mtime >= src.stat().st_mtime:
        return dst
    import numpy as np
    import onnx
    from onnx import helper, numpy_helper

    model = onnx.load(str(src), load_external_data=False)
    for t in model.graph.initializer:
        if t.data_location == onnx.TensorProto.EXTERNAL:
            arr = np.zeros(tuple(t.dims), dtype=helper.tensor_dtype_to_np_dtype(t.data_type))
            t.CopyFrom(numpy_helper.from_array(arr, t.name))
    onnx.save_model(model, str(dst))
    return dst


def input_spec(path: Path) -> dict:
    """{input name: [shape at batch 1, numpy dtype]} as the predictor binds them."""
    from predictor.graph.loader import load

    g = load(str(path), batch=1)
    return {t.name: [list(t.shape), t.dtype] for t in g.inputs}


def node_count(path: Path) -> int:
    from predictor.graph.loader import read_model

    return len(read_model(str(path)).graph.node)


def _fmt(r: dict | None) -> str:
    if r is None:
        return "-"
    if "error" in r:
        return "fails"
    return f"{r['wall_s_median']:.2f} ({r['wall_s_min']:.2f})"


def _x(v: float | None) -> str:
    return f"{v:.1f}x" if v else "-"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--workdir", default=str(Path(tempfile.gettempdir()) / "gpu-roofline-bench"),
                    help="where the synthetic graph and the weight-filled copies are written (reused)")
    ap.add_argument("--out", default=str(HERE / "results" / "speed.json"))
    ap.add_argument("--all-committed", action="store_true", help="also time predict on every committed graph")
    ap.add_argument("--skip-onnx-tool", action="store_true")
    a = ap.parse_args(argv)
    workdir = Path(a.workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    predict = predict_cmd()
    started = time.time()

    def predict_of(path: Path) -> list[str]:
        return predict + [str(path), "--gpu", "h200", "-o", "/dev/null"]

    def onnx_tool_of(path: Path) -> list[str]:
        return [sys.executable, "-c", ONNX_TOOL, str(path), json.dumps(input_spec(path))]

    def time_predict(path: Path) -> dict:
        return measure(predict_of(path), repeat=a.repeat)

    def time_both(row: dict, cmds: dict[str, list[str]]) -> None:
        if a.skip_onnx_tool:
            cmds = {k: v for k, v in cmds.items() if not k.startswith("onnx_tool")}
        row.update(measure_interleaved(cmds, repeat=a.repeat))

    rows = []
    synth = synthetic(workdir)
    print(f"timing {synth.name} ...", file=sys.stderr)
    row = {"graph": "synthetic decoder (74 layers, d_model 256), weights inline", "file": synth.name,
           "nodes": node_count(synth), "file_mb": synth.stat().st_size / 1e6}
    time_both(row, {"predict": predict_of(synth), "onnx_tool": onnx_tool_of(synth)})
    rows.append(row)
    for name in REAL:
        src = ONNX_DIR / name
        if not src.exists():
            continue
        print(f"timing {name} ...", file=sys.stderr)
        inline = with_inline_weights(src, workdir)
        row = {"graph": name, "file": name, "nodes": node_count(src), "file_mb": src.stat().st_size / 1e6,
               "inline_file_mb": inline.stat().st_size / 1e6}
        time_both(row, {"predict_committed": predict_of(src), "onnx_tool_committed": onnx_tool_of(src),
                        "predict": predict_of(inline), "onnx_tool": onnx_tool_of(inline)})
        rows.append(row)
    for row in rows:
        p, o = row.get("predict"), row.get("onnx_tool")
        if p and o and "error" not in p and "error" not in o:
            row["ratio_onnx_tool_over_predict"] = o["wall_s_median"] / p["wall_s_median"]
            row["ratio_min_onnx_tool_over_predict"] = o["wall_s_min"] / p["wall_s_min"]
            row["cpu_ratio_onnx_tool_over_predict"] = o["cpu_s_median"] / p["cpu_s_median"]
    committed = []
    if a.all_committed:
        for src in sorted(ONNX_DIR.glob("*.onnx")):
            print(f"timing predict on {src.name} ...", file=sys.stderr)
            committed.append({"file": src.name, "nodes": node_count(src), "predict": time_predict(src)})

    result = {
        "what": "whole-process wall time, median of repeated runs after one warm-up (seconds)",
        "predict_command": " ".join(Path(predict[0]).name if i == 0 else x for i, x in enumerate(predict))
        + " FILE --gpu h200 -o /dev/null",
        "onnx_tool_command": "onnx_tool.Model(path); graph.shape_infer(inputs at batch 1); graph.profile()",
        "repeat": a.repeat, "machine": machine_info(), "versions": _versions(),
        "duration_s": None, "rows": rows, "predict_all_committed": committed,
    }
    result["duration_s"] = time.time() - started
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(markdown(result))
    print(f"\nwritten {out}", file=sys.stderr)
    return 0


def markdown(result: dict) -> str:
    lines = ["Wall seconds, median (min) of the runs; ratios of medians, of minima, and of median CPU seconds.", "",
             "| graph | nodes | predict, committed file | predict, weights inline | onnx-tool, weights inline "
             "| onnx-tool / predict | (min) | (CPU) |", "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in result["rows"]:
        lines.append(f"| {r['graph']} | {r['nodes']:,} | {_fmt(r.get('predict_committed'))} | {_fmt(r.get('predict'))} "
                     f"| {_fmt(r.get('onnx_tool'))} | {_x(r.get('ratio_onnx_tool_over_predict'))} "
                     f"| {_x(r.get('ratio_min_onnx_tool_over_predict'))} | {_x(r.get('cpu_ratio_onnx_tool_over_predict'))} |")
    fails = [r for r in result["rows"] if r.get("onnx_tool_committed") and "error" in r["onnx_tool_committed"]]
    if fails:
        lines.append("")
        lines.append(f"onnx-tool on the committed (weight-free) files: fails on {len(fails)} of {len(fails)} "
                     f"({fails[0]['onnx_tool_committed']['error'][:140]}...)")
    inline_fails = [r for r in result["rows"] if r.get("onnx_tool") and "error" in r["onnx_tool"]]
    for r in inline_fails:
        lines.append(f"onnx-tool on {r['graph']} with weights inline fails: {r['onnx_tool']['error'][:120]}")
    if result.get("predict_all_committed"):
        lines += ["", "| committed graph | nodes | predict wall (s), median (min) | CPU (s), median | peak RSS (MB) |",
                  "| --- | ---: | ---: | ---: | ---: |"]
        for r in result["predict_all_committed"]:
            p = r["predict"]
            if "error" in p:
                lines.append(f"| {r['file']} | {r['nodes']:,} | fails | | |")
            else:
                lines.append(f"| {r['file']} | {r['nodes']:,} | {_fmt(p)} | {p['cpu_s_median']:.2f} "
                             f"| {p['max_rss_mb']:.0f} |")
    m = result["machine"]
    lines.append("")
    lines.append(f"Machine: {m.get('cpu', '?')}, {m.get('cpus')} CPUs, Python {m.get('python')}, load average "
                 f"{m.get('loadavg_at_start', ['?'])[0]} at the start; median of {result['repeat']} runs after a warm-up.")
    return "\n".join(lines)


def _versions() -> dict:
    from importlib import metadata

    out = {}
    for pkg in ("onnx", "onnx-tool", "numpy", "protobuf", "gpu-roofline-predictor"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            out[pkg] = None
    return out


if __name__ == "__main__":
    raise SystemExit(main())
