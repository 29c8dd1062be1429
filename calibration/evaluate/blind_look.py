"""One look at a blind set: the committed fit against the set's measured cases, written as its record.

    python -m calibration.evaluate.blind_look --name blind18 --networks qwen35_4l,esmfold_trunk_4b,... \\
        --gpu h100 --out calibration/data/h100/accuracy/blind18_once.json [--what TEXT]

The set is named by its networks (its zoo split becomes ``train`` once it is spent, so a split name would select
nothing afterwards); its cases are every measured case of those networks under calibration/data/<gpu>/timing and
whatif (``accuracy.evaluate``, ``evaluate_amp``), scored with the bundled calibration (transferred to ``--gpu``'s
profile), beside the uncalibrated roofline and the transfer control: the four training networks CONTROL timed on the
same GPU (the latest timing folder holding them wins, as in ``accuracy.evaluate``).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

CONTROL = ("resnet50", "vit_b_16", "gpt2", "bert_base")


def look(name: str, networks: set[str], gpu: str, what: str) -> dict:
    from predictor.calibrate import Uncalibrated

    from .accuracy import amp_tables, evaluate, evaluate_amp, split_summary, summarise

    rows = evaluate(gpu=gpu)
    cases = [dict(r, split=name) for r in rows if r["network"] in networks]
    if not cases:
        raise ValueError(f"no measured case of {', '.join(sorted(networks))} under calibration/data/{gpu}/timing")
    amp = [dict(r, split=name) for r in evaluate_amp(gpu=gpu) if r["network"] in networks]
    control = [r for r in rows if r["network"] in CONTROL]
    base = [r for r in evaluate(Uncalibrated(), gpu) if r["network"] in networks]
    summary = {name: split_summary(cases), f"autocast ({name})": amp_tables(amp), "control": summarise(control),
               "roofline baseline (uncalibrated, ERT ceilings)": {name: summarise(base)},
               f"eager ({name})": summarise(cases, "eager_error")
               if all(r["eager_error"] is not None for r in cases) else None}
    return {"what": what, "summary": summary, "cases": cases, "autocast_cases": amp, "control_cases": control}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--name", required=True, help="the set's name (its zoo split before its look), e.g. blind18")
    ap.add_argument("--networks", required=True, help="comma-separated zoo names of the set's networks")
    ap.add_argument("--gpu", default="h200", help="folder under calibration/data and profile name (default h200)")
    ap.add_argument("--out", required=True, type=Path, help="the record to write (JSON); refuses to overwrite one")
    ap.add_argument("--what", default="", help="one line saying which fit looked, when")
    a = ap.parse_args(argv)
    from predictor.types import PredictorError

    from ..networks.zoo import NETWORKS

    nets = {n.strip() for n in a.networks.split(",") if n.strip()}
    unknown = sorted(n for n in nets if n not in NETWORKS)
    try:
        if not nets or unknown:
            raise ValueError(f"unknown network(s): {', '.join(unknown) or '(none given)'}")
        if a.out.exists():
            raise ValueError(f"{a.out} exists: a blind set is looked at once (remove it to rewrite the record)")
        from predictor.machine.profile import load_profile

        load_profile(a.gpu)
        doc = look(a.name, nets, a.gpu, a.what)
    except (PredictorError, ValueError, KeyError, OSError) as e:
        print(f"blind_look: error: {e}", file=sys.stderr)
        return 2
    a.out.write_text(json.dumps(doc, indent=1) + "\n")
    s = doc["summary"][a.name]["all"]
    print(f"{a.name}: {s['n']} cases, MAPE {100 * s['mape']:.1f}%, median {100 * s['median']:.1f}%, "
          f"within 10% {100 * s['within_10']:.0f}%, worst {100 * s['worst']:.1f}% ({s['worst_case']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
