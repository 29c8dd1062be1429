"""Modules that are also API functions: ``predictor.predict`` (the pipeline module) called as
``predictor.predict(...)`` runs ``predictor.api.predict``. See predictor/__init__.py."""
from __future__ import annotations

import sys
import types


class _CallableModule(types.ModuleType):
    def __call__(self, *args, **kwargs):
        from . import api

        return getattr(api, self.__name__.rsplit(".", 1)[1])(*args, **kwargs)


def make_callable(module_name: str) -> None:
    """Give the module ``module_name`` (one of predict, sweep, compare, validate) the API function's call."""
    sys.modules[module_name].__class__ = _CallableModule
