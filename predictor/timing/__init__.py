"""The kernel time model, written once: a kernel's features -> seconds.

``predict`` (predictor/fitted.py) calls :func:`kernel_time` on one kernel's features with plain floats; every
fit (calibration/fit/) calls the same function on numpy arrays of many kernels. The parameters' physical meaning
and bounds are declared once in :mod:`predictor.timing.params`.
"""
from .features import KernelFeatures, gemm_wave, hidden_bytes, kernel_features, tile_padding
from .model import NUMPY_OPS, SCALAR_OPS, hidden_kernel_time, hidden_bytes_share, kernel_time

_PARAMS_NAMES = ("PARAMS", "ParamSpec", "param_bounds")  # the fits' (predictor.timing.params), imported on first use


def __getattr__(name: str):
    """The parameter specs (PARAMS, ParamSpec, param_bounds) from :mod:`predictor.timing.params`, imported when first
    asked for: ``predict`` never reads them (start-up), the fits and tests do."""
    if name in _PARAMS_NAMES:
        from . import params

        return getattr(params, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = ["KernelFeatures", "kernel_features", "gemm_wave", "tile_padding", "hidden_bytes", "kernel_time",
           "hidden_kernel_time", "hidden_bytes_share", "SCALAR_OPS", "NUMPY_OPS", "PARAMS", "ParamSpec", "param_bounds"]
