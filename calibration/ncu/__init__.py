"""Nsight Compute samples: metric tables, the collection driver, the CSV parser, kernel classes.

Modules (none imports torch or runs anything at import time):

- `metrics`  canonical metric names (an Enum) and one ncu-name table per architecture;
             FLOPs per (precision, unit); a validator against ``ncu --query-metrics`` listings.
- `nvtx`     the NVTX range format written by the collector and read by the mapping.
- `parse`    ncu CSV (raw page or details page) -> frozen `KernelSample`s.
- `kernels`  kernel-name classification and kernel -> ONNX node attribution.
- `collect`  the driver run on the GPU machine (``python3 -m calibration.ncu.collect``).
"""
