"""Bounded and fast on any input: one run of each case, whole processes measured by `_measure` (wall time,
peak RSS), in-process stages as ratios on the same machine.

Cases:
- json: the JSON report of ViT-B/16 (2,068 nodes) written by ``json.dumps(indent=2)`` (the pure-Python
  encoder, the report's old layout) vs ``predictor.output.dumps_json`` (one line per op, C encoder); the two
  documents are checked equal.
- plot: ``predict vit_b_16 -o /dev/null`` with and without ``--plot`` (interleaved runs): the seconds a chart
  adds.
- nodes_100k: a synthetic decoder of ~100k nodes (3,700 layers, d_model 256, weights external and absent):
  whole-process time and peak memory against the 2 s / 300 MB target.
- payload_4gib: a 4 GiB Constant-node tensor in the file (a sparse file: the payload is a hole): time and
  peak memory stay those of a tiny model (the payload is skipped by its length prefix).
- inline_2p40: the corpus's 3 KB model of local functions doubling 40 levels deep (2**40 nodes once inlined):
  refused in one line, in the time of a small model.
- train_2p40: ``--mode train`` on a weight of 2**40 rows (the multi-tensor launch count in closed form).
- plot_vs_baseline (with ``--baseline REV``): the CPU seconds ``--plot`` adds, this tree against
  ``predictor/`` of git revision REV (extracted to a temporary folder), all four commands interleaved.
- nodes_100k_vs_baseline and vit_vs_baseline (with ``--baseline REV``): the 100k-node decoder and ViT-B/16
  (examples/vit_b_16.dynamo.onnx) by this tree and by REV, interleaved (``--repeat`` runs each after a warm-up).
  Both trees run as the program does (``main()`` reading ``sys.argv``), so each ends as ``predict`` ends.

    python benchmarks/bench_robustness.py [--repeat 3] [--baseline REV] [--out benchmarks/results/robustness.json]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO))

from _measure import machine_info, measure, measure_interleaved, measure_once  # noqa: E402
from _measure import predict_cmd as _predict_exe  # noqa: E402


def predict_cmd(*args) -> list[str]:
    return _predict_exe() + [str(a) for a in args]

VIT = REPO / "examples" / "vit_b_16.dynamo.onnx"
CORPUS = REPO / "tests" / "robustness" / "corpus" / "onnx"


def _json_case(repeat: int) -> dict:
    from predictor.machine.profile import load_profile
    from predictor.output import dumps_json
    from predictor.predict import predict_file
    from predictor.report import to_json_dict

    p = load_profile("h200")
    doc = to_json_dict(predict_file(str(VIT), p), p)

    def best(f) -> float:
        times = []
        for _ in range(repeat):
            t = time.perf_counter()
            f()
            times.append(time.perf_counter() - t)
        return min(times)

    old_s = best(lambda: json.dumps(doc, indent=2))
    new_s = best(lambda: dumps_json(doc))
    assert json.loads(dumps_json(doc)) == json.loads(json.dumps(doc, indent=2))
    return {"graph": VIT.name, "ops": len(doc["ops"]), "indent2_s": old_s, "dumps_json_s": new_s,
            "speedup": old_s / new_s, "bytes_indent2": len(json.dumps(doc, indent=2)),
            "bytes_dumps_json": len(dumps_json(doc))}


def _decoder_100k(workdir: Path) -> Path:
    path = workdir / "decoder_100k.onnx"
    if not path.exists():
        import onnx

        from synth_transformer import DecoderConfig, build_decoder

        onnx.save(build_decoder(DecoderConfig(3700, 256, 4, 1024, 1000, 128)), str(path))
    return path


def _payload_4gib(workdir: Path) -> Path:
    """A Constant node holding a [32768, 32768] float32 tensor (4 GiB) inside the file, written as a hole."""
    from onnx import TensorProto, helper

    def varint(v):
        out = bytearray()
        while True:
            b, v = v & 0x7F, v >> 7
            out.append(b | (0x80 if v else 0))
            if not v:
                return bytes(out)

    def ld(field, payload_len, head=b""):
        return varint((field << 3) | 2) + varint(payload_len) + head

    n = 4 << 30
    t_head = TensorProto(name="v", dims=[32768, 32768], data_type=TensorProto.FLOAT).SerializeToString()
    tensor_len = len(t_head) + len(ld(9, n)) + n
    attr_head = b"\x0a\x05value\xa0\x01\x04"  # name 'value', type TENSOR
    attr_len = len(attr_head) + len(ld(5, tensor_len)) + tensor_len
    node_head = b"".join([varint(2 << 3 | 2), varint(1), b"c", varint(4 << 3 | 2), varint(8), b"Constant"])
    node_len = len(node_head) + len(ld(5, attr_len)) + attr_len
    add = helper.make_node("Add", ["x", "c"], ["y"]).SerializeToString()
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 32768]).SerializeToString()
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None).SerializeToString()
    tail = ld(1, len(add), add) + ld(11, len(x), x) + ld(12, len(y), y)
    graph_len = len(ld(1, node_len)) + node_len + len(tail)
    opset = helper.make_opsetid("", 17).SerializeToString()
    path = workdir / "payload_4gib.onnx"
    with open(path, "wb") as f:
        f.write(varint(1 << 3) + varint(8) + ld(7, graph_len) + ld(1, node_len) + node_head + ld(5, attr_len)
                + attr_head + ld(5, tensor_len) + t_head + ld(9, n))
        f.seek(n, os.SEEK_CUR)
        f.write(tail + ld(8, len(opset), opset))
    return path


def _baseline_tree(rev: str, work: Path) -> Path:
    """``predictor/`` of git revision ``rev``, extracted under ``work`` (reused)."""
    import subprocess

    base = work / f"baseline_{rev}"
    if not (base / "predictor").is_dir():
        base.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "-C", str(REPO), "archive", rev, "predictor"], capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", str(base)], input=archive.stdout, check=True)
    return base


def _tree_cmd(root: Path, args: list[str]) -> list[str]:
    """``predict ARGS`` by the predictor/ under ``root``, run as the console script runs it (main() on sys.argv)."""
    return [sys.executable, "-c", f"import sys; sys.path.insert(0, {str(root)!r}); sys.argv = ['predict', *{args!r}]; "
            "from predictor.cli import main; sys.exit(main())"]


def _vs_baseline(rev: str, work: Path, model: Path, repeat: int) -> dict:
    """``model`` by REV and by this tree, interleaved; the ratio of median wall and CPU seconds."""
    base = _baseline_tree(rev, work)
    args = [str(model), "--gpu", "h200", "-o", os.devnull]
    r = measure_interleaved({"baseline": _tree_cmd(base, args), "this": _tree_cmd(REPO, args)}, repeat=repeat)
    out = {"baseline": rev, "graph": model.name, **r}
    if "error" not in r["baseline"] and "error" not in r["this"]:
        out["wall_ratio_baseline_over_this"] = r["baseline"]["wall_s_median"] / r["this"]["wall_s_median"]
        out["cpu_ratio_baseline_over_this"] = r["baseline"]["cpu_s_median"] / r["this"]["cpu_s_median"]
    return out


def _plot_vs_baseline(rev: str, work: Path, repeat: int) -> dict:
    base = _baseline_tree(rev, work)

    def cmd(root: Path, plot: bool) -> list[str]:
        args = [str(VIT), "--gpu", "h200", "-o", str(work / "ab.txt")] + (["--plot", str(work / "ab.png")] if plot else [])
        return _tree_cmd(root, args)

    r = measure_interleaved({"baseline_no_plot": cmd(base, False), "baseline_plot": cmd(base, True),
                             "no_plot": cmd(REPO, False), "plot": cmd(REPO, True)}, repeat=repeat)
    out = {"baseline": rev, **r}
    for side in ("baseline_", ""):
        out[f"{side}added_cpu_s"] = r[f"{side}plot"]["cpu_s_median"] - r[f"{side}no_plot"]["cpu_s_median"]
        out[f"{side}added_wall_s"] = r[f"{side}plot"]["wall_s_median"] - r[f"{side}no_plot"]["wall_s_median"]
    return out


def _row(name: str, cmd: list[str], repeat: int, **extra) -> dict:
    r = measure(cmd, repeat=repeat)
    return {"case": name, "command": "predict " + " ".join(Path(c).name if "/" in c else c for c in cmd[1:]),
            **extra, **r}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--workdir", default=str(Path(tempfile.gettempdir()) / "bench_robustness"))
    ap.add_argument("--out", default=str(HERE / "results" / "robustness.json"))
    ap.add_argument("--baseline", help="git revision whose predictor/ the --plot case is compared with")
    a = ap.parse_args(argv)
    work = Path(a.workdir)
    work.mkdir(parents=True, exist_ok=True)
    started = time.time()
    doc: dict = {"what": __doc__.split("\n\n")[0], "machine": machine_info(), "repeat": a.repeat}
    doc["json"] = _json_case(max(a.repeat, 5))
    plot = work / "chart.png"
    both = measure_interleaved({"no_plot": predict_cmd(VIT, "--gpu", "h200", "-o", os.devnull),
                                "plot": predict_cmd(VIT, "--gpu", "h200", "-o", os.devnull, "--plot", plot)}, repeat=a.repeat)
    doc["plot"] = {"graph": VIT.name, **both,
                   "added_s_median": both["plot"]["wall_s_median"] - both["no_plot"]["wall_s_median"]}
    big = _decoder_100k(work)
    import onnx

    nodes = len(onnx.load(str(big), load_external_data=False).graph.node)
    doc["nodes_100k"] = _row("nodes_100k", predict_cmd(big, "--gpu", "h200", "-o", os.devnull), 1, nodes=nodes,
                             target={"wall_s": 2.0, "max_rss_mb": 300})
    payload = _payload_4gib(work)
    doc["payload_4gib"] = _row("payload_4gib", predict_cmd(payload, "--gpu", "h200", "-o", os.devnull), a.repeat,
                               file_bytes=payload.stat().st_size, disk_bytes=payload.stat().st_blocks * 512)
    payload.unlink()
    runs = [measure_once(predict_cmd(CORPUS / "function_doubling_40.onnx", "--gpu", "h200")) for _ in range(a.repeat)]
    doc["inline_2p40"] = {"case": "function_doubling_40.onnx", "rc": [r["rc"] for r in runs],
                          "stderr": runs[0]["stderr"].strip(), "wall_s_runs": [r["wall_s"] for r in runs],
                          "max_rss_mb": max(r["max_rss_kb"] for r in runs) / 1024.0}
    doc["train_2p40"] = _row("train_2p40", predict_cmd(CORPUS / "init_dim_2p40_train.onnx", "--gpu", "h200",
                                                       "--mode", "train", "-o", os.devnull), a.repeat)
    if a.baseline:
        doc["plot_vs_baseline"] = _plot_vs_baseline(a.baseline, work, a.repeat)
        doc["nodes_100k_vs_baseline"] = _vs_baseline(a.baseline, work, big, a.repeat)
        doc["vit_vs_baseline"] = _vs_baseline(a.baseline, work, VIT, max(a.repeat, 5))
    doc["duration_s"] = time.time() - started
    Path(a.out).write_text(json.dumps(doc, indent=1) + "\n")
    j, p, n, w = doc["json"], doc["plot"], doc["nodes_100k"], doc["payload_4gib"]
    print(f"json: {j['indent2_s'] * 1e3:.1f} ms -> {j['dumps_json_s'] * 1e3:.1f} ms ({j['speedup']:.1f}x)")
    print(f"--plot adds {p['added_s_median']:.2f} s (median of {a.repeat}, interleaved)")
    print(f"{n['nodes']} nodes: {n.get('wall_s_median', float('nan')):.2f} s, {n.get('max_rss_mb', float('nan')):.0f} MB")
    print(f"4 GiB payload: {w.get('wall_s_median', float('nan')):.2f} s, {w.get('max_rss_mb', float('nan')):.0f} MB")
    if a.baseline:
        b = doc["plot_vs_baseline"]
        print(f"--plot adds {b['added_cpu_s']:.2f} s CPU here, {b['baseline_added_cpu_s']:.2f} s at {a.baseline}")
        for key in ("nodes_100k_vs_baseline", "vit_vs_baseline"):
            v = doc[key]
            if "wall_ratio_baseline_over_this" in v:
                print(f"{v['graph']}: {v['this']['wall_s_median']:.3f} s here ({v['this']['cpu_s_median']:.3f} s CPU, "
                      f"{v['this']['max_rss_mb']:.0f} MB), {v['baseline']['wall_s_median']:.3f} s at {a.baseline} "
                      f"({v['baseline']['cpu_s_median']:.3f} s CPU, {v['baseline']['max_rss_mb']:.0f} MB): "
                      f"{v['wall_ratio_baseline_over_this']:.2f}x")
    print(f"wrote {a.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
