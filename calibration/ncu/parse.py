"""Moved to ``predictor.measure.ncu.parse`` (the shipped tool's reader); this name is the same module."""
import sys

from predictor.measure.ncu import parse as _module

if __name__ == "__main__":  # python -m calibration.ncu.parse
    raise SystemExit(_module.main())
sys.modules[__name__] = _module
