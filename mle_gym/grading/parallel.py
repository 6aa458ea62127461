"""Runs the independent pieces of one grade side by side, on the machine's cores.

The heavy steps of a grade (numpy's sorts, pyarrow's kernels) release the GIL, so a
thread per core runs them in parallel: the six columns of a macro ROC AUC, or the parts of
a long text column being reordered. Results come back in the pieces' order, so what is
computed from them is what one thread would compute.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")


def in_parallel(work: Callable[[int], T], pieces: int) -> list[T]:
    """`[work(0), work(1), ...]` for `pieces` pieces, computed in parallel (one after the
    other where no thread can start, as under a tight memory limit)."""
    workers = min(pieces, os.cpu_count() or 1)
    if workers >= 2:
        try:
            with ThreadPoolExecutor(workers, thread_name_prefix="mle-gym-grade") as pool:
                return list(pool.map(work, range(pieces)))
        except RuntimeError as exc:
            if "can't start new thread" not in str(exc):
                raise
    return [work(k) for k in range(pieces)]
