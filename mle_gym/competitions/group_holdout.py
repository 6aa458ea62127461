"""MLE-bench's split of a table by group (a molecule, a breath): whole groups are held out.

MLE-bench lists the groups of `DataFrame.groupby(key)` (sorted by key), shuffles that list
with `train_test_split(test_size, random_state=0)` and concatenates each part's groups in
the shuffled order, each group's rows in file order. The shuffle depends only on how many
groups there are, so the sorted keys are shuffled instead and the rows put in that order by
a stable sort: the same rows in the same order, without building a frame per group.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd


def split_groups(
    rows: pd.DataFrame, key: str, test_size: float = 0.1
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(train, test) rows, as MLE-bench concatenates its shuffled groups of `key`."""
    import numpy as np
    import pandas as pd
    from sklearn.model_selection import train_test_split

    keys = np.sort(rows[key].unique())
    parts = []
    for part in train_test_split(keys, test_size=test_size, random_state=0):
        rank = rows[key].map(pd.Series(np.arange(len(part)), index=part))
        kept = rank.notna().to_numpy()
        parts.append(rows[kept].iloc[np.argsort(rank[kept].to_numpy(), kind="stable")])
    return parts[0], parts[1]
