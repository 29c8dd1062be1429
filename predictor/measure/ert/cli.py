"""``predict calibrate ert --out h200.json [--quick] [--name h200]``.

Runs the ERT characterisation on the GPU (CuPy), then writes beside ``--out``:
the profile JSON, ``<stem>_ert_raw.json`` (all sweep data) and ``<stem>_ert_{bandwidth,roofline}``
charts (PNG + SVG). ``--from-raw RAW.json`` skips the GPU and rebuilds profile and charts from a
saved raw file (CPU only). Exit codes: 0 ok, 1 unexpected failure, 2 usage error or no CuPy/GPU
(one ``error: ...`` line on stderr, no traceback).
"""
from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from pathlib import Path

from .device import ErtUnavailable, import_cupy
from .profile_writer import (H200_DATASHEET, build_profile, datasheet_from_profile,
                             datasheet_ratios, output_paths, write_json)

REPO_ROOT = Path(__file__).resolve().parents[2]


def _parser(prog: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=prog, description="Empirical Roofline Toolkit-style "
                                "characterisation of the local GPU into a machine profile.")
    p.add_argument("--out", required=True, type=Path, help="profile JSON to write (raw data and "
                   "charts go beside it)")
    p.add_argument("--name", default=None, help="profile name (default: the --out file stem)")
    p.add_argument("--quick", action="store_true", help="short smoke run (~30 s), coarse sweeps")
    p.add_argument("--datasheet", type=Path, default=None,
                   help="JSON with datasheet values (a bundled profile or a plain datasheet dict); "
                   "default: predictor/machine/profiles/<name>.json if present, else built-in H200 "
                   "numbers for h200*")
    p.add_argument("--from-raw", type=Path, default=None,
                   help="rebuild profile and charts from a saved raw JSON (no GPU needed)")
    p.add_argument("--no-charts", action="store_true", help="do not write charts")
    p.add_argument("--bandwidth-series", default=None,
                   help="sweep whose plateaus give L2 and HBM (default: copy_fp32x4 where the run has it, else the "
                   "run's canonical series, rmw_fp32)")
    p.add_argument("--l1-series", default=None,
                   help="sweep whose first plateau gives L1 (default: read_fp32x4 where the run has it, else the "
                   "run's block-local L1 series)")
    return p


def load_datasheet(path: Path | None, name: str) -> tuple[dict, dict | None]:
    """(datasheet dict, fallback profile or None): from ``path``, else the bundled profile of
    ``name``, else the built-in H200 numbers for h200* names, else nothing."""
    if path is None:
        bundled = REPO_ROOT / "predictor" / "machine" / "profiles" / f"{name}.json"
        if bundled.is_file():
            path = bundled
        elif name.lower().startswith("h200"):
            return json.loads(json.dumps(H200_DATASHEET)), None
        else:
            return {}, None
    data = json.loads(Path(path).read_text())
    if not isinstance(data, dict):
        raise ValueError(f"{path}: top level is not a JSON object")
    looks_like_profile = "sources" in data or any(
        isinstance(v, dict) and "value" in v for v in data.values())
    if looks_like_profile:
        return datasheet_from_profile(data), data
    return data, None


def _err(msg: str) -> None:
    print(f"error: {' '.join(str(msg).split())}", file=sys.stderr)


def _report(profile: dict, summary: dict) -> None:
    ratios = datasheet_ratios(profile)

    def vs_sheet(path: str) -> str:
        return f" ({ratios[path]:.0%} of datasheet)" if path in ratios else ""

    for level, rec in summary["levels"].items():
        print(f"  {level:4s} {rec['bandwidth_Bps'] / 1e12:8.2f} TB/s  working sets "
              f"{rec['min_bytes'] / 2**20:.3g}-{rec['max_bytes'] / 2**20:.4g} MiB ({rec['series']})"
              f"{vs_sheet(f'bandwidth_Bps.{level}')}")
        if "per_sm_max_bytes" in rec:
            print(f"       per SM {rec['per_sm_min_bytes'] / 1024:.0f}-"
                  f"{rec['per_sm_max_bytes'] / 1024:.0f} KiB (block-local slices)")
    for level, why in summary["missing_levels"].items():
        print(f"  {level:4s} missing: {why}")
    for prec, units in profile.get("peak_flops_per_s", {}).items():
        txt = ", ".join(f"{u} {e['value'] / 1e12:.1f} TFLOP/s [{e['source']}]"
                        f"{vs_sheet(f'peak_flops_per_s.{prec}.{u}')}" for u, e in units.items())
        print(f"  {prec:5s} {txt}")
    for key in ("launch_overhead_s", "kernel_gap_s"):
        if key in profile:
            print(f"  {key} {profile[key]['value'] * 1e6:.2f} us [{profile[key]['source']}]")


def main(argv: list[str] | None = None, prog: str = "predict calibrate ert") -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args = _parser(prog).parse_args(argv)
    except SystemExit as e:  # argparse already printed usage and the error
        return 0 if e.code in (0, None) else 2
    name = args.name or args.out.stem
    paths = output_paths(args.out)
    try:
        datasheet, fallback = load_datasheet(args.datasheet, name)
    except (OSError, ValueError) as e:
        _err(f"cannot read datasheet: {e}")
        return 2

    if args.from_raw is not None:
        try:
            raw = json.loads(args.from_raw.read_text())
        except (OSError, ValueError) as e:
            _err(f"cannot read raw data {args.from_raw}: {e}")
            return 2
    else:
        try:
            import_cupy()
        except ErtUnavailable as e:
            _err(e)
            return 2
        from .run import FULL, QUICK, characterise

        config = QUICK if args.quick else FULL
        command = f"{prog} {shlex.join(argv)}".strip()
        print(f"ERT characterisation ({'quick' if args.quick else 'full'}), budget "
              f"{config.total_budget_s:.0f} s; writing {paths['profile']}", flush=True)
        t0 = time.monotonic()
        try:
            raw = characterise(config, command=command,
                               progress=lambda line: print(line, flush=True),
                               checkpoint=lambda r: write_json(r, paths["raw"]))
        except ErtUnavailable as e:
            _err(e)
            return 2
        except Exception as e:
            _err(f"characterisation failed: {type(e).__name__}: {e}")
            return 1
        print(f"measured in {time.monotonic() - t0:.1f} s", flush=True)

    try:
        from .summary import summarise

        # the series choice is an interpretation of the measurement: it goes into the summary and the
        # profile's notes, the raw data is written back as measured
        cfg = dict(raw.get("config", {}))
        if args.bandwidth_series:
            cfg["canonical_series"] = args.bandwidth_series
        if args.l1_series:
            cfg["l1_series"] = args.l1_series
        summary = summarise({**raw, "config": cfg})
        write_json(raw, paths["raw"])
        profile = build_profile(raw, datasheet, name=name, raw_data=paths["raw"].name,
                                summary=summary, fallback_profile=fallback,
                                series={"canonical_series": args.bandwidth_series,
                                        "l1_series": args.l1_series})
        write_json(profile, paths["profile"])
    except Exception as e:
        _err(f"cannot build the profile: {type(e).__name__}: {e}")
        return 1
    print(f"wrote {paths['profile']} and {paths['raw']}")
    _report(profile, summary)
    if not args.no_charts:
        try:
            from .chart import write_charts

            for p in write_charts(raw, paths["chart_prefix"], summary=summary):
                print(f"wrote {p}")
        except Exception as e:  # e.g. no matplotlib on the GPU host: rebuild later with --from-raw
            print(f"warning: charts not written ({type(e).__name__}: {e}); rerun with --from-raw "
                  f"{paths['raw']} where matplotlib is installed", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(prog="python -m predictor.measure.ert.cli"))
