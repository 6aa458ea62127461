"""Jigsaw bias AUC (MLE-bench's thresholded variant): packing, thresholds, and agreement with
an independent route (for 0/1 predictions an AUC is the balanced accuracy)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import balanced_accuracy_score

from mle_gym.formats.packed_answers import IDENTITIES, pack_labels
from mle_gym.grading.metrics import METRICS
from mle_gym.grading.metrics.jigsaw_bias import jigsaw_bias_auc


def _answers(rng: np.random.Generator, n: int) -> pd.DataFrame:
    frame = pd.DataFrame({"toxicity": rng.choice([0.0, 0.3, 0.5, 0.8], n)})
    for name in IDENTITIES:
        frame[name] = rng.choice([np.nan, 0.0, 0.4, 0.5, 1.0], n)
    return frame


def _score(answers: pd.DataFrame, prediction: np.ndarray) -> float:
    packed = pd.DataFrame({"p": pack_labels(answers).astype(float)})
    return jigsaw_bias_auc(packed, pd.DataFrame({"p": prediction}), ["p"])


def test_registered_under_its_name() -> None:
    assert METRICS["jigsaw_bias_auc"] is jigsaw_bias_auc


def test_packing_thresholds_at_one_half_and_reads_missing_as_absent() -> None:
    answers = pd.DataFrame(
        {"toxicity": [0.5, 0.49, 1.0], **{name: [np.nan, 0.0, 0.0] for name in IDENTITIES}}
    )
    answers.loc[1, "male"] = 0.5  # bit 1
    answers.loc[2, "psychiatric_or_mental_illness"] = 0.7  # bit 9
    assert pack_labels(answers).tolist() == [1, 1 << 1, 1 | 1 << 9]


def _by_balanced_accuracy(answers: pd.DataFrame, prediction: np.ndarray) -> float:
    toxic = (answers["toxicity"] >= 0.5).to_numpy()
    predicted = prediction >= 0.5

    def auc(rows: np.ndarray) -> float:
        return balanced_accuracy_score(toxic[rows], predicted[rows])

    means = []
    for kind in ("subgroup", "bpsn", "bnsp"):
        values = []
        for name in IDENTITIES:
            mentioned = (answers[name] >= 0.5).to_numpy()
            rows = {
                "subgroup": mentioned,
                "bpsn": mentioned != toxic,
                "bnsp": mentioned == toxic,
            }[kind]
            values.append(auc(rows))
        means.append(np.mean(np.power(values, -5.0)) ** (-1 / 5))
    return 0.25 * auc(np.ones(len(toxic), dtype=bool)) + 0.25 * sum(means)


def test_matches_balanced_accuracy_route_on_random_data() -> None:
    rng = np.random.default_rng(11)
    answers = _answers(rng, 400)
    prediction = rng.random(400)
    expected = _by_balanced_accuracy(answers, prediction)
    assert 0.4 < expected < 0.6
    assert _score(answers, prediction) == pytest.approx(expected)
    better = np.where(rng.random(400) < 0.8, answers["toxicity"], prediction)
    assert _score(answers, better) == pytest.approx(_by_balanced_accuracy(answers, better))


def test_scores_depend_only_on_the_side_of_one_half() -> None:
    rng = np.random.default_rng(2)
    answers = _answers(rng, 200)
    prediction = rng.random(200)
    squashed = np.where(prediction >= 0.5, 0.5, 0.0)
    assert _score(answers, prediction) == _score(answers, squashed)


def test_perfect_is_one_and_inverted_is_zero_not_an_error() -> None:
    """Inverted predictions make every AUC 0: the power mean's limit 0, not a division error."""
    answers = _answers(np.random.default_rng(4), 300)
    toxic = answers["toxicity"].to_numpy() >= 0.5
    assert _score(answers, toxic.astype(float)) == 1.0
    assert _score(answers, (~toxic).astype(float)) == 0.0
