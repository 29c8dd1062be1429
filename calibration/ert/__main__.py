"""``python -m calibration.ert --out h200.json [--quick]``: same as ``predict calibrate ert``."""
from .cli import main

raise SystemExit(main(prog="python -m calibration.ert"))
