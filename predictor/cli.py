"""Command line: ``predict MODEL.onnx --gpu NAME`` and its subcommands. No work at import time."""
from __future__ import annotations

import argparse
import sys

SUBCOMMANDS = ("calibrate",)


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors as one line and exit code 2 (its own convention)."""

    def error(self, message: str):  # noqa: D401
        print(f"error: {message} (see predict --help)", file=sys.stderr)
        raise SystemExit(2)


def _shape_arg(text: str) -> tuple[str, tuple[int, ...]]:
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"bad --shape '{text}': expected NAME=D1,D2,...")
    name, dims = text.rsplit("=", 1)
    try:
        values = tuple(int(d) for d in dims.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"bad --shape '{text}': dimensions must be whole numbers") from None
    if not name or any(d <= 0 for d in values):
        raise argparse.ArgumentTypeError(f"bad --shape '{text}': need a name and positive dimensions")
    return name, values


def _positive_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number") from None
    if v <= 0 or v > 2**31:
        raise argparse.ArgumentTypeError(f"'{text}' must be between 1 and 2**31")
    return v


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="predict", description="Predict GPU time of an ONNX network on a hierarchical roofline. "
                "Subcommands: 'predict calibrate ert --out FILE' (measure a GPU's ceilings).")
    p.add_argument("model", help="ONNX file (weights are never read)")
    p.add_argument("--gpu", required=True, help="bundled GPU name (v100, a100, h100, h200, ...) or profile .json")
    p.add_argument("--precision", default="fp32", help="fp32 | tf32 | fp16 | bf16 | fp8 | int8 (default fp32)")
    p.add_argument("--batch", type=_positive_int, default=None,
                   help="binds the leading symbolic dim of every graph input (default 1)")
    p.add_argument("--shape", type=_shape_arg, action="append", default=[], metavar="NAME=D1,D2,...",
                   help="whole shape of one input (repeatable)")
    p.add_argument("--format", choices=("table", "json", "csv"), default="table")
    p.add_argument("--output", "-o", help="write the report to FILE instead of stdout")
    p.add_argument("--top", type=_positive_int, default=15, help="ops listed in the table (default 15)")
    p.add_argument("--strict", action="store_true", help="fail when an op has no cost formula")
    p.add_argument("--uncalibrated", action="store_true", help="pure roofline on the profile's ceilings")
    p.add_argument("--calibration", metavar="FILE", help="a fitted calibration JSON instead of the bundled one")
    return p


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    from .types import PredictorError

    try:
        if argv and argv[0] in SUBCOMMANDS:
            return _subcommand(argv[0], argv[1:])
        return _predict(build_parser().parse_args(argv))
    except PredictorError as e:
        print(f"error: {e}", file=sys.stderr)
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


def _subcommand(name: str, rest: list[str]) -> int:
    if name == "calibrate":
        if not rest or rest[0] != "ert":
            print("error: usage: predict calibrate ert --out PROFILE.json [--quick]", file=sys.stderr)
            return 2
        from calibration.ert.cli import main as ert_main

        return ert_main(rest[1:])
    return 2


def _predict(args: argparse.Namespace) -> int:
    from .calibrate import Uncalibrated
    from .machine.profile import load_profile
    from .predict import predict_file
    from .report import to_csv, to_json, to_table

    shapes = dict(args.shape)
    profile = load_profile(args.gpu)
    if args.uncalibrated:
        calibration = Uncalibrated()
    elif args.calibration:
        from .fitted import load_calibration

        calibration = load_calibration(args.calibration)
    else:
        calibration = _default_calibration(profile)
    pred = predict_file(args.model, profile, precision=args.precision, batch=args.batch, shapes=shapes,
                        calibration=calibration, strict=args.strict)
    if args.format == "json":
        text = to_json(pred, profile)
    elif args.format == "csv":
        text = to_csv(pred)
    else:
        text = to_table(pred, profile, top=args.top)
    if args.output:
        try:
            with open(args.output, "w", encoding="utf-8") as f:
                f.write(text)
        except OSError as e:
            from .types import PredictorError

            raise PredictorError(f"cannot write {args.output}: {e.strerror}") from None
    else:
        sys.stdout.write(text)
    return 0


def _default_calibration(profile):
    """The fitted calibration bundled for this GPU (or transferred); pure roofline until one exists."""
    from .calibrate import Uncalibrated
    from .fitted import bundled_calibration

    return bundled_calibration(profile) or Uncalibrated()


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
