"""Progress bars for long work (sweeps, training steps of large models, validate): tqdm on stderr when
stderr is a terminal, nothing otherwise (piped, redirected, ``--quiet``). tqdm is imported only for a bar."""
from __future__ import annotations

import sys
from contextlib import contextmanager


class _Silent:
    def update(self, n: int = 1, *_args) -> None:
        pass

    def set_description(self, _text: str) -> None:
        pass


def wanted(quiet: bool = False, stream=None) -> bool:
    """A bar only on a terminal and without --quiet."""
    stream = sys.stderr if stream is None else stream
    try:
        return not quiet and stream.isatty()
    except (AttributeError, ValueError):
        return False


@contextmanager
def bar(total: int | None, desc: str, enabled: bool = True, unit: str = "setting"):
    """A tqdm bar over ``total`` steps (``.update(n)``, ``.set_description(text)``) when ``enabled``; else a
    silent stand-in. Left on screen only while running (``leave=False``): the report that follows stays clean."""
    if not enabled:
        yield _Silent()
        return
    try:
        from tqdm import tqdm
    except ImportError:  # pragma: no cover - tqdm is a dependency
        yield _Silent()
        return
    b = tqdm(total=total, desc=desc, unit=unit, leave=False, file=sys.stderr, dynamic_ncols=True)
    try:
        yield _Bar(b)
    finally:
        b.close()


class _Bar:
    def __init__(self, b):
        self._b = b

    def update(self, n: int = 1, *_args) -> None:
        self._b.update(n if isinstance(n, int) else 1)

    def set_description(self, text: str) -> None:
        self._b.set_description(text)


@contextmanager
def working(desc: str, enabled: bool = True, delay_s: float = 0.5):
    """An elapsed-time indicator for one long step without countable parts (a training step of a large model,
    a validation): tqdm's counter on stderr, refreshed by a daemon thread, shown only after ``delay_s`` (fast
    work prints nothing) and only when ``enabled`` and stderr is a terminal."""
    if not (enabled and wanted()):
        yield
        return
    import threading

    try:
        from tqdm import tqdm
    except ImportError:  # pragma: no cover - tqdm is a dependency
        yield
        return
    done = threading.Event()

    def tick():
        if done.wait(delay_s):
            return
        b = tqdm(total=None, desc=desc, bar_format="{desc}: {elapsed}", leave=False, file=sys.stderr)
        while not done.wait(0.2):
            b.refresh()
        b.close()

    t = threading.Thread(target=tick, daemon=True)
    t.start()
    try:
        yield
    finally:
        done.set()
        t.join(timeout=1.0)


def train_progress(model: str, enabled: bool = True):
    import os

    return working(f"training step of {os.path.basename(model)}", enabled)
