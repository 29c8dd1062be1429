"""Moved to ``predictor.measure.ncu.metrics`` (the shipped tool's reader); this name is the same module."""
import sys

from predictor.measure.ncu import metrics as _module

if __name__ == "__main__":  # python -m calibration.ncu.metrics
    raise SystemExit(_module.main())
sys.modules[__name__] = _module
