"""Empirical Roofline Toolkit (ERT) style GPU characterisation with CuPy.

Modules, one job each (nothing heavy is imported here; CuPy is imported inside the GPU drivers):
- kernels: CUDA sources (bandwidth rmw/copy/read, block-local L1, FLOPs sweep, WMMA, empty)
- timing: CUDA-event timing, trial doubling, grid sizing, working-set sizes
- device: CuPy availability, GPU info, provenance, nvidia-smi clocks (read-only)
- sweep: bandwidth / L1 / compute sweeps and launch overhead (GPU)
- gemm: tensor-core ceilings from library GEMMs and an own WMMA kernel (GPU)
- run: the whole characterisation under a time budget (GPU)
- plateaus, summary: raw sweep data -> named bandwidth levels and peaks (CPU)
- profile_writer, chart: machine profile JSON and charts (CPU)
- synthetic: made-up raw data with known levels, for tests and chart previews (never a measurement)
- cli: ``predict calibrate ert --out h200.json [--quick] [--name h200]``

``summarise`` (raw dict -> levels and peaks) is importable from here.
"""


def __getattr__(name):
    if name == "summarise":
        from .summary import summarise

        return summarise
    raise AttributeError(name)
