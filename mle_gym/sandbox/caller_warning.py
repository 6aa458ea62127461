"""Warnings that point at the caller's own line.

Python prints a warning with the source line it names. Named by a fixed `stacklevel`, that
line is one of ours (`return LocalSandbox(**options)`), which tells the reader nothing; here
it is the first frame outside mle_gym and Gymnasium (whose `make` calls our constructors):
the reader's `gym.make(...)`. The `mle-gym` command prints the message alone (cli/show.py).
"""

from __future__ import annotations

import sys
import warnings

#: Top-level packages whose frames a warning passes over: ours, and the one calling our envs.
_PASSED_OVER = frozenset({"mle_gym", "gymnasium"})


def warn_caller(message: str, category: type[Warning] = RuntimeWarning) -> None:
    """`warnings.warn(message, category)` attributed to the first frame outside those."""
    frame, level = sys._getframe(), 1
    while frame is not None and frame.f_globals.get("__name__", "").partition(".")[0] in (
        _PASSED_OVER
    ):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)
