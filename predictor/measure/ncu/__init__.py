"""Nsight Compute output: metric tables per architecture (``metrics``), NVTX range stacks (``nvtx``), the
CSV parser (``parse``: raw and details pages, one-line errors) and the kernel-to-node mapping
(``kernels``). ``calibration/ncu`` (collection and the per-kernel reports of the lab) imports these."""
