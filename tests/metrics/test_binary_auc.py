"""binary_roc_auc is scikit-learn's roc_auc_score to the last bit, for every kind of label
column it may be given: the quick path for 0/1 labels, the reference call for the rest."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from mle_gym.grading.metrics.binary_auc import binary_roc_auc


@pytest.mark.parametrize("dtype", [bool, np.int64, np.float64, np.int8])
def test_equals_scikit_learn_to_the_last_bit(dtype: type) -> None:
    rng = np.random.default_rng(3)
    for rows in (2, 7, 1000, 20_000):
        truth = rng.random(rows) < 0.3
        truth[:2] = [True, False]  # both classes
        for scores in (rng.random(rows), rng.random(rows).round(1), np.full(rows, 0.5)):
            labels = truth.astype(dtype)
            assert binary_roc_auc(labels, scores) == roc_auc_score(labels, scores)


def test_other_labels_get_scikit_learns_own_verdict() -> None:
    scores = np.array([0.2, 0.9, 0.4, 0.7])
    for labels in (np.array([-1, 1, -1, 1]), np.array(["no", "yes", "no", "yes"])):
        assert binary_roc_auc(labels, scores) == roc_auc_score(labels, scores) == 1.0
    with pytest.raises(ValueError):  # as roc_auc_score: 0/1/2 is no binary target
        binary_roc_auc(np.array([0, 1, 2, 1]), scores)
    with warnings.catch_warnings():  # one class: undefined, nan with a warning, as there
        warnings.simplefilter("ignore")
        assert np.isnan(binary_roc_auc(np.array([1, 1, 1, 1]), scores))
