"""Writing what ``predict`` produces, safely: reports to stdout or a file, charts, CSV cells and JSON text.

- Files are written atomically: a temporary file in the destination's folder, then ``os.replace`` (through
  a symlink, the file it points at; a destination that is no regular file, ``/dev/null`` or a FIFO, is
  written in place: a rename would replace the device node). Inside
  :func:`staged` (the CLI runs each command in one) every file of the command (the report and the charts) is
  written to its temporary first and all are renamed only when the command succeeds, so a failure (a full
  disk, a chart that cannot be drawn) leaves no file half-written and no stale report beside missing charts.
- An output that is, or resolves to (symlink, hard link: ``os.path.samefile``), one of the command's inputs
  is refused before any work (:func:`refuse_overwriting_inputs`).
- stdout that is closed, full (``/dev/full``) or a closed pipe (``| head``) is a one-line error, not a
  traceback.
- Names in tables and error messages lose their control characters (ANSI escape sequences, carriage
  returns, bidirectional overrides): :func:`clean`.
- CSV cells go through the csv module (quoting; a line break or carriage return in a name never splits a
  row) and a text cell starting with ``= + - @`` (a spreadsheet formula) gets a leading ``'``:
  :func:`csv_writer`.
- JSON is standard JSON: a value that is not finite (an overflow, an undefined ratio) is written as
  ``null`` (never ``Infinity``/``NaN``). Reports are laid out one top-level key per line and one list item
  per line, each item encoded by the stdlib's C encoder (``json.dumps(indent=...)`` runs the pure-Python
  encoder: 5-10x slower on a large report): :func:`dumps_json`.
"""
from __future__ import annotations

import contextlib
import json
import math
import os
import re
import stat
import sys
from typing import Callable, Iterable, Iterator

from .types import PredictorError

# C0 controls but tab and newline, DEL, C1 controls, and the bidirectional overrides and isolates
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
# compiled on first use by re's cache (a plain report needs neither: ~1.3M instructions each at start-up)
_CONTROL_CELL = "[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]"
_ANSI = r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])"
_FORMULA_PREFIX = ("=", "+", "-", "@")


def clean(text: str) -> str:
    """``text`` without ANSI escape sequences and control characters (tab and newline kept)."""
    if not _CONTROL.search(text):
        return text
    return _CONTROL.sub("", re.sub(_ANSI, "", text))


def clean_line(text: str) -> str:
    """One line: control characters and ANSI sequences removed, runs of white space (newlines) as one space."""
    return " ".join(clean(text).split())


# ------------------------------------------------------------------------------------------ CSV
def safe_cell(v):
    """A CSV cell: text without control characters and with a formula prefix neutralised (``'=cmd``);
    numbers (and text that is a number, ``-1.5``) as they are."""
    if not isinstance(v, str):
        return v
    if re.search(_CONTROL_CELL, v):
        v = re.sub(_CONTROL_CELL, " ", re.sub(_ANSI, "", v))
    if v.startswith(_FORMULA_PREFIX):
        try:
            float(v)
        except ValueError:
            return "'" + v
    return v


class _SafeWriter:
    def __init__(self, buf):
        import csv  # only for CSV output

        self._w = csv.writer(buf, lineterminator="\n")

    def writerow(self, row: Iterable):
        return self._w.writerow([safe_cell(v) for v in row])

    def writerows(self, rows: Iterable[Iterable]):
        for r in rows:
            self.writerow(r)


def csv_writer(buf) -> _SafeWriter:
    """``csv.writer(buf, lineterminator="\\n")`` whose cells pass through :func:`safe_cell`."""
    return _SafeWriter(buf)


# ------------------------------------------------------------------------------------------ JSON
def _finite(obj):
    """``obj`` with every non-finite float replaced by None (the slow path: only when one exists)."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    return obj


_ENC = json.JSONEncoder(allow_nan=False, separators=(", ", ": "))


def _encode(obj) -> str:
    try:
        return _ENC.encode(obj)
    except ValueError:  # a non-finite float: null, standard JSON
        return _ENC.encode(_finite(obj))


def dumps_json(doc) -> str:
    """Standard JSON text of a report (a dict), newline-terminated: one top-level key per line, a list value
    one item per line, every value C-encoded; non-finite numbers as null."""
    if not isinstance(doc, dict):
        return _encode(doc) + "\n"
    lines = []
    items = list(doc.items())
    for i, (k, v) in enumerate(items):
        key = _encode(str(k))
        comma = "," if i < len(items) - 1 else ""
        if isinstance(v, (list, tuple)) and v:
            inner = ",\n".join("    " + _encode(x) for x in v)
            lines.append(f"  {key}: [\n{inner}\n  ]{comma}")
        elif isinstance(v, dict) and v and any(isinstance(x, (dict, list, tuple)) for x in v.values()):
            sub = list(v.items())
            inner = ",\n".join(f"    {_encode(str(a))}: {_encode(b)}" for a, b in sub)
            lines.append(f"  {key}: {{\n{inner}\n  }}{comma}")
        else:
            lines.append(f"  {key}: {_encode(v)}{comma}")
    return "{\n" + "\n".join(lines) + "\n}\n"


# ------------------------------------------------------------------------------------------ files
_STAGE: list[tuple[str, str]] | None = None  # (temporary, destination) of the running command


def _temp_beside(path: str) -> str:
    d = os.path.dirname(os.path.abspath(path))
    base = os.path.basename(path)
    import tempfile  # only when a file is written

    fd, tmp = tempfile.mkstemp(prefix=f".{base}.", suffix=".tmp" + os.path.splitext(base)[1], dir=d)
    os.close(fd)
    return tmp


def _unlink(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


def _replaceable(path: str) -> str | None:
    """Where an atomic rename may put ``path``: the file a symlink points at (the link stays), or ``path``
    itself when nothing is there; None when it is not a regular file (``/dev/null``, ``/dev/stdout``, a FIFO:
    those are written in place, a rename would replace the device node itself)."""
    try:
        st = os.stat(path)  # follows symlinks (/dev/stdout -> /proc/self/fd/1 -> a pipe)
    except FileNotFoundError:
        return os.path.realpath(path)  # a new file (or a dangling symlink: its target is created)
    except OSError:
        return None
    return os.path.realpath(path) if stat.S_ISREG(st.st_mode) else None


def write_file(path: str, write: Callable[[str], None]) -> None:
    """Write ``path`` through ``write(temporary_path)``, then rename (now, or when the staged command ends).
    A destination that is not a regular file (a device, a FIFO) is written in place.

    Any OSError becomes a one-line PredictorError naming ``path``; the temporary is removed."""
    dest = _replaceable(path)
    if dest is None:
        if os.path.isdir(path):
            raise PredictorError(f"cannot write {path}: it is a directory")
        try:
            write(path)
        except OSError as e:
            raise PredictorError(f"cannot write {path}: {e.strerror or e}") from None
        return
    try:
        tmp = _temp_beside(dest)
    except OSError as e:
        raise PredictorError(f"cannot write {path}: {e.strerror or e}") from None
    try:
        write(tmp)
        with contextlib.suppress(OSError):
            os.chmod(tmp, 0o666 & ~_umask())
        if _STAGE is None:
            os.replace(tmp, dest)
        else:
            _STAGE.append((tmp, dest))
    except OSError as e:
        _unlink(tmp)
        raise PredictorError(f"cannot write {path}: {e.strerror or e}") from None
    except BaseException:
        _unlink(tmp)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_text(path: str, text: str) -> None:
    def w(tmp: str) -> None:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            with contextlib.suppress(OSError):  # a device or pipe written in place has no fsync
                os.fsync(f.fileno())

    write_file(path, w)


@contextlib.contextmanager
def staged() -> Iterator[None]:
    """Files written inside are renamed into place together when the block ends without an exception;
    otherwise their temporaries are removed and no destination is touched."""
    global _STAGE
    if _STAGE is not None:  # inside another staged block: its end renames these too
        yield
        return
    outer, _STAGE = _STAGE, []
    pending = _STAGE
    try:
        yield
    except BaseException:
        for tmp, _ in pending:
            _unlink(tmp)
        raise
    finally:
        _STAGE = outer
    for tmp, path in pending:  # what would make a rename fail (or replace what is no file), before any rename
        if os.path.isdir(path) or _replaceable(path) != os.path.realpath(path):
            for t, _ in pending:
                _unlink(t)
            raise PredictorError(f"cannot write {path}: it is a directory")
    for k, (tmp, path) in enumerate(pending):
        try:
            os.replace(tmp, path)
        except OSError as e:
            for t, _ in pending[k:]:
                _unlink(t)
            raise PredictorError(f"cannot write {path}: {e.strerror or e}") from None


def write_stdout(text: str) -> None:
    """``text`` to stdout, flushed; closed stdout, a full device and a closed pipe are one-line errors."""
    out = sys.stdout
    if out is None:
        raise PredictorError("cannot write the report: stdout is closed (use -o FILE)")
    try:
        out.write(text)
        out.flush()
    except BrokenPipeError:
        _detach_stdout()
        raise PredictorError("cannot write the report: stdout was closed by the reader (broken pipe)") from None
    except (OSError, ValueError) as e:  # ENOSPC on /dev/full, EBADF on a closed descriptor, a closed file
        _detach_stdout()
        why = getattr(e, "strerror", None) or str(e)
        raise PredictorError(f"cannot write the report to stdout: {why}") from None


def _detach_stdout() -> None:
    """Point fd 1 at /dev/null so that the interpreter's final flush of what is still buffered is silent."""
    with contextlib.suppress(Exception):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.close(devnull)
    with contextlib.suppress(Exception):
        sys.stdout = open(os.devnull, "w")


def emit(text: str, output: str | None) -> None:
    """The report (control characters removed) to ``output`` (atomically) or to stdout."""
    text = clean(text)
    if output:
        write_text(output, text)
    else:
        write_stdout(text)


# ------------------------------------------------------------------------------------------ inputs
def _same(a: str, b: str) -> bool:
    try:
        if os.path.samefile(a, b):
            return True
    except OSError:
        pass
    return os.path.realpath(a) == os.path.realpath(b)


def refuse_overwriting_inputs(outputs: Iterable[tuple[str, str]], inputs: Iterable[tuple[str, str]]) -> None:
    """A one-line error when an output (option, path) is, or resolves to, an input (what, path) or another
    output: ``predict m.onnx -o m.onnx`` would replace the model with its report."""
    ins = [(w, p) for w, p in inputs if p and isinstance(p, str) and os.path.exists(p)]
    seen: list[tuple[str, str]] = []
    for opt, path in outputs:
        if not path:
            continue
        for what, p in ins:
            if _same(path, p):
                raise PredictorError(f"{opt} {path} is the {what} {p}: refusing to overwrite an input")
        for opt2, p2 in seen:
            if os.path.abspath(path) == os.path.abspath(p2) or (os.path.exists(path) and _same(path, p2)):
                raise PredictorError(f"{opt} {path} is also the {opt2} output: give them different names")
        seen.append((opt, path))


def command_files(args) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(outputs, inputs) of a parsed command line: -o, the charts of --plot; the model(s), a profile or
    calibration file, the ncu CSV."""
    outputs = [("-o", getattr(args, "output", None))]
    plot = getattr(args, "plot", None)
    if plot:
        outputs.append(("--plot", plot))
        root, ext = os.path.splitext(plot)
        outputs.append(("--plot", f"{root}-time{ext}"))
    inputs = [("model", getattr(args, "model", None)), ("model", getattr(args, "model_b", None)),
              ("calibration file", getattr(args, "calibration", None)), ("ncu CSV", getattr(args, "ncu", None))]
    for attr in ("gpu", "vs_gpu"):
        g = getattr(args, attr, None)
        for name in (g if isinstance(g, (list, tuple)) else (g,)):
            if isinstance(name, str) and os.path.isfile(name):
                inputs.append(("profile", name))
    return outputs, inputs
