"""GPU performance predictor: ONNX network -> hierarchical roofline -> predicted time.

The Python API (predictor/api.py): ``predictor.predict``, ``train_step``, ``compare``, ``sweep``,
``validate``, each returning a frozen result with ``to_dict()``, ``to_json()``, ``to_table()``,
``to_pandas()`` and ``to_html()``. Nothing is imported until first used (``predict --help`` stays fast).

``predict``, ``sweep``, ``compare`` and ``validate`` are also the names of the pipeline's modules
(``predictor.predict.predict_file`` and so on): those modules are callable and call the API function, so
``predictor.predict(...)`` is the API whether or not ``predictor.predict`` the module was imported.
"""
from __future__ import annotations

__version__ = "0.1.0"

_API = ("train_step", "load_gpu", "Prediction", "Comparison", "SweepResult", "ValidationResult")
_CALLABLE_MODULES = ("predict", "sweep", "compare", "validate")
__all__ = ["__version__", *_CALLABLE_MODULES, *_API]


def __getattr__(name: str):
    if name in _API:
        from . import api

        return getattr(api, name)
    if name in _CALLABLE_MODULES:  # each module makes itself callable on import (predictor/_callable.py)
        import sys

        if name == "predict":  # a name from each module imports it (``from . import x`` would recurse here)
            from .predict import predict_file  # noqa: F401
        elif name == "sweep":
            from .sweep import run_sweep  # noqa: F401
        elif name == "compare":
            from .compare import compare  # noqa: F401
        else:
            from .validate import validate  # noqa: F401
        return sys.modules[f"{__name__}.{name}"]
    raise AttributeError(f"module 'predictor' has no attribute {name!r}")
