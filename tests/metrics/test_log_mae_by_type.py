"""Grouped log-MAE: hand values, Kaggle's floor, and the exact packing of answers."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from mle_gym.formats.packed_answers import pack, unpack
from mle_gym.grading.metrics import METRICS

log_mae_by_type = METRICS["log_mae_by_type"]


def _score(values: list[str], types: list[str], predicted: list[float]) -> float:
    packed = pd.to_numeric(pack(pd.Series(values), pd.Series(types))).astype(float)
    answers = pd.DataFrame({"y": packed})
    return log_mae_by_type(answers, pd.DataFrame({"y": predicted}), ["y"])


def test_by_hand() -> None:
    # Type a: errors 1 and 3 (MAE 2); type b: error 0.5 (MAE 0.5): (log 2 + log 0.5) / 2 = 0.
    assert _score(["1.5", "-2", "84.8076"], ["a", "a", "b"], [2.5, 1, 84.3076]) == pytest.approx(0)
    assert _score(["10", "0"], ["a", "b"], [11, math.e]) == pytest.approx(0.5)


def test_an_exact_group_is_floored_at_1e_9() -> None:
    assert _score(["5.25", "1"], ["a", "b"], [5.25, 2]) == pytest.approx(math.log(1e-9) / 2)


def test_packing_restores_the_parsed_doubles_exactly() -> None:
    rng = np.random.default_rng(0)
    values = [repr(float(v)) for v in np.round(rng.normal(0, 80, 2000), 4)]
    values += ["0.0", "-0.0", "1e-05", "-36.2576", "210.0", "3"]
    types = rng.choice(["1JHC", "2JHH", "3JHN"], len(values))
    packed = pd.to_numeric(pack(pd.Series(values), pd.Series(types))).to_numpy(float)
    restored, groups = unpack(packed)
    assert (restored == np.array([float(v) for v in values])).all()
    assert (groups == pd.factorize(pd.Series(types), sort=True)[0]).all()


def test_answers_that_cannot_be_packed_exactly_are_refused() -> None:
    with pytest.raises(ValueError, match="exactly"):
        pack(pd.Series(["84.80760000000001"]), pd.Series(["a"]))
    with pytest.raises(ValueError, match="groups"):
        pack(pd.Series(["1"] * 17), pd.Series([str(i) for i in range(17)]))
