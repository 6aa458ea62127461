"""Heavy libraries on first use, so `import mle_gym` stays close to `import gymnasium`.

Importing the package registers every competition, which imports every catalog module; if
each pulled in pandas and scikit-learn at import time, `import mle_gym` and `mle-gym --help`
would take seconds. Catalog modules write `from mle_gym.lazy import pd` (or `sklearn`
functions from here) and pay for the library only when a competition is prepared or graded.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from types import ModuleType
from typing import Any


class LazyModule:
    """Stands for a module and imports it on the first attribute access."""

    def __init__(self, name: str) -> None:
        self._name = name

    def _module(self) -> ModuleType:
        return importlib.import_module(self._name)

    def __getattr__(self, attribute: str) -> Any:
        return getattr(self._module(), attribute)

    def __repr__(self) -> str:
        return f"<lazy module {self._name!r}>"


pd: Any = LazyModule("pandas")
np: Any = LazyModule("numpy")


def train_test_split(*args: Any, **kwargs: Any) -> Any:
    """scikit-learn's `train_test_split`, imported when a competition is prepared."""
    from sklearn.model_selection import train_test_split as split

    return split(*args, **kwargs)


def lazy_exports(package: str, exports: dict[str, str]) -> Callable[[str], Any]:
    """A package's module `__getattr__` that imports each of `exports` (name -> the module
    defining it) on first use, so importing one module of the package loads no other."""

    def __getattr__(name: str) -> Any:
        if name in exports:
            return getattr(importlib.import_module(exports[name]), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__
