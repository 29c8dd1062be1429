"""Moved to ``predictor.measure.ert`` (``predict calibrate ert`` runs it); ``python -m calibration.ert`` still
works (``__main__``)."""
