"""Fuzz the ONNX loader and the ncu CSV parser: any exception other than PredictorError / NcuParseError is
a crash.

Coverage-guided, with atheris (``pip install atheris``; libFuzzer flags after the target)::

    python fuzz/fuzz_loader.py loader -max_total_time=300 fuzz/seeds/loader
    python fuzz/fuzz_loader.py csv -max_total_time=300

Plain random mutation of the seeds, no extra package (what the test suite runs)::

    python fuzz/fuzz_loader.py --plain loader --seconds 20 [--seed 1]

targets: ``loader`` (read the file, parse, bind, shapes: ``predictor.graph.loader.load``; half of the inputs
go through the windowed scanner of ``protoscan`` that big files use), ``predict`` (loader + cost + time, the
whole of ``predict`` but the output), ``csv`` (``predictor.measure.ncu.parse.parse_csv``). A crashing input is
written to ``fuzz/crashes/<target>-<sha1>.bin`` (or ``--crash-dir``); turn it into a corpus case in
tests/robustness/make_corpus.py once fixed.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import random
import sys
import tempfile
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

TARGETS = ("loader", "predict", "csv")
_TMP = tempfile.mkdtemp(prefix="fuzz_loader_")


# ------------------------------------------------------------------------------------------ targets
def _expected():
    from predictor.measure.ncu.parse import NcuParseError
    from predictor.types import PredictorError

    return (PredictorError, NcuParseError)


def run_loader(data: bytes, predict: bool = False) -> None:
    """Load ``data`` as an ONNX file; half of the inputs through protoscan's windowed scanner."""
    from predictor.graph import loader, protoscan

    path = os.path.join(_TMP, "model.onnx")
    with open(path, "wb") as f:
        f.write(data)
    saved = protoscan.DIRECT_READ_BYTES
    if data and data[-1] & 1:
        protoscan.DIRECT_READ_BYTES = 0  # as for a file over 64 MiB: the wire-format scan with seeks
    try:
        graph = loader.load(path, batch=1 + (len(data) % 3))
    finally:
        protoscan.DIRECT_READ_BYTES = saved
    if predict:
        from predictor.calibrate import Uncalibrated
        from predictor.machine.profile import load_profile
        from predictor.predict import predict_graph

        predict_graph(graph, load_profile("h200"), "fp16", Uncalibrated())


def run_csv(data: bytes) -> None:
    from predictor.measure.ncu.parse import parse_csv

    parse_csv(data.decode("utf-8", errors="replace"))


def one_input(target: str, data: bytes) -> None:
    """Run ``target`` on ``data``; the expected one-line errors are swallowed, anything else propagates."""
    try:
        if target == "csv":
            run_csv(data)
        else:
            run_loader(data, predict=target == "predict")
    except _expected() as e:
        # NcuParseError messages are one line by construction; a PredictorError may quote a name with a line
        # break from the model, which predict's main() has to flatten (it prints one line)
        if target == "csv" and "\n" in str(e):
            raise AssertionError(f"a multi-line error message: {str(e)[:200]!r}") from None


# ------------------------------------------------------------------------------------------ seeds
def seeds(target: str) -> list[bytes]:
    corpus = ROOT / "tests" / "robustness" / "corpus"
    if target == "csv":
        from tests.robustness.make_corpus import valid_ncu_csv, valid_ncu_details_csv

        out = [valid_ncu_csv().encode(), valid_ncu_details_csv().encode()]
        out += [p.read_bytes() for p in sorted((corpus / "ncu").glob("*.csv")) if p.stat().st_size < 8000][:20]
        return out
    from tests.robustness.make_corpus import deep_if_proto, relu_chain

    out = [(ROOT / "examples" / "lstm.onnx").read_bytes(), relu_chain().SerializeToString(),
           deep_if_proto(4).SerializeToString()]
    out += [p.read_bytes() for p in sorted((corpus / "onnx").glob("*.onnx")) if p.stat().st_size < 8000][:30]
    return out


# ------------------------------------------------------------------------------------------ plain mutation
_INTERESTING = [b"\x00", b"\xff", b"\x7f", b"\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01", b"\xff\xff\xff\xff\x0f",
                b"\x08\x00", b"\x12\x00", b"\x3a\x00", b"\x01", b"\x02", b"n/a", b"inf", b"-1", b'"', b",", b"\n",
                b"9.0", b"usecond", b"Kbyte", b"ID", b"1e999", b"nan"]


def _structured(data: bytes, rng: random.Random) -> bytes:
    """Parse ``data`` as a ModelProto and change one field to a hostile value (dims, op types, names, attrs)."""
    from predictor.graph.loader import onnx_pb

    m = onnx_pb().ModelProto()
    try:
        m.ParseFromString(data)
    except Exception:  # noqa: BLE001
        return data
    g = m.graph
    choice = rng.randrange(8)
    hostile_ints = [0, -1, -5, 1, 2**31, 2**40, 2**62, 2**63 - 1, -(2**63)]
    try:
        if choice == 0 and g.initializer:
            t = rng.choice(g.initializer)
            if t.dims:
                t.dims[rng.randrange(len(t.dims))] = rng.choice(hostile_ints)
        elif choice == 1 and g.input:
            dims = rng.choice(g.input).type.tensor_type.shape.dim
            if dims:
                dims[rng.randrange(len(dims))].dim_value = rng.choice(hostile_ints)
        elif choice == 2 and g.node:
            rng.choice(g.node).op_type = rng.choice(["Conv", "MatMul", "Gemm", "Reshape", "Transpose", "LSTM",
                                                     "Slice", "Concat", "Unknown", "Expand", "Tile", "Range"])
        elif choice == 3 and g.node:
            n = rng.choice(g.node)
            if n.input:
                n.input[rng.randrange(len(n.input))] = rng.choice([o for x in g.node for o in x.output] or ["z"])
        elif choice == 4 and g.node:
            n = rng.choice(g.node)
            for a in n.attribute:
                if a.type == 2:
                    a.i = rng.choice(hostile_ints)
                elif a.type == 7 and a.ints:
                    a.ints[rng.randrange(len(a.ints))] = rng.choice(hostile_ints)
        elif choice == 5 and g.node:
            del g.node[rng.randrange(len(g.node))]
        elif choice == 6 and g.initializer:
            t = rng.choice(g.initializer)
            t.raw_data = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 64)))
        elif g.node:
            rng.choice(g.node).domain = rng.choice(["", "ai.onnx", "com.microsoft", "evil"])
        return m.SerializeToString()
    except Exception:  # noqa: BLE001 - a value protobuf refuses: keep the input
        return data


def mutate(data: bytes, rng: random.Random, pool: list[bytes], structured: bool) -> bytes:
    if structured and rng.random() < 0.5:
        return _structured(data, rng)
    b = bytearray(data)
    for _ in range(rng.choice((1, 1, 2, 3, 8))):
        op = rng.randrange(7)
        pos = rng.randrange(len(b) + 1)
        if op == 0 and b:
            b[min(pos, len(b) - 1)] ^= 1 << rng.randrange(8)
        elif op == 1:
            b[pos:pos] = rng.choice(_INTERESTING)
        elif op == 2:
            del b[pos:pos + rng.randrange(1, 64)]
        elif op == 3 and b:
            b[min(pos, len(b) - 1)] = rng.randrange(256)
        elif op == 4:
            other = rng.choice(pool)
            a = rng.randrange(len(other) + 1)
            b[pos:pos + rng.randrange(0, 64)] = other[a:a + rng.randrange(1, 256)]
        elif op == 5:
            del b[pos:]
        else:
            a = rng.randrange(len(b) + 1)
            b[pos:pos] = b[a:a + rng.randrange(1, 32)]
    return bytes(b)


def plain_fuzz(target: str, seconds: float, seed: int = 0, crash_dir: Path | None = None,
               max_inputs: int | None = None) -> tuple[int, list[tuple[bytes, str]]]:
    """Mutate the seeds for ``seconds``; returns (inputs run, [(crashing input, traceback)])."""
    rng = random.Random(seed)
    pool = seeds(target)
    crashes: list[tuple[bytes, str]] = []
    deadline = time.perf_counter() + seconds
    n = 0
    while time.perf_counter() < deadline and (max_inputs is None or n < max_inputs):
        data = mutate(rng.choice(pool), rng, pool, structured=target != "csv")
        n += 1
        try:
            one_input(target, data)
        except Exception:  # noqa: BLE001 - a crash
            tb = traceback.format_exc()
            crashes.append((data, tb))
            if crash_dir is not None:
                crash_dir.mkdir(parents=True, exist_ok=True)
                (crash_dir / f"{target}-{hashlib.sha1(data).hexdigest()[:12]}.bin").write_bytes(data)
            if len(crashes) >= 20:
                break
        else:
            if len(pool) < 200 and rng.random() < 0.05:
                pool.append(data)  # keep some survivors as new seeds
    return n, crashes


# ------------------------------------------------------------------------------------------ main
def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--plain":
        p = argparse.ArgumentParser(prog="fuzz_loader.py --plain")
        p.add_argument("target", choices=TARGETS)
        p.add_argument("--seconds", type=float, default=20.0)
        p.add_argument("--seed", type=int, default=0)
        p.add_argument("--crash-dir", type=Path, default=ROOT / "fuzz" / "crashes")
        args = p.parse_args(argv[1:])
        n, crashes = plain_fuzz(args.target, args.seconds, args.seed, args.crash_dir)
        print(f"{args.target}: {n} inputs, {len(crashes)} crashes")
        for data, tb in crashes[:3]:
            print(tb.strip().splitlines()[-1])
        return 1 if crashes else 0
    if not argv or argv[0] not in TARGETS:
        print(__doc__, file=sys.stderr)
        return 2
    target = argv[0]
    import atheris  # noqa: PLC0415 - only for coverage-guided runs

    with atheris.instrument_imports():
        import predictor.measure.ncu.parse  # noqa: F401
        import predictor.graph.loader  # noqa: F401
        import predictor.graph.protoscan  # noqa: F401
        import predictor.graph.shapes  # noqa: F401
    if target == "predict":
        import predictor.predict  # noqa: F401

    seed_dir = Path(_TMP) / "seeds"
    seed_dir.mkdir(exist_ok=True)
    for k, s in enumerate(seeds(target)):
        (seed_dir / f"seed{k}").write_bytes(s)
    rest = argv[1:]
    if not any(not a.startswith("-") for a in rest):
        rest.append(str(seed_dir))
    atheris.Setup([sys.argv[0]] + rest, lambda data: one_input(target, data))
    atheris.Fuzz()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
