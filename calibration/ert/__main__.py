"""``python -m calibration.ert --out h200.json [--quick]``: same as ``predict calibrate ert``
(the code is ``predictor.measure.ert``)."""
from predictor.measure.ert.cli import main

raise SystemExit(main(prog="python -m calibration.ert"))
