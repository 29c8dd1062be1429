"""``predict MODEL --mode train --gpus N`` and ``--system NAME --nodes N``: the options predictor/cli.py adds to
its parser and the command they run. No work at import time."""
from __future__ import annotations

import argparse
import sys

from ..calibrate import calibration_named
from ..types import PredictorError

STRATEGY_HELP = "ddp (DistributedDataParallel, default) | zero1 (optimizer state sharded) | fsdp (full shard)"


def _count_list(text: str) -> tuple[int, ...]:
    items = text.split(",")
    out = []
    for i, item in enumerate(items, 1):
        try:
            v = int(item)
        except ValueError:
            where = f" (item {i} of '{text}')" if len(items) > 1 else ""
            raise argparse.ArgumentTypeError(f"'{item}' is not a whole number{where}") from None
        if v <= 0 or v > 10**7:
            where = f" (item {i} of '{text}')" if len(items) > 1 else ""
            raise argparse.ArgumentTypeError(f"'{item}' must be between 1 and 10000000{where}")
        out.append(v)
    return tuple(dict.fromkeys(out))


def _positive_float(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number") from None
    if not 0 < v <= 1e5:
        raise argparse.ArgumentTypeError(f"'{text}' must be in (0, 100000]")
    return v


def _rate(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number") from None
    if not 0 < v <= 1e12:
        raise argparse.ArgumentTypeError(f"'{text}' must be a number of samples/s in (0, 1e12]")
    return v


def _positive_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number") from None
    if not 0 < v <= 10**7:
        raise argparse.ArgumentTypeError(f"'{text}' must be between 1 and 10000000")
    return v


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The multi-GPU options of ``predict``; ``--gpu`` becomes optional (a --system names its GPU)."""
    action = p._option_string_actions.get("--gpu")  # noqa: SLF001 (argparse keeps no public handle)
    if action is not None:
        action.required = False
    g = p.add_argument_group("multi-GPU training (--mode train)")
    g.add_argument("--gpus", type=_count_list, default=None, metavar="N[,N...]",
                   help="data-parallel GPU counts: one value, or a comma list that sweeps (1,8,64,...)")
    g.add_argument("--system", default=None, metavar="NAME|FILE.json",
                   help="the machine: dgx1-v100, dgx2-v100, dgx-a100, dgx-h100, hgx-h200, summit, perlmutter, "
                   "ib-cluster, or a system .json (default: the DGX/HGX node of --gpu)")
    g.add_argument("--nodes", type=_count_list, default=None, metavar="N[,N...]",
                   help="whole nodes of --system (GPUs = nodes x GPUs per node); a comma list sweeps")
    g.add_argument("--bucket-mb", type=_positive_float, default=None, metavar="MB",
                   help="DDP gradient bucket size in MiB (default 25)")
    g.add_argument("--parallel", choices=("ddp", "zero1", "fsdp"), default=None, help=STRATEGY_HELP)
    g.add_argument("--grad-comm", choices=("native", "fp16", "bf16"), default=None,
                   help="gradient all-reduce dtype: native (the gradients' own) or a 16-bit compression hook")
    g.add_argument("--accumulate", type=_positive_int, default=None, metavar="K",
                   help="gradient accumulation: K micro-batches per optimizer step (no_sync on the first K-1)")
    g.add_argument("--hybrid-group", type=_positive_int, default=None, metavar="G",
                   help="what-if beside synchronous DP: synchronous groups of G GPUs exchanging asynchronously")
    g.add_argument("--no-nvls", action="store_true", default=None,
                   help="NCCL without NVLink SHARP (NCCL_NVLS_ENABLE=0)")
    g.add_argument("--input-rate", type=_rate, default=None, metavar="SAMPLES/S",
                   help="what-if: samples per second one node's input pipeline (loading, decoding, augmentation) "
                   "delivers to all its GPUs; a step is never shorter than the node's samples over this rate")


def wants_distributed(args: argparse.Namespace) -> bool:
    return any(getattr(args, k, None) is not None for k in
               ("gpus", "system", "nodes", "bucket_mb", "parallel", "grad_comm", "accumulate", "hybrid_group",
                "no_nvls", "input_rate"))


def _single(values, what: str):
    if values is None:
        return None
    if isinstance(values, (tuple, list)):
        if len(values) > 1:
            raise PredictorError(f"multi-GPU prediction takes one {what} (got {', '.join(map(str, values))}); "
                                 f"sweep GPU counts with --gpus A,B,...")
        return values[0] if values else None
    return values


def _counts(args, system) -> list[int]:
    from .scaling import log_counts

    if args.gpus and args.nodes:
        raise PredictorError("give --gpus or --nodes, not both")
    if args.nodes:
        return [n * system.gpus_per_node for n in args.nodes]
    if args.gpus:
        return list(args.gpus)
    return log_counts(system)


def run(args: argparse.Namespace) -> int:
    """Predict the data-parallel scaling of ``args.model`` and write it (table/JSON/CSV, chart)."""
    from ..machine.profile import load_profile
    from ..types import MemLevel
    from . import report
    from .ddp import DPConfig
    from .gradients import step_profile
    from .scaling import sweep
    from .system import load_system, single_node

    if getattr(args, "mode", None) != "train":
        raise PredictorError("--gpus, --system and --nodes predict data-parallel training: add --mode train")
    if getattr(args, "optimize", None):
        raise PredictorError("--optimize applies to inference (--mode infer) only")
    gpu = _single(args.gpu, "GPU")
    precision = _single(args.precision, "precision") or "fp32"
    batch = _single(args.batch, "batch")
    if args.system:
        system = load_system(args.system)
        if gpu and gpu.lower() != system.gpu.lower():
            prof_check = load_profile(gpu)
            if prof_check.name != load_profile(system.gpu).name:
                raise PredictorError(f"--gpu {gpu} does not match {system.name}'s GPU ({system.gpu}); leave --gpu "
                                     f"out or give a system .json with that GPU")
    elif gpu:
        system = single_node(load_profile(gpu).name, 1)
    else:
        raise PredictorError("give --gpu NAME or --system NAME")
    if args.plot:
        from ..plots.draw import check_plot_path

        check_plot_path(args.plot)
    counts = _counts(args, system)
    if args.hybrid_group and any(n % args.hybrid_group for n in counts if n > args.hybrid_group):
        raise PredictorError(f"--hybrid-group {args.hybrid_group} must divide every GPU count ({counts})")
    profile = load_profile(system.gpu)
    cfg = DPConfig(strategy=args.parallel or "ddp", bucket_mb=args.bucket_mb or 25.0,
                   grad_comm=args.grad_comm or "native", accumulate=args.accumulate or 1, nvls=not args.no_nvls,
                   input_rate=args.input_rate or 0.0)
    cfg.check()
    from .collectives import layout_for

    for n in counts:
        layout_for(system, n)  # a count the system cannot hold is an error before any prediction
    cal = calibration_named(profile, args.calibration, args.uncalibrated)
    fused = getattr(args, "fused_optimizer", None)
    impl = getattr(args, "impl", None) or ("foreach" if fused is False else "fused")
    sp = step_profile(args.model, profile, precision=precision, batch=batch, shapes=dict(args.shape),
                      calibration=cal, optimizer=args.optimizer or "adamw", impl=impl,
                      loss=args.loss or "cross_entropy", strict=args.strict)
    sc = sweep([sp], system, counts, cfg, profile.bandwidth(MemLevel.HBM), args.hybrid_group, gpu=profile.name)
    text = report.to_json(sc) if args.format == "json" else report.to_csv(sc) if args.format == "csv" \
        else report.to_table(sc)
    if args.output:
        try:
            with open(args.output, "w", encoding="utf-8") as f:
                f.write(text)
        except OSError as e:
            raise PredictorError(f"cannot write {args.output}: {e.strerror}") from None
    else:
        sys.stdout.write(text)
    if args.plot:
        from .plot import save_scaling_chart

        save_scaling_chart(sc, args.plot)
    return 0


__all__ = ["add_arguments", "wants_distributed", "run"]
