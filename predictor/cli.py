"""Command line: ``predict MODEL.onnx --gpu NAME`` and its subcommands. No work at import time."""
from __future__ import annotations

import argparse
import sys

from .cli_common import Parser as _Parser  # the argument types and helpers every subcommand shares
from .cli_common import calibration_for as _calibration_for
from .cli_common import default_calibration as _default_calibration
from .cli_common import emit as _emit
from .cli_common import name_list as _name_list
from .cli_common import positive_int as _positive_int
from .cli_common import positive_int_list as _positive_int_list
from .cli_common import shape_arg as _shape_arg
from .cli_common import top_arg as _top_arg
from .cli_common import trips_arg as _trips_arg

SUBCOMMANDS = ("calibrate", "validate", "compare", "sweep", "serve")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="predict", description="Predict GPU time of an ONNX network on a hierarchical roofline. "
                "Subcommands: 'predict calibrate --out DIR' (profile and calibration of the local GPU), "
                "'predict calibrate ert --out FILE' (measure a GPU's ceilings), "
                "'predict validate MODEL --gpu G --ncu SAMPLES.csv' (predicted vs measured), "
                "'predict compare A.onnx [B.onnx] --gpu G [--vs-precision P | --vs-batch N | --vs-gpu G2]'.")
    p.add_argument("model", help="ONNX file (weights are never read)")
    p.add_argument("--gpu", required=True, type=_name_list,
                   help="bundled GPU name (v100, a100, h100, h200, ...) or profile .json; a comma list sweeps")
    p.add_argument("--precision", default="fp32", type=_name_list,
                   help="fp32 | tf32 | fp16 | bf16 | amp | amp-bf16 | fp8 | int8 (default fp32); a comma list sweeps")
    p.add_argument("--batch", type=_positive_int_list, default=None,
                   help="binds the leading symbolic dim of every graph input (default 1); a comma list sweeps")
    p.add_argument("--shape", type=_shape_arg, action="append", default=[], metavar="NAME=D1,D2,...",
                   help="whole shape of one input (repeatable)")
    p.add_argument("--format", choices=("table", "json", "csv"), default="table")
    p.add_argument("--output", "-o", help="write the report to FILE instead of stdout")
    p.add_argument("--top", type=_top_arg, default=15, help="ops listed in the table (default 15; 'all': every op)")
    p.add_argument("--strict", action="store_true", help="fail when an op has no cost formula")
    p.add_argument("--allow-partial", action="store_true",
                   help="print the prediction even when most ops have unknown shapes (by default an error)")
    p.add_argument("--uncalibrated", action="store_true", help="pure roofline on the profile's ceilings")
    p.add_argument("--calibration", metavar="FILE", help="a fitted calibration JSON instead of the bundled one")
    p.add_argument("--plot", metavar="FILE", help="write the hierarchical roofline chart to FILE (.png or .svg) "
                   "and the time-based roofline chart beside it (FILE with a -time suffix)")
    p.add_argument("--optimize", metavar="PASS[,PASS]|all", default=None,
                   help="graph optimisation passes applied before costing, as a fusing compiler would: bn_fold, "
                   "conv_bias_act, attention, elementwise, channels_last, or all (TorchInductor-like: every pass "
                   "but conv_bias_act); default none")
    p.add_argument("--mode", choices=("infer", "train"), default=None,
                   help="infer: one forward (default); train: one training step, forward + backward + optimizer "
                   "(predictor/train)")
    p.add_argument("--optimizer", choices=("sgd", "adam", "adamw", "lamb"), default=None,
                   help="--mode train: the optimizer (default adamw; sgd with momentum)")
    p.add_argument("--fused-optimizer", action=argparse.BooleanOptionalAction, default=None,
                   help="--mode train: one multi-tensor kernel per step (fused=True, the default) or PyTorch's "
                   "foreach kernels (--no-fused-optimizer)")
    p.add_argument("--loss", choices=("cross_entropy", "mse"), default=None,
                   help="--mode train: the loss on the first output (default cross_entropy)")
    from .distributed.cli import add_arguments as _add_distributed  # --gpus/--system/--nodes (multi-GPU training)

    _add_distributed(p)
    _surface_args(p)
    p.add_argument("--branch", choices=("then", "else", "max"), default="max",
                   help="an If whose condition is data: cost its then or else branch, or both and keep the larger "
                   "(max, the default; both times are reported)")
    p.add_argument("--loop-trips", type=_trips_arg, action="append", default=[], metavar="NAME=N",
                   help="trip count of the Loop node NAME where it is data (repeatable)")
    return p


def _surface_args(p: argparse.ArgumentParser) -> None:
    """--report, --quiet, --version (predictor/html_report.py, predictor/progress.py)."""
    from . import __version__

    p.add_argument("--report", metavar="FILE.html", help="write a self-contained HTML report (summary, sortable "
                   "per-op table, interactive roofline charts) to FILE.html")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar (there is none when stderr is not "
                   "a terminal)")
    p.add_argument("--version", action="version", version=f"predict {__version__}")


def _common_args(p: argparse.ArgumentParser, formats=("table", "json")) -> None:
    p.add_argument("--gpu", required=True, help="bundled GPU name or profile .json")
    p.add_argument("--precision", default="fp32", help="fp32 | tf32 | fp16 | bf16 | amp | amp-bf16 | fp8 | int8 (default fp32)")
    p.add_argument("--batch", type=_positive_int, default=None, help="leading symbolic dim of every input")
    p.add_argument("--shape", type=_shape_arg, action="append", default=[], metavar="NAME=D1,D2,...")
    p.add_argument("--format", choices=formats, default="table")
    p.add_argument("--output", "-o", help="write the report to FILE instead of stdout")
    p.add_argument("--top", type=_top_arg, default=15, help="ops listed in the table (default 15; 'all': every op)")
    p.add_argument("--uncalibrated", action="store_true", help="pure roofline on the profile's ceilings")
    p.add_argument("--calibration", metavar="FILE", help="a fitted calibration JSON instead of the bundled one")
    p.add_argument("--plot", metavar="FILE", help="charts: FILE (hierarchical roofline) and FILE-time (time-based)")
    p.add_argument("--optimize", metavar="PASS[,PASS]|all", default=None,
                   help="graph optimisation passes (see predict --help); default none")
    _surface_args(p)
    p.add_argument("--allow-partial", action="store_true",
                   help="go on when most ops have unknown shapes (by default an error)")


def build_validate_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="predict validate", description="Predicted vs measured (Nsight Compute CSV) per op and network.")
    p.add_argument("model", help="ONNX file the samples were measured from")
    p.add_argument("--ncu", required=True, metavar="SAMPLES.csv", help="ncu --csv output (raw or details page)")
    p.add_argument("--allow-mismatch", action="store_true",
                   help="compare even when the CSV looks measured at another precision, batch size or network "
                   "(by default an error)")
    _common_args(p)
    return p


def build_compare_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="predict compare", description="Compare two models, or one model under two settings.")
    p.add_argument("model", help="ONNX file A")
    p.add_argument("model_b", nargs="?", help="ONNX file B (default: A again, under the --vs-* settings)")
    _common_args(p)
    p.add_argument("--vs-precision", metavar="P", help="B's precision (default: --precision)")
    p.add_argument("--vs-batch", type=_positive_int, metavar="N", help="B's batch (default: --batch)")
    p.add_argument("--vs-gpu", metavar="NAME", help="B's GPU (default: --gpu)")
    p.add_argument("--vs-optimize", metavar="PASS[,PASS]|all",
                   help="B's optimisation passes (default: --optimize); 'none' for none")
    return p


def main(argv: list[str] | None = None) -> int:
    """``predict``'s exit code for ``argv``; without ``argv`` (the program itself: the console script, ``python -m``)
    the arguments are ``sys.argv`` and the process ends here (predictor/fastexit.py)."""
    if argv is not None:
        return _main(list(argv))
    from . import fastexit

    fastexit.activate()
    rc = _main(sys.argv[1:])
    fastexit.exit_now(rc)
    return rc


def _main(argv: list[str]) -> int:
    from .types import PredictorError

    from .output import clean_line, staged

    try:
        with staged():  # every file of the command is renamed into place together, or none
            if argv and argv[0] in SUBCOMMANDS:
                return _subcommand(argv[0], argv[1:])
            args = build_parser().parse_args(argv)
            if args.branch == "max" and not args.loop_trips:  # the defaults: no options to set
                return _predict(args)
            from .graph.control_flow import options as control_flow_options

            with control_flow_options(args.branch, dict(args.loop_trips)):
                return _predict(args)
    except PredictorError as e:
        _print_error(clean_line(str(e)))  # one line without control characters, whatever names it quotes
        return 2
    except SystemExit as e:
        return int(e.code or 0)
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    except RecursionError:
        print("error: the model is nested too deeply to analyse", file=sys.stderr)
        return 2
    except MemoryError:
        print("error: out of memory while analysing the model", file=sys.stderr)
        return 2


def _print_error(line: str) -> None:
    try:
        print("error: " + line, file=sys.stderr)
    except (OSError, ValueError, AttributeError):  # stderr closed or full: the exit code still tells
        pass


def _subcommand(name: str, rest: list[str]) -> int:
    if name == "calibrate":
        if not rest:
            print("error: usage: predict calibrate --out DIR [--name NAME] | predict calibrate ert --out PROFILE.json "
                  "[--quick] (see predict calibrate --help)", file=sys.stderr)
            return 2
        if rest[0] == "ert":
            from .measure.ert.cli import main as ert_main

            return ert_main(rest[1:])
        # ERT + a kernel subset on a GPU machine: the kernel sweeps and their fit are the lab's
        # (calibration/quick_calibrate.py), run as its own process so that the shipped tool imports none of it
        import importlib.util
        import subprocess

        from .types import PredictorError

        if importlib.util.find_spec("calibration") is None:
            raise PredictorError("predict calibrate needs the lab (calibration/, installed with this project); "
                                 "'predict calibrate ert' measures the ceilings alone")
        return subprocess.call([sys.executable, "-m", "calibration.quick_calibrate", *rest])
    if name == "validate":
        return _validate(build_validate_parser().parse_args(rest))
    if name == "compare":
        return _compare(build_compare_parser().parse_args(rest))
    if name == "sweep":
        from .gridsweep import cli_main

        return cli_main(rest)
    if name == "serve":  # LLM serving: prefill, decode, tokens/s, KV cache (predictor/serve.py)
        from .serve import main as serve_main

        return serve_main(rest)
    return 2


def _html_report(args: argparse.Namespace, result) -> None:
    """--report FILE.html: the self-contained page of an API result (predictor/html_report.py)."""
    if getattr(args, "report", None):
        from .html_report import page_for, write

        write(page_for(result), args.report)


def _check_report(args: argparse.Namespace) -> None:
    if getattr(args, "report", None):
        from .html_report import check_path

        check_path(args.report)


def _check_plot(path: str | None) -> None:
    if path:
        from .plots.draw import check_plot_path

        check_plot_path(path)


def _validate(args: argparse.Namespace) -> int:
    from .machine.profile import load_profile
    from .plots import write_charts
    from .validate import to_json, to_table, validate

    if args.optimize:
        from .types import PredictorError

        raise PredictorError("validate compares with samples of the eager runtime: --optimize is not supported there")
    _check_plot(args.plot)
    _check_report(args)
    profile = load_profile(args.gpu)
    from .progress import working

    with working(f"validating {args.model}", enabled=not args.quiet):
        v = validate(args.model, profile, args.ncu, args.precision, args.batch,
                     calibration=_calibration_for(args, profile), shapes=dict(args.shape),
                     allow_mismatch=args.allow_mismatch)
    from .coverage import require_coverage

    require_coverage(v.prediction, args.allow_partial)
    _emit(to_json(v, profile) if args.format == "json" else to_table(v, profile, top=args.top), args.output)
    from .api import ValidationResult

    _html_report(args, ValidationResult(v, profile))
    if args.plot:
        p = v.prediction
        write_charts([v.predicted, v.measured], profile, p.precision, args.plot,
                     title=f"{p.model} {p.precision} batch {p.batch} on {profile.name}: predicted (filled) "
                           f"-> measured (hollow)")
    return 0


def _compare(args: argparse.Namespace) -> int:
    from .compare import Side, compare, labels, to_json, to_table
    from .machine.profile import load_profile
    from .plots import write_charts
    from .plots.data import series_from_prediction
    from .predict import predict_file
    from .types import PredictorError

    if args.model_b is None and not (args.vs_precision or args.vs_batch or args.vs_gpu or args.vs_optimize):
        raise PredictorError("compare needs a second model or one of --vs-precision, --vs-batch, --vs-gpu, "
                             "--vs-optimize")
    _check_plot(args.plot)
    _check_report(args)
    shapes = dict(args.shape)
    profile_a = load_profile(args.gpu)
    profile_b = load_profile(args.vs_gpu) if args.vs_gpu else profile_a
    prec_b = args.vs_precision or args.precision
    batch_b = args.vs_batch or args.batch
    model_b = args.model_b or args.model
    opt_a = args.optimize or ()
    opt_b = args.vs_optimize if args.vs_optimize is not None else opt_a
    pa = predict_file(args.model, profile_a, precision=args.precision, batch=args.batch, shapes=shapes,
                      calibration=_calibration_for(args, profile_a), optimize=opt_a)
    pb = predict_file(model_b, profile_b, precision=prec_b, batch=batch_b, shapes=shapes,
                      calibration=_calibration_for(args, profile_b), optimize=opt_b)
    desc = lambda p, prof: {"model": p.model, "gpu": prof.name, "precision": p.precision, "batch": p.batch,  # noqa: E731
                            "optimize": ",".join(p.optimizations)}
    la, lb = labels(desc(pa, profile_a), desc(pb, profile_b))
    from .coverage import require_coverage

    require_coverage(pa, args.allow_partial)
    require_coverage(pb, args.allow_partial)
    c = compare(Side(la, pa, profile_a), Side(lb, pb, profile_b))
    _emit(to_json(c) if args.format == "json" else to_table(c, top=args.top), args.output)
    from .api import Comparison, Prediction

    _html_report(args, Comparison(c, Prediction(pa, profile_a), Prediction(pb, profile_b)))
    if args.plot:
        write_charts([series_from_prediction(pa, profile_a, la), series_from_prediction(pb, profile_b, lb)],
                     profile_a, (pa.precision, pb.precision), args.plot,
                     title=f"{pa.model}: {la} (filled) -> {lb} (hollow), ceilings of {profile_a.name}")
    return 0


def _predict(args: argparse.Namespace) -> int:
    import gc

    was_enabled = gc.isenabled()  # (a program run keeps it off to its end: predictor/fastexit.py)
    gc.disable()  # an analysis allocates many small objects and frees little: no cycle collections
    try:
        from .distributed.cli import wants_distributed

        if wants_distributed(args):  # data-parallel training on several GPUs (predictor/distributed)
            from .distributed.cli import run as _run_distributed

            return _run_distributed(args)
        if not args.gpu:
            build_parser().error("the following arguments are required: --gpu")
        sweep = len(args.gpu) > 1 or len(args.precision) > 1 or len(args.batch or ()) > 1
        args = _check_mode(args)
        if sweep:
            return _sweep(args)
        return _predict_body(_single_setting(args))
    finally:
        if was_enabled:
            gc.enable()


def _check_mode(args: argparse.Namespace) -> argparse.Namespace:
    """--mode train takes the training options (as predict_training_graph's keywords: optimizer, impl, loss);
    inference leaves ``mode`` and them unset (None), so a sweep passes predict_graph no option it does not take.
    Returns a copy of ``args`` with ``impl`` (from --fused-optimizer) and ``mode`` resolved (args is left as parsed)."""
    from .types import PredictorError

    train_opts = [f"--{k.replace('_', '-')}" for k in ("optimizer", "fused_optimizer", "loss")
                  if getattr(args, k, None) is not None]
    fused = getattr(args, "fused_optimizer", None)
    mode = "train" if getattr(args, "mode", None) == "train" else None
    if mode is None and train_opts:
        raise PredictorError(f"{', '.join(train_opts)} appl{'ies' if len(train_opts) == 1 else 'y'} to --mode "
                             f"train only")
    return argparse.Namespace(**{**vars(args), "mode": mode,
                                 "impl": None if fused is None else ("fused" if fused else "foreach")})


def _single_setting(args: argparse.Namespace) -> argparse.Namespace:
    """One value in each list option: today's single prediction, with scalar --gpu/--precision/--batch (a copy)."""
    return argparse.Namespace(**{**vars(args), "gpu": args.gpu[0], "precision": args.precision[0],
                                 "batch": args.batch[0] if args.batch else None})


def _sweep(args: argparse.Namespace) -> int:
    """Comma lists: one row per (GPU, precision, batch) setting (predictor/sweep.py)."""
    from .machine.profile import load_profile
    from .sweep import require_success, run_sweep, to_csv, to_json, to_table

    _check_plot(args.plot)
    _check_report(args)
    profiles = [load_profile(g) for g in args.gpu]
    fixed = _calibration_for(args, profiles[0]) if args.uncalibrated or args.calibration else None
    # per-prediction options of predict_graph that this parser may have (None: not given, not passed)
    extra = {k: getattr(args, k) for k in ("optimize", "mode", "optimizer", "impl", "loss")
             if getattr(args, k, None) is not None}
    from .progress import bar, wanted

    with bar(len(profiles) * len(args.precision) * len(args.batch or (None,)), "sweep",
             enabled=wanted(args.quiet)) as progress:
        sweep = require_success(run_sweep(
            args.model, profiles, args.precision, args.batch or (None,),
            calibration_for=(lambda _p: fixed) if fixed is not None else _default_calibration,
            shapes=dict(args.shape), strict=args.strict, on_setting=progress.update, **extra))
    text = to_json(sweep) if args.format == "json" else to_csv(sweep) if args.format == "csv" else to_table(sweep)
    _emit(text, args.output)
    from .api import SweepResult

    _html_report(args, SweepResult(sweep))
    if args.plot:
        from .plots.draw_sweep import save_sweep_chart
        from .plots.sweep import sweep_chart

        save_sweep_chart(sweep_chart(sweep.rows, title=f"{sweep.model}: predicted time and throughput vs batch "
                                                       f"size"), args.plot)
    return 0


def _predict_body(args: argparse.Namespace) -> int:
    from .machine.profile import load_profile
    from .predict import predict_file
    from .report import to_csv, to_json, to_table

    shapes = dict(args.shape)
    _check_plot(args.plot)
    _check_report(args)
    profile = load_profile(args.gpu)
    calibration = _calibration_for(args, profile)
    if getattr(args, "mode", None) == "train" and getattr(args, "optimize", None):
        from .types import PredictorError

        raise PredictorError("--optimize applies to inference (--mode infer) only")
    if getattr(args, "mode", None) == "train":  # one training step (predictor/train)
        from .progress import train_progress
        from .train import predict_training_file

        with train_progress(args.model, enabled=not getattr(args, "quiet", False)):
            pred = predict_training_file(args.model, profile, precision=args.precision, batch=args.batch,
                                         shapes=shapes, calibration=calibration, strict=args.strict,
                                         optimizer=args.optimizer or "adamw", impl=args.impl or "fused",
                                         loss=args.loss or "cross_entropy", optimize=args.optimize or ())
    else:
        pred = predict_file(args.model, profile, precision=args.precision, batch=args.batch, shapes=shapes,
                            calibration=calibration, strict=args.strict, optimize=args.optimize or ())
    from .coverage import require_coverage
    from .fastexit import keep

    keep(pred)  # freed by the process's end (a program run), not object by object
    require_coverage(pred, args.allow_partial)
    if args.format == "json":
        text = to_json(pred, profile)
    elif args.format == "csv":
        text = to_csv(pred)
    else:
        text = to_table(pred, profile, top=args.top)
    _emit(text, args.output)
    if args.plot:
        from .plots import series_from_prediction, write_charts

        if getattr(pred, "mode", "infer") == "train":  # one series per phase (forward filled)
            from .train.plots import phase_series

            series = phase_series(pred, profile)
            what = "training step: forward (filled), backward (hollow), optimizer (pale)"
        else:
            series = [series_from_prediction(pred, profile)]
            what = "predicted"
        write_charts(series, profile, pred.precision, args.plot,
                     title=f"{pred.model} {pred.precision} batch {pred.batch} on {profile.name} ({what}, "
                           f"{pred.calibration})")
    if getattr(args, "report", None):
        from .api import Prediction

        _html_report(args, Prediction(pred, profile))
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
