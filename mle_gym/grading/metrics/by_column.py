"""Scores the columns of a wide submission side by side, on the machine's cores.

Column-averaged metrics (macro ROC AUC over six toxicity labels, for one) spend their
time in numpy's sorts, which release the GIL, so a thread per core scores the columns in
parallel. The caller still averages the scores in column order, exactly as the metric's
own macro average does.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor


def score_columns(score: Callable[[int], float], columns: int) -> list[float]:
    """`[score(0), score(1), ...]` for `columns` columns, computed in parallel (one after
    the other where no thread can start, as under a tight memory limit)."""
    workers = min(columns, os.cpu_count() or 1)
    if workers >= 2:
        try:
            with ThreadPoolExecutor(workers, thread_name_prefix="mle-gym-metric") as pool:
                return list(pool.map(score, range(columns)))
        except RuntimeError as exc:
            if "can't start new thread" not in str(exc):
                raise
    return [score(k) for k in range(columns)]
