"""The lab's evaluation commands: predictions against the committed measurements, one report each
(``python -m calibration.evaluate.<name>``): accuracy (whole networks), per_op_accuracy, training_accuracy,
training_ncu, optimize_accuracy, published_accuracy, scaling_accuracy, kernel_sweeps. They read data and the
predictor; nothing in predictor/ or the fits imports them (calibration/fit reads training_accuracy's case table)."""
