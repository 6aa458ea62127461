"""Metrics by name, gathered from every module of this package.

Each module defines `METRICS: dict[str, Metric]`. A metric receives the answers and the
predictions already validated, typed and sorted by id, plus the target column names, and
returns the score; it may raise `InvalidSubmission` for rules only it can check (e.g.
probabilities of a row that must sum to one).

The modules (and scikit-learn, which several import) load on the first look-up in
`METRICS`, not when the package is imported: `import mle_gym` must stay cheap.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterator, Mapping

Metric = Callable[["pd.DataFrame", "pd.DataFrame", list[str]], float]  # noqa: F821


def _collect() -> dict[str, Metric]:
    found: dict[str, Metric] = {}
    for info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{info.name}")
        for name, fn in getattr(module, "METRICS", {}).items():
            if name in found:
                raise RuntimeError(f"metric {name!r} is defined twice (again in {info.name})")
            found[name] = fn
    return found


class _Metrics(Mapping[str, Metric]):
    """A read-only mapping that collects the metric modules on first use."""

    def __init__(self) -> None:
        self._found: dict[str, Metric] | None = None

    def _all(self) -> dict[str, Metric]:
        if self._found is None:
            self._found = _collect()
        return self._found

    def __getitem__(self, name: str) -> Metric:
        return self._all()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())


METRICS: Mapping[str, Metric] = _Metrics()
