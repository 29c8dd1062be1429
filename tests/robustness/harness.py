"""Run ``predict`` in-process on one bad input and record what it did: exit code, stdout, stderr, time,
peak-memory growth, and every file it opened (through a Python audit hook)."""
from __future__ import annotations

import contextlib
import gc
import io
import json
import os
import re
import resource
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

TIME_LIMIT_S = 5.0
MEMORY_LIMIT_KB = 1 << 20  # peak RSS may grow by at most 1 GiB over a case
FORBIDDEN = re.compile(r"passwd|outside_secret")  # paths hostile files name: never opened
ONE_LINE_ERROR = re.compile(r"\Aerror: [^\n]+\n\Z")

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
_recording: list[list[tuple[str, bool]]] = []


def _hook(event: str, args) -> None:
    if event == "open" and _recording:
        path, mode, flags = args
        if isinstance(path, int):  # an already open descriptor
            return
        writes = (isinstance(mode, str) and any(c in mode for c in "wax+")) or \
            (mode is None and isinstance(flags, int) and bool(flags & _WRITE_FLAGS))
        _recording[-1].append((os.fsdecode(path), writes))


sys.addaudithook(_hook)  # cannot be removed; does nothing unless a case is recording


@contextlib.contextmanager
def recording_opens():
    opened: list[tuple[str, bool]] = []
    _recording.append(opened)
    try:
        yield opened
    finally:
        _recording.pop()


@dataclass
class Run:
    rc: int | None
    stdout: str
    stderr: str
    seconds: float
    rss_growth_kb: int
    opened: list[tuple[str, bool]] = field(default_factory=list)
    crash: str = ""  # traceback of an exception that escaped

    def written(self) -> list[str]:
        return [p for p, w in self.opened if w and "__pycache__" not in p and not p.endswith(".pyc")]

    def forbidden(self) -> list[str]:
        return [p for p, _ in self.opened if FORBIDDEN.search(p)]


def data_opens(opened: list[tuple[str, bool]]) -> list[str]:
    """The opened paths less Python's own imports (.py, .pyc, extension modules)."""
    return [p for p, _ in opened if not p.endswith((".py", ".pyc", ".so")) and "__pycache__" not in p]


def _peak_kb() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def run_cli(argv: list[str], cwd: Path) -> Run:
    """``predictor.cli.main(argv)`` in ``cwd``, with stdout/stderr captured."""
    from predictor.cli import main

    out, err = io.StringIO(), io.StringIO()
    rc, crash = None, ""
    old = os.getcwd()
    gc_was_enabled = gc.isenabled()  # predict's main() may switch the collector off for a one-shot run
    peak0 = _peak_kb()
    t0 = time.perf_counter()
    try:
        os.chdir(cwd)
        with recording_opens() as opened, contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                rc = main(list(argv))
            except SystemExit as e:  # main() returns codes; an escaping SystemExit is a bug too
                crash = f"SystemExit({e.code!r}) escaped main()"
            except Exception:  # noqa: BLE001 - what the test reports
                crash = traceback.format_exc()
    finally:
        os.chdir(old)
        if gc_was_enabled:
            gc.enable()
    return Run(rc, out.getvalue(), err.getvalue(), time.perf_counter() - t0, _peak_kb() - peak0, opened, crash)


def run_call(fn, *args, cwd: Path | None = None, **kwargs):
    """(result, exception, seconds, opened) of ``fn(*args, **kwargs)``."""
    old = os.getcwd()
    t0 = time.perf_counter()
    res = exc = None
    try:
        if cwd is not None:
            os.chdir(cwd)
        with recording_opens() as opened:
            try:
                res = fn(*args, **kwargs)
            except Exception as e:  # noqa: BLE001
                exc = e
    finally:
        os.chdir(old)
    return res, exc, time.perf_counter() - t0, opened


def snapshot(root: Path) -> dict[str, tuple[int, int]]:
    """relative path -> (size, mtime_ns) of every file under ``root``."""
    out = {}
    for p in root.rglob("*"):
        if p.is_file():
            st = p.stat()
            out[str(p.relative_to(root))] = (st.st_size, st.st_mtime_ns)
    return out


def strict_json(text: str):
    """json.loads that rejects NaN and Infinity (the report must be standard JSON)."""
    def bad(name):
        raise ValueError(f"{name} in the JSON report")
    return json.loads(text, parse_constant=bad)


def _atomic_temp(path: str, out_path: Path | None) -> bool:
    """The temporary an atomic write of ``out_path`` used (``.NAME.XXXX.tmp.EXT`` beside it), gone since."""
    if out_path is None:
        return False
    p = Path(path)
    return (p.parent == out_path.parent and p.name.startswith(f".{out_path.name}.") and ".tmp" in p.name
            and not p.exists())


def check_outcome(run: Run, expect: str, out_path: Path | None, json_report: bool = True) -> None:
    """Assert ``run`` met ``expect`` ('error', 'any', 'ok' or 'unsupported:KEY'); see make_corpus.py."""
    assert not run.crash, f"crashed:\n{run.crash}"
    assert run.seconds < TIME_LIMIT_S, f"took {run.seconds:.1f} s"
    assert run.rss_growth_kb < MEMORY_LIMIT_KB, f"peak memory grew by {run.rss_growth_kb / 1024:.0f} MiB"
    assert not run.forbidden(), f"opened paths a data file named: {run.forbidden()}"
    allowed = {str(out_path)} if out_path is not None else set()
    stray = [p for p in run.written() if os.path.abspath(p) not in allowed and not _atomic_temp(p, out_path)]
    assert not stray, f"wrote outside the output path: {stray}"
    if run.rc == 2 or expect == "error":
        assert run.rc == 2 and expect in ("error", "any"), f"exit {run.rc}, stderr {run.stderr!r}"
        assert ONE_LINE_ERROR.match(run.stderr), f"not a one-line error: {run.stderr!r}"
        assert run.stdout == "", run.stdout
        assert out_path is None or not out_path.is_file(), "an error left a report behind"
        return
    assert run.rc == 0, f"exit {run.rc}, stderr {run.stderr!r}"
    assert run.stderr == "", run.stderr
    if out_path is not None and json_report:
        doc = strict_json(out_path.read_text())
        assert doc["total_time_s"] >= 0 and doc["total_flops"] >= 0
        assert all(op["flops"] >= 0 and op["time_s"] >= 0 for op in doc["ops"])
        if expect.startswith("unsupported:"):
            key = expect.split(":", 1)[1]
            assert key in doc["unsupported"], doc["unsupported"]
