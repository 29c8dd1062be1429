"""Ending a one-shot ``predict`` process without tearing the interpreter down.

A normal exit frees every object one by one (a 100k-node graph and its prediction: ~0.2 s) and finalises every
module (~10-15 ms with protobuf loaded: a tenth of a small model's run). When ``predict`` runs as the program
(``main()`` called without arguments), :func:`activate` makes :func:`keep` hold the big results to the end and
:func:`exit_now` ends the process with ``os._exit`` once stdout and stderr are flushed and the ``atexit`` handlers
have run. In-process callers (``main(argv)``, tests, the API) are untouched: ``keep`` does nothing for them.
"""
from __future__ import annotations

import os
import sys

_KEPT: list | None = None  # a list while the process is to end by exit_now


def activate() -> None:
    """From here on the process ends by :func:`exit_now`: what it keeps is never collected (the cyclic collector
    stays off: a collection would only walk the kept objects)."""
    global _KEPT
    import gc

    gc.disable()
    _KEPT = []


def active() -> bool:
    """Whether the process is to end by :func:`exit_now` (``predict`` run as the program)."""
    return _KEPT is not None


def keep(obj) -> None:
    """Hold ``obj`` until the process ends (nothing when not activated)."""
    if _KEPT is not None:
        _KEPT.append(obj)


def exit_now(rc: int) -> None:
    """End the process with ``rc`` at once; returns (to a normal exit) when it cannot do so safely: a flush failed
    or another thread still runs."""
    if _KEPT is None:
        return
    threading = sys.modules.get("threading")
    if threading is not None and threading.active_count() > 1:
        return
    import atexit

    run_exitfuncs = getattr(atexit, "_run_exitfuncs", None)  # CPython's; elsewhere a normal exit
    if run_exitfuncs is None:
        return
    run_exitfuncs()  # what a normal exit runs first (they run once: the list is cleared)
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except Exception:  # noqa: BLE001 - the interpreter's own exit reports it as before
        return
    os._exit(rc)
