"""GPU time of LSTM / GRU training steps (forward + loss + backward, no optimizer), for ``--mode train``'s
recurrent backward rules (predictor/train/rules/rnn.py). One process, every case in turn; a CSV row per case.

    python3 -m calibration.training.rnn_steps --out rnn_steps.csv [--device cuda|cpu] [--quick]
        [--cells lstm,gru] [--layers 1,2] [--directions 1,2] [--precisions fp32,fp16] [--hidden 256,512,1024]
        [--seq 32,128] [--batch 1,32] [--input 256] [--replays 20] [--max-seconds 0]

Protocol per case (cell, layers, directions, precision, hidden H, sequence S, batch B, input I):

* ``torch.nn.LSTM`` / ``torch.nn.GRU`` (I -> H, ``num_layers``, ``bidirectional``), time-major input
  x[S, B, I] (``batch_first=False``, as the ONNX graphs the predictor reads), parameters in train() mode on
  the device; cuDNN (``torch.backends.cudnn.benchmark`` on); fp32 = TF32 off for cuBLAS and cuDNN, fp16 =
  the module and its input in float16 (``.half()``: cuDNN's half RNN, no autocast);
* the step: ``out, _ = rnn(x)``; loss = MSE between ``out`` (fp32) and a fixed random target of its shape;
  ``loss.backward()`` with the input not requiring a gradient (the first layer's dX is skipped, as cuDNN and
  the predictor do for data); gradients set to None before each step (no accumulation kernels);
* CUDA graph: the whole step captured once after 3 warm-up steps on a side stream, replays timed with CUDA
  events (median of ``--replays``), and event nodes inside the graph split forward (+ loss) from backward
  (``graph_forward_s``, ``graph_backward_s``) where torch records them; a capture failure lands in
  ``graph_error`` and the case is timed eagerly instead (CUDA events around each step: GPU time with launch
  gaps) in ``eager_step_s``, which is also measured for every case;
* an error (out of memory, unsupported) is recorded in ``error`` and the sweep goes on.

Columns: cell, layers, directions, precision, hidden, seq, batch, input, params, graph_step_s,
graph_forward_s, graph_backward_s, eager_step_s, eager_forward_s, eager_backward_s, n_replays, graph_error,
error, device, torch, cudnn, gpu, date_utc. Times in seconds. ``--device cpu`` dry-runs the code paths (host
timers, the graph emulated by a call; numbers meaningless). ``calibration/evaluate/rnn_training_accuracy.py`` compares
``predict --mode train`` with the CSV.
"""
from __future__ import annotations

import argparse
import csv
import itertools
import math
import sys
from dataclasses import asdict, dataclass, fields
from typing import Any, Iterator, Sequence

from calibration.networks import gpu_common
from calibration.networks.gpu_common import Budget, summarize, sync, utc_now

DEFAULTS = dict(cells=("lstm", "gru"), layers=(1, 2), directions=(1, 2), precisions=("fp32", "fp16"),
                hidden=(256, 512, 1024), seq=(32, 128), batch=(1, 32), input=(256,))
QUICK = dict(cells=("lstm", "gru"), layers=(1, 2), directions=(1, 2), precisions=("fp32", "fp16"),
             hidden=(8,), seq=(3,), batch=(2,), input=(4,))


@dataclass(frozen=True)
class Case:
    cell: str
    layers: int
    directions: int
    precision: str
    hidden: int
    seq: int
    batch: int
    input: int


@dataclass
class Row:
    cell: str
    layers: int
    directions: int
    precision: str
    hidden: int
    seq: int
    batch: int
    input: int
    params: int = 0
    graph_step_s: float = math.nan
    graph_forward_s: float = math.nan
    graph_backward_s: float = math.nan
    eager_step_s: float = math.nan
    eager_forward_s: float = math.nan
    eager_backward_s: float = math.nan
    n_replays: int = 0
    graph_error: str = ""
    error: str = ""
    device: str = ""
    torch: str = ""
    cudnn: str = ""
    gpu: str = ""
    date_utc: str = ""


COLUMNS = tuple(f.name for f in fields(Row))


def cases(grid: dict) -> Iterator[Case]:
    for cell, layers, dirs, prec, h, s, b, i in itertools.product(
            grid["cells"], grid["layers"], grid["directions"], grid["precisions"], grid["hidden"], grid["seq"],
            grid["batch"], grid["input"]):
        yield Case(cell, layers, dirs, prec, h, s, b, i)


class Step:
    """One case's module, input, target and the step function with its phase marks."""

    def __init__(self, case: Case, device: str):
        import torch

        gpu_common.set_precision_flags("fp32")  # TF32 off (fp16 runs cuDNN's half RNN either way)
        cls = {"lstm": torch.nn.LSTM, "gru": torch.nn.GRU}[case.cell]
        torch.manual_seed(0)
        self.rnn = cls(case.input, case.hidden, num_layers=case.layers, bidirectional=case.directions == 2)
        dtype = torch.float16 if case.precision == "fp16" else torch.float32
        if device == "cpu" and dtype == torch.float16:
            dtype = torch.float32  # CPU dry run: half RNNs are not implemented there
        self.rnn = self.rnn.to(device=device, dtype=dtype).train()
        self.x = torch.randn(case.seq, case.batch, case.input, device=device, dtype=dtype)
        self.target = torch.randn(case.seq, case.batch, case.directions * case.hidden, device=device)
        self.params = sum(p.numel() for p in self.rnn.parameters())
        self.marks: list[Any] = [None, None, None]

    def mark(self, i: int) -> None:
        if self.marks[i] is not None:
            self.marks[i].record()

    def __call__(self) -> None:
        import torch

        for p in self.rnn.parameters():
            p.grad = None
        self.mark(0)
        out, _ = self.rnn(self.x)
        loss = torch.nn.functional.mse_loss(out.float(), self.target)
        self.mark(1)
        loss.backward()
        self.mark(2)


def _events(device: str, external: bool) -> list[Any]:
    if device != "cuda":
        return [None, None, None]
    import torch

    try:
        return [torch.cuda.Event(enable_timing=True, external=external) if external else
                torch.cuda.Event(enable_timing=True) for _ in range(3)]
    except TypeError:  # an older torch: no event nodes inside a graph
        return [None, None, None]


def _phases(step: Step, run, n: int) -> tuple[float, float]:
    """Median forward (+ loss) and backward times from the step's marks over n runs (NaN without marks)."""
    if any(m is None for m in step.marks):
        return math.nan, math.nan
    fwd, bwd = [], []
    for _ in range(n):
        run()
        sync()
        fwd.append(step.marks[0].elapsed_time(step.marks[1]) * 1e-3)
        bwd.append(step.marks[1].elapsed_time(step.marks[2]) * 1e-3)
    return summarize(fwd)["median_s"], summarize(bwd)["median_s"]


def measure(case: Case, device: str, replays: int) -> Row:
    import torch

    row = Row(**asdict(case), device=device, torch=torch.__version__,
              cudnn=str(torch.backends.cudnn.version()) if device == "cuda" else "",
              gpu=torch.cuda.get_device_name() if device == "cuda" else "cpu", date_utc=utc_now())
    try:
        step = Step(case, device)
        row.params = step.params
        for _ in range(3):  # warm-up: cuDNN picks its algorithms, the allocator its blocks
            step()
        sync()
        step.marks = _events(device, external=False)
        row.eager_step_s = summarize(gpu_common.time_each(step, replays))["median_s"]
        row.eager_forward_s, row.eager_backward_s = _phases(step, step, max(5, replays // 2))
        try:
            step.marks = _events(device, external=True)
            graph, _ = gpu_common.capture_graph(step)
            row.graph_step_s = summarize(gpu_common.time_each(graph.replay, replays))["median_s"]
            row.n_replays = replays
            row.graph_forward_s, row.graph_backward_s = _phases(step, graph.replay, max(5, replays // 2))
            del graph
        except Exception as exc:  # noqa: BLE001 - the eager time stays valid
            row.graph_error = f"{type(exc).__name__}: {' '.join(str(exc).split())[:200]}"
    except Exception as exc:  # noqa: BLE001 - recorded, the sweep goes on
        row.error = f"{type(exc).__name__}: {' '.join(str(exc).split())[:200]}"
    finally:
        if device == "cuda":
            torch.cuda.empty_cache()
    return row


def write_csv(rows: Sequence[Row], path: str) -> None:
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS)
        w.writeheader()
        for r in rows:
            w.writerow({k: (repr(v) if isinstance(v, float) else v) for k, v in asdict(r).items()})


def read_csv(path: str) -> list[dict]:
    """Rows with numbers parsed (ints and floats; NaN where nothing was measured)."""
    out = []
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            for k in ("layers", "directions", "hidden", "seq", "batch", "input", "params", "n_replays"):
                r[k] = int(r[k])
            for k in COLUMNS:
                if k.endswith("_s"):
                    r[k] = float(r[k]) if r[k] else math.nan
            out.append(r)
    return out


def _ints(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in text.split(",") if x)


def _words(text: str) -> tuple[str, ...]:
    return tuple(x for x in text.split(",") if x)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True, help="CSV written after every case")
    p.add_argument("--device", choices=("cuda", "cpu"), default="cuda", help="cpu: dry run (numbers meaningless)")
    p.add_argument("--quick", action="store_true", help="tiny sizes (hidden 8, seq 3, batch 2): a dry run's grid")
    for name, parse in (("cells", _words), ("layers", _ints), ("directions", _ints), ("precisions", _words),
                        ("hidden", _ints), ("seq", _ints), ("batch", _ints), ("input", _ints)):
        p.add_argument(f"--{name}", type=parse, default=None)
    p.add_argument("--replays", type=int, default=20)
    p.add_argument("--max-seconds", type=float, default=0.0, help="stop starting cases after this long (0: no limit)")
    a = p.parse_args(argv)
    gpu_common.use_device(a.device)
    grid = dict(QUICK if a.quick else DEFAULTS)
    for k in grid:
        if getattr(a, k) is not None:
            grid[k] = getattr(a, k)
    bad = [c for c in grid["cells"] if c not in ("lstm", "gru")] + \
        [pr for pr in grid["precisions"] if pr not in ("fp32", "fp16")]
    if bad:
        print(f"error: unknown cell or precision: {', '.join(bad)}", file=sys.stderr)
        return 2
    budget = Budget(a.max_seconds)
    rows: list[Row] = []
    todo = list(cases(grid))
    for k, case in enumerate(todo):
        if budget.over():
            print(f"budget spent: {len(todo) - k} cases not run", file=sys.stderr)
            break
        row = measure(case, a.device, max(3, a.replays))
        rows.append(row)
        write_csv(rows, a.out)
        t = row.graph_step_s if not math.isnan(row.graph_step_s) else row.eager_step_s
        print(f"[{k + 1}/{len(todo)}] {case.cell} L{case.layers} D{case.directions} {case.precision} H{case.hidden} "
              f"S{case.seq} B{case.batch}: {t * 1e3:.3f} ms {row.error or row.graph_error}".rstrip(), flush=True)
    print(f"wrote {len(rows)} rows to {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
