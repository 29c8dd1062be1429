"""What the command line's parsers share (predictor/cli.py, gridsweep.py, serve.py): argument types, the one-line
usage error, the calibration a command's options name, and writing its text. No work at import time."""
from __future__ import annotations

import argparse
import sys


def _terminal_columns(fallback: int = 80) -> int:
    """``shutil.get_terminal_size().columns``, found the same way (COLUMNS, else the terminal of stdout, else 80)
    without importing shutil: it imports zlib, bz2 and lzma (~2 ms of every run; argparse makes a formatter on
    every add_argument)."""
    import os

    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    try:
        lines = int(os.environ["LINES"])
    except (KeyError, ValueError):
        lines = 0
    if columns <= 0 or lines <= 0:
        try:
            size = os.get_terminal_size(sys.__stdout__.fileno())
        except (AttributeError, ValueError, OSError):
            size = os.terminal_size((fallback, 24))
        if columns <= 0:
            columns = size.columns or fallback
    return columns


class _Formatter(argparse.HelpFormatter):
    """argparse's help formatter, its width that of :func:`_terminal_columns` (as argparse computes it)."""

    def __init__(self, prog, indent_increment=2, max_help_position=24, width=None):
        super().__init__(prog, indent_increment, max_help_position,
                         _terminal_columns() - 2 if width is None else width)


class Parser(argparse.ArgumentParser):
    """argparse that reports usage errors as one line and exit code 2 (its own convention)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str):  # noqa: D401
        from .output import clean_line

        print("error: " + clean_line(f"{message} (see predict --help)"), file=sys.stderr)
        raise SystemExit(2)

    def parse_args(self, args=None, namespace=None):  # noqa: D102
        ns = super().parse_args(args, namespace)
        from .output import command_files, refuse_overwriting_inputs

        refuse_overwriting_inputs(*command_files(ns))  # before any work: -o m.onnx never replaces the model
        return ns


def shape_arg(text: str) -> tuple[str, tuple[int, ...]]:
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


def positive_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number") from None
    if v <= 0 or v > 2**31:
        raise argparse.ArgumentTypeError(f"'{text}' must be between 1 and 2**31")
    return v


def top_arg(text: str) -> int:
    """--top N, or 'all' (every op)."""
    return sys.maxsize if text.strip().lower() == "all" else positive_int(text)


def name_list(text: str) -> tuple[str, ...]:
    """'v100,h200' -> ('v100', 'h200'), repeats dropped (a sweep); one name, or an existing file, -> (text,)."""
    import os.path

    if "," not in text or os.path.isfile(text):
        return (text,)
    items = [t.strip() for t in text.split(",")]
    if not all(items):
        raise argparse.ArgumentTypeError(f"empty item in '{text}' (expected a comma list A,B,...)")
    return tuple(dict.fromkeys(items))


def positive_int_list(text: str) -> tuple[int, ...]:
    """'1,8,32' -> (1, 8, 32), repeats dropped; a bad item is named: "'x' is not a whole number (item 2 of ...)"."""
    items = text.split(",")
    if len(items) == 1:
        return (positive_int(text),)
    out = []
    for i, item in enumerate(items, 1):
        try:
            out.append(positive_int(item))
        except argparse.ArgumentTypeError as e:
            raise argparse.ArgumentTypeError(f"{e} (item {i} of '{text}')") from None
    return tuple(dict.fromkeys(out))


def trips_arg(text: str) -> tuple[str, int]:
    name, sep, n = text.rpartition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"expected NAME=N, got '{text}'")
    return name, positive_int(n)


def calibration_for(args: argparse.Namespace, profile):
    """The calibration --uncalibrated / --calibration FILE name, else the bundled one (calibrate.calibration_named)."""
    from .calibrate import calibration_named

    return calibration_named(profile, args.calibration, args.uncalibrated)


def emit(text: str, output: str | None) -> None:
    from .output import emit

    emit(text, output)  # atomically, control characters removed; stdout errors are one line


def default_calibration(profile):
    """The fitted calibration bundled for this GPU (or transferred); pure roofline until one exists."""
    from .calibrate import calibration_named

    return calibration_named(profile)
