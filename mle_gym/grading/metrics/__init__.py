"""Metrics by name, gathered from every module of this package.

Each module defines `METRICS: dict[str, Metric]`. A metric receives the answers and the
predictions already validated, typed and sorted by id, plus the target column names, and
returns the score; it may raise `InvalidSubmission` for rules only it can check (e.g.
probabilities of a row that must sum to one).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable

import pandas as pd

Metric = Callable[[pd.DataFrame, pd.DataFrame, list[str]], float]


def _collect() -> dict[str, Metric]:
    found: dict[str, Metric] = {}
    for info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{info.name}")
        for name, fn in getattr(module, "METRICS", {}).items():
            if name in found:
                raise RuntimeError(f"metric {name!r} is defined twice (again in {info.name})")
            found[name] = fn
    return found


METRICS: dict[str, Metric] = _collect()
