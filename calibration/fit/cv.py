"""Grouped cross-validation of the main fit: leave one architecture family of the training networks out.

    python -m calibration.fit.cv [--settings case_weight=2,micro_weight=0.3 ...] [--folds K] [--out FILE]

For each setting (calibration/fit/fit.py FitSettings) and each family (calibration/networks/zoo.py
``arch_family``: resnet18/resnet50/deeplabv3 are one, mobilenet_v3/lraspp another), the fit runs without that
family's scope samples and whole-network cases and predicts them with the fit's own model (predict_cases); the
score of a setting is the MAPE over every left-out case. This is how the fit's hyperparameters are chosen: the
held-out and blind networks are never read here. The graphs are costed once for all folds.
"""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

from predictor.machine.profile import load_profile

from .dataset import load_cases, load_kernels
from .fit import OTHER_GPUS, FitSettings, other_gpu_data, predict_cases, prepare_fit, solve, training_cases


def families(names: list[str]) -> dict[str, list[str]]:
    from calibration.networks.zoo import NETWORKS

    out: dict[str, list[str]] = {}
    for n in dict.fromkeys(names):
        out.setdefault(NETWORKS[n].arch_family if n in NETWORKS else n, []).append(n)
    return out


def folds_of(fams: dict[str, list[str]], n_folds: int = 0) -> list[list[str]]:
    """Families per fold: one each (leave one family out) when ``n_folds`` is 0, else the families in name order
    dealt round-robin into ``n_folds`` folds (a quicker grouped CV for comparing settings)."""
    names = sorted(fams)
    if n_folds <= 0 or n_folds >= len(names):
        return [[f] for f in names]
    return [names[i::n_folds] for i in range(n_folds)]


def _scores(errors: dict[str, list[float]]) -> dict:
    allerr = [abs(e) for es in errors.values() for e in es]
    if not allerr:
        return {"n": 0}
    return {"n": len(allerr), "mape": float(np.mean(allerr)), "median": float(np.median(allerr)),
            "within_10": float(np.mean([e <= 0.10 for e in allerr]))}


def cross_validate(data, settings: FitSettings, log=print, n_folds: int = 0) -> dict:
    """The fitted GPU's left-out cases score the setting; another GPU's (data prepared with other_gpus: the H100's,
    a network left out on every GPU at once) are reported beside it, under ``other_gpus``."""
    fams = families(data.case_names)
    own = data.case_gpu == 0
    families_of = {f: set(ns) for f, ns in fams.items()}
    errors: dict[str, list[float]] = {}
    other: dict[str, list[float]] = {}
    for fold in folds_of(fams, n_folds):
        nets = [n for f in fold for n in fams[f]]
        sol = solve(data, settings, exclude=frozenset(nets))
        whole = predict_cases(sol.x, data.rows, len(data.case_ref), data.row_gap_s, data.eff_l2, data.block_s)
        for fam in fold:
            err = [(bool(own[i]), float(whole[i] / data.case_ref[i] - 1)) for i, n in enumerate(data.case_names)
                   if n in families_of[fam]]
            errs, errs_other = [e for o, e in err if o], [e for o, e in err if not o]
            if errs:
                errors[fam] = errs
                log(f"  left out {fam} ({', '.join(fams[fam])}): MAPE {np.mean(np.abs(errs)):.1%} over {len(errs)} cases")
            if errs_other:
                other[fam] = errs_other
                log(f"  left out {fam} on another GPU: MAPE {np.mean(np.abs(errs_other)):.1%} over {len(errs_other)} cases")
    out = {"settings": settings.__dict__ | {"micro_families": list(settings.micro_families)},
           "folds": n_folds or len(fams), **{k: v for k, v in _scores(errors).items() if k != "n"},
           "per_family": {f: float(np.mean(np.abs(es))) for f, es in errors.items()}}
    if other:
        out["other_gpus"] = {**_scores(other), "per_family": {f: float(np.mean(np.abs(es))) for f, es in other.items()}}
    return out


def _parse(spec: str) -> FitSettings:
    kw = {}
    for part in filter(None, spec.split(",")):
        k, v = part.split("=")
        k = k.strip()
        if k == "micro_families":  # "+name" adds families to the fit's, "a+b+c" replaces them
            names = tuple(f for f in v.strip().split("+") if f)
            kw[k] = (FitSettings().micro_families + names) if v.strip().startswith("+") else names
        else:
            kw[k] = float(v)
    return replace(FitSettings(), **kw)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m calibration.fit.cv", description=__doc__.splitlines()[0])
    ap.add_argument("--settings", nargs="*", default=[""], help="k=v,k=v per setting (FitSettings fields)")
    ap.add_argument("--folds", type=int, default=0,
                    help="families dealt into this many folds (default: one per family)")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--h100", action="store_true",
                    help="also read the H100's training cases (fit.OTHER_GPUS): scored apart, weighted by h100_weight")
    a = ap.parse_args(argv)
    try:
        settings = [_parse(s) for s in a.settings]
    except (ValueError, TypeError) as e:
        print(f"error: bad --settings: {e}", file=sys.stderr)
        return 2
    profile = load_profile("h200")
    cases = training_cases(load_cases())
    families_used = tuple(dict.fromkeys(f for st in settings for f in st.micro_families))
    others = a.h100 or any(st.h100_weight > 0 for st in settings)
    data = prepare_fit(cases, load_kernels(), profile, families_used, table=any(st.table_weight > 0 for st in settings),
                       other_gpus=tuple(other_gpu_data(g) for g in OTHER_GPUS) if others else ())
    results = []
    for st in settings:
        print(f"setting {st}")
        res = cross_validate(data, st, n_folds=a.folds)
        print(f"  grouped CV: MAPE {res['mape']:.1%}, median {res['median']:.1%}, within 10% {res['within_10']:.0%}")
        if "other_gpus" in res:
            o = res["other_gpus"]
            print(f"  other GPUs' left-out cases: MAPE {o['mape']:.1%}, median {o['median']:.1%} over {o['n']} cases")
        results.append(res)
    if a.out:
        a.out.write_text(json.dumps({"command": "python -m calibration.fit.cv " + " ".join(sys.argv[1:]),
                                     "results": results}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
