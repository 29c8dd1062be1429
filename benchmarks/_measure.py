"""Shared helpers of the benchmark scripts: run a command in a fresh process and measure it."""
from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

# The wrapper is the command's only parent, so RUSAGE_CHILDREN is exactly the command's usage.
_WRAPPER = (
    "import json, resource, subprocess, sys, time\n"
    "t = time.perf_counter()\n"
    "p = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)\n"
    "w = time.perf_counter() - t\n"
    "r = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "print(json.dumps(dict(rc=p.returncode, wall_s=w, cpu_s=r.ru_utime + r.ru_stime, max_rss_kb=r.ru_maxrss,\n"
    "                      stderr=p.stderr.decode(errors='replace')[-4000:])))\n"
)

REPO = Path(__file__).resolve().parent.parent


def child_env() -> dict[str, str]:
    """The environment of the measured processes: as this one, but allowed to write bytecode caches (a
    sandbox may set PYTHONDONTWRITEBYTECODE; an installed package has its .pyc files), so the warm-up
    run leaves every tool in its installed state."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def measure_once(cmd: list[str], timeout: float = 600.0) -> dict:
    """Wall seconds, CPU seconds (user + sys), peak RSS (KiB) and exit code of one run of ``cmd``."""
    out = subprocess.run([sys.executable, "-c", _WRAPPER, *cmd], capture_output=True, env=child_env(),
                         timeout=timeout)
    if out.returncode != 0:
        raise RuntimeError(f"measuring wrapper failed: {out.stderr.decode(errors='replace')[-2000:]}")
    return json.loads(out.stdout)


def measure(cmd: list[str], repeat: int = 5, warmup: int = 1, timeout: float = 600.0) -> dict:
    """Median and min of ``repeat`` runs after ``warmup`` runs; ``error`` (last stderr line) if any run fails."""
    for _ in range(warmup):
        first = measure_once(cmd, timeout)
        if first["rc"] != 0:
            return {"error": _last_line(first["stderr"]), "rc": first["rc"]}
    runs = [measure_once(cmd, timeout) for _ in range(repeat)]
    bad = [r for r in runs if r["rc"] != 0]
    if bad:
        return {"error": _last_line(bad[0]["stderr"]), "rc": bad[0]["rc"]}
    return _summary(runs)


def measure_interleaved(cmds: dict[str, list[str]], repeat: int = 5, warmup: int = 1,
                        timeout: float = 600.0) -> dict[str, dict]:
    """``measure`` of several commands with their runs interleaved (a, b, a, b, ...), so that a machine
    shared with other work loads each command alike; a command that fails is dropped from later rounds."""
    results: dict[str, dict] = {}
    runs: dict[str, list[dict]] = {k: [] for k in cmds}
    live = dict(cmds)
    for _ in range(warmup):
        for k, cmd in list(live.items()):
            r = measure_once(cmd, timeout)
            if r["rc"] != 0:
                results[k] = {"error": _last_line(r["stderr"]), "rc": r["rc"]}
                del live[k]
    for _ in range(repeat):
        for k, cmd in list(live.items()):
            r = measure_once(cmd, timeout)
            if r["rc"] != 0:
                results[k] = {"error": _last_line(r["stderr"]), "rc": r["rc"]}
                del live[k]
            else:
                runs[k].append(r)
    for k in live:
        results[k] = _summary(runs[k])
    return results


def _summary(runs: list[dict]) -> dict:
    walls = [r["wall_s"] for r in runs]
    return {
        "wall_s_median": statistics.median(walls),
        "wall_s_min": min(walls),
        "wall_s_runs": walls,
        "cpu_s_median": statistics.median(r["cpu_s"] for r in runs),
        "cpu_s_min": min(r["cpu_s"] for r in runs),
        "max_rss_mb": max(r["max_rss_kb"] for r in runs) / 1024.0,
    }


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1][:300] if lines else "failed without a message"


def predict_cmd() -> list[str]:
    """The installed ``predict`` console script next to this interpreter, else ``python -m predictor.cli``."""
    exe = Path(sys.executable).parent / "predict"
    if exe.exists():
        return [str(exe)]
    found = shutil.which("predict")
    return [found] if found else [sys.executable, "-m", "predictor.cli"]


def machine_info() -> dict:
    import platform

    info = {"python": platform.python_version(), "platform": platform.platform(), "cpus": os.cpu_count()}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    info["cpu"] = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        info["loadavg_at_start"] = os.getloadavg()
    except OSError:
        pass
    return info
