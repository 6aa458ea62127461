"""Answers packed into one column, for metrics that need more than the target.

Validation hands a metric only the answers' target column. A competition whose metric
also needs something else per row (the coupling type, the identity flags, whether the row
is scored) packs it into that column at load time with one of these, and the metric reads
it back with the same module, so both sides agree on the layout.
"""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import pandas as pd

#: Low bits of a packed answer holding the group index, then the number of decimal places.
GROUP_BITS = 4
PLACES_BITS = 4
#: Integers a float64 holds exactly.
EXACT_LIMIT = 2**53


def pack(values: pd.Series, groups: pd.Series) -> pd.Series:
    """Pack decimal texts (`values`) and their group labels into integer texts.

    Groups are numbered in sorted order. Raises ValueError if the answers do not fit
    (more than 16 groups, more than 15 decimal places, or beyond float64's exact integers).
    """
    codes, labels = pd.factorize(groups, sort=True)
    if len(labels) > 2**GROUP_BITS:
        raise ValueError(f"cannot pack {len(labels)} groups")
    packed = []
    for text, code in zip(values, codes, strict=True):
        number = Decimal(text)
        places = max(0, -number.as_tuple().exponent)
        whole = (int(number.scaleb(places)) << PLACES_BITS | places) << GROUP_BITS | int(code)
        if places >= 2**PLACES_BITS or abs(whole) >= EXACT_LIMIT:
            raise ValueError(f"cannot pack the answer {text!r} exactly into a float64")
        packed.append(str(whole))
    return pd.Series(packed, index=values.index)


def unpack(packed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(values as float64, group codes) from the packed numbers `pack` wrote."""
    whole = np.rint(packed).astype(np.int64)
    groups = whole & (2**GROUP_BITS - 1)
    whole >>= GROUP_BITS
    places = whole & (2**PLACES_BITS - 1)
    units = whole >> PLACES_BITS
    powers = np.array([float(10**p) for p in range(2**PLACES_BITS)])
    return units.astype(np.float64) / powers[places], groups


#: Marks a row that is not scored, in place of its answer (ventilator, osic: see
#: `mle_gym.grading.metrics.mae_scored_rows`); no real target is that far below zero.
UNSCORED = -1e300

#: The identity flags jigsaw-unintended-bias packs beside toxicity, in bit order.
IDENTITIES = (
    "male",
    "female",
    "homosexual_gay_or_lesbian",
    "christian",
    "jewish",
    "muslim",
    "black",
    "white",
    "psychiatric_or_mental_illness",
)


def pack_labels(answers: pd.DataFrame) -> pd.Series:
    """One integer per row: bit 0 is toxicity >= 0.5, bit k + 1 is identity k >= 0.5."""
    packed = (answers["toxicity"] >= 0.5).to_numpy(np.int64)
    for bit, name in enumerate(IDENTITIES, start=1):
        packed |= (answers[name] >= 0.5).to_numpy(np.int64) << bit
    return pd.Series(packed, index=answers.index)
