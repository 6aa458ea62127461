"""micro_f1_labels: hand values, scikit-learn's result, and the rules MLE-bench's route
implies (unknown classes, padded names and missing cells are wrong answers)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import f1_score

from mle_gym.grading.metrics import METRICS
from mle_gym.grading.metrics.label_f1 import micro_f1_labels


def _score(truth: list[str], predicted: list[str]) -> float:
    ids = [f"r{i}" for i in range(len(truth))]
    return micro_f1_labels(
        pd.DataFrame({"id": ids, "c": truth}), pd.DataFrame({"id": ids, "c": predicted}), ["c"]
    )


def test_registered_under_its_name() -> None:
    assert METRICS["micro_f1_labels"] is micro_f1_labels


def test_hand_values() -> None:
    # 2 of 3 right: TP 2, FP 1, FN 1 -> 2*2 / (4 + 1 + 1) = 2/3
    assert _score(["Maize", "Charlock", "Maize"], ["Maize", "Maize", "Maize"]) == pytest.approx(
        2 / 3
    )
    assert _score(["a", "b"], ["a", "b"]) == 1.0
    assert _score(["a", "b"], ["b", "a"]) == 0.0


def test_equals_sklearn_and_accuracy_on_random_labels() -> None:
    rng = np.random.default_rng(0)
    classes = ["Black-grass", "Common wheat", "Fat Hen", "Sugar beet"]
    truth = list(rng.choice(classes, 300))
    predicted = list(rng.choice([*classes, "Weed"], 300))
    expected = f1_score(truth, predicted, average="micro")
    assert _score(truth, predicted) == expected
    assert expected == pytest.approx(np.mean(np.array(truth) == np.array(predicted)))


def test_unknown_or_padded_class_is_wrong() -> None:
    assert _score(["Maize", "Maize"], ["Maize", "Corn"]) == 0.5
    assert _score(["Maize", "Maize"], ["Maize", " Maize"]) == 0.5


@pytest.mark.parametrize("spelling", ["", "NA", "null", "nan"])
def test_missing_cells_are_wrong_answers(spelling: str) -> None:
    assert _score(["a", "b", "c", "d"], ["a", spelling, "c", "nan"]) == 0.5
    assert _score(["a", "b"], [spelling, spelling]) == 0.0
