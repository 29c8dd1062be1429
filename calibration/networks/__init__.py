"""Reference networks for calibration and validation: zoo, ONNX export, GPU timing, op microbenchmarks.

Only `zoo` is importable without torch (its spec table is pure Python); the builders,
`export`, `timing` and `microbench` import torch lazily.
"""
