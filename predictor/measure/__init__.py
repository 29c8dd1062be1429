"""What ``predict`` runs to measure a GPU and to read measurements: ``ert`` (``predict calibrate ert``: the
Empirical Roofline Toolkit's sweeps, CuPy imported only when run) and ``ncu`` (the one reader of Nsight
Compute CSV, used by ``predict validate`` and by the lab in ``calibration/``). Nothing here imports
``calibration``."""
