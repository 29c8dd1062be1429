"""The lab's evaluation commands: predictions against the committed measurements, one report each
(``python -m calibration.evaluate.<name>``): accuracy (whole networks), per_op_accuracy, training_accuracy,
rnn_training_accuracy, training_ncu, optimize_accuracy, published_accuracy (with published_graphs, the graphs of the
published programs), scaling_accuracy, nccl_tests_accuracy, kernel_sweeps. They read data and the predictor;
nothing in predictor/ imports them (calibration/fit reads training_accuracy's case table)."""
