"""ALASKA2's weighted AUC against areas worked out by hand (see each comment) and its
invariances; the side-by-side check with MLE-bench's grader is in the fidelity notes."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from mle_gym.grading.metrics import METRICS
from mle_gym.grading.metrics.weighted_auc import weighted_roc_auc


def _score(truth: list[int], scores: list[float]) -> float:
    answers = pd.DataFrame({"Label": np.array(truth, float)})
    predictions = pd.DataFrame({"Label": np.array(scores, float)})
    return METRICS["alaska_weighted_auc"](answers, predictions, ["Label"])


def test_constant_scores_give_the_diagonal() -> None:
    # The diagonal: band [0, 0.4] holds 0.4^2/2 + 0.6*0.4 = 0.32 (x2), band [0.4, 1] holds
    # 0.6^2/2 = 0.18; (0.64 + 0.18) / 1.4 = 41/70.
    assert _score([0, 1, 0, 1], [0.3, 0.3, 0.3, 0.3]) == pytest.approx(41 / 70, abs=1e-15)


def test_perfect_and_reversed_rankings() -> None:
    assert _score([0, 1, 0, 1], [0.1, 0.9, 0.2, 0.8]) == 1.0
    assert _score([0, 1, 0, 1], [0.9, 0.1, 0.8, 0.2]) == 0.0


def test_vertical_step_through_the_band_edge() -> None:
    # P .9, N .8, P .7, N .1: ROC (0,0) (0,.5) (.5,.5) (.5,1) (1,1); the edge point is (0,.4).
    # Band [0,.4]: a full-width strip, 0.4 (x2 = 0.8). Band [.4,1]: 0.1 over [0,.5] and 0.6
    # over [.5,1], 0.35. (0.8 + 0.35) / 1.4 = 23/28, where the plain AUC is 0.75.
    truth, scores = [1, 0, 1, 0], [0.9, 0.8, 0.7, 0.1]
    assert _score(truth, scores) == pytest.approx(23 / 28, abs=1e-15)
    assert roc_auc_score(truth, scores) == 0.75


def test_edge_point_interpolated_on_a_diagonal_segment() -> None:
    # A tie (P, N) at .9 draws (0,0)-(.5,.5); the edge point is (.4,.4), not a ROC point.
    # Band [0,.4]: 0.4^2/2 + 0.6*0.4 = 0.32 (x2 = 0.64). Band [.4,1]: the triangle up to
    # (.5,.5), 0.005, then 0.6 over [.5,1], 0.3. (0.64 + 0.305) / 1.4 = 0.675.
    assert _score([1, 0, 1, 0], [0.9, 0.9, 0.5, 0.1]) == pytest.approx(0.675, abs=1e-15)


def test_only_the_ranking_matters() -> None:
    rng = np.random.default_rng(0)
    truth = rng.integers(0, 2, 300)
    scores = rng.random(300) + truth * 0.3
    base = weighted_roc_auc(truth, scores)
    assert weighted_roc_auc(truth, 1000 * scores - 7) == base
    assert weighted_roc_auc(truth, np.exp(scores)) == base
    # Not the plain AUC: the low-TPR band weighs double.
    assert base != pytest.approx(roc_auc_score(truth, scores), abs=1e-3)
