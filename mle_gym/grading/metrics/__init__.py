"""Metrics by name, gathered from every module of this package.

Each module defines `METRICS: dict[str, Metric]`. A metric receives the answers and the
predictions already validated, typed and sorted by id, plus the target column names, and
returns the score; it may raise `InvalidSubmission` for rules only it can check (e.g.
probabilities of a row that must sum to one).

A module may also define `SCORED_ROWS: dict[str, ScoredRows]` for a metric that reads only
some rows of the answers (MAP@k skips answers that list nothing): given the answer key's
frame and the target names, the rows it reads. Grading then lines up only those rows of a
submission, after checking every row as before, so the outcome is the same.

The modules (and scikit-learn, which several import) load on the first look-up in
`METRICS`, not when the package is imported: `import mle_gym` must stay cheap.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterator, Mapping

Metric = Callable[["pd.DataFrame", "pd.DataFrame", list[str]], float]  # noqa: F821
#: The rows of the answer key's frame a metric reads, as a boolean mask.
ScoredRows = Callable[["pd.DataFrame", list[str]], "np.ndarray"]  # noqa: F821


def _collect(table: str) -> dict[str, Callable]:
    """Every module's dict named `table`, merged."""
    found: dict[str, Callable] = {}
    for info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{info.name}")
        for name, fn in getattr(module, table, {}).items():
            if name in found:
                raise RuntimeError(f"{table}: {name!r} is defined twice (again in {info.name})")
            found[name] = fn
    return found


class _Registry(Mapping[str, Callable]):
    """A read-only mapping that collects the metric modules' dict `table` on first use."""

    def __init__(self, table: str) -> None:
        self._table = table
        self._found: dict[str, Callable] | None = None

    def _all(self) -> dict[str, Callable]:
        if self._found is None:
            self._found = _collect(self._table)
        return self._found

    def __getitem__(self, name: str) -> Callable:
        return self._all()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())


METRICS: Mapping[str, Metric] = _Registry("METRICS")
SCORED_ROWS: Mapping[str, ScoredRows] = _Registry("SCORED_ROWS")
