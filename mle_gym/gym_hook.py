"""Runs a function right after gymnasium is imported (or now, if it already is).

Importing `mle_gym` registers `mle/<id>-v0` with Gymnasium so that `gym.make` works, but
`import mle_gym.grading` also runs the package's `__init__`, and the grader (on the host,
in a child process, or in a tool that only scores files) must not load gymnasium or the
envs. So registration waits for gymnasium: a finder on `sys.meta_path` sees its import,
lets the usual finders locate it, and registers once its module has run. Either import
order then works: `import mle_gym; import gymnasium` as well as the reverse, and
`gym.make("mle_gym:mle/<id>-v0")`, which imports mle_gym from inside gymnasium.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys
from collections.abc import Callable
from importlib.machinery import ModuleSpec
from types import ModuleType

TARGET = "gymnasium"


class _AfterImport(importlib.abc.MetaPathFinder):
    """Finds nothing itself; wraps the loader of `TARGET` to call `then` after it ran."""

    def __init__(self, then: Callable[[], object]) -> None:
        self._then = then

    def find_spec(self, fullname: str, path: object = None, target: object = None):
        if fullname != TARGET:
            return None
        sys.meta_path.remove(self)  # one use; and the search below must not find us again
        spec: ModuleSpec | None = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None:
            return spec
        run_module = spec.loader.exec_module
        then = self._then

        def exec_module(module: ModuleType) -> None:
            run_module(module)
            then()

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def after_gymnasium_import(then: Callable[[], object]) -> None:
    """Call `then` now if gymnasium is imported, else right after its import."""
    if TARGET in sys.modules:
        then()
    elif not any(isinstance(f, _AfterImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterImport(then))
