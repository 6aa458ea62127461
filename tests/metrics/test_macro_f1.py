"""Macro F1 over integer class ids: hand values, scikit-learn, and MLE-bench's label set."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import f1_score

from mle_gym.grading.errors import InvalidSubmission
from mle_gym.grading.metrics import METRICS
from mle_gym.grading.metrics.macro_f1 import integer_classes, macro_f1


def _score(truth: list, predicted: list) -> float:
    ids = [str(i) for i in range(len(truth))]
    answers = pd.DataFrame({"Id": ids, "Predicted": [str(v) for v in truth]})
    predictions = pd.DataFrame({"Id": ids, "Predicted": [str(v) for v in predicted]})
    return macro_f1(answers, predictions, ["Predicted"])


def test_registered_under_its_name() -> None:
    assert METRICS["macro_f1"] is macro_f1


def test_hand_computed_values() -> None:
    # class 0: precision 1, recall 1/2 -> 2/3; class 1: precision 2/3, recall 1 -> 4/5
    assert _score([0, 0, 1, 1], [0, 1, 1, 1]) == pytest.approx((2 / 3 + 4 / 5) / 2)
    assert _score([5, 7], [5, 7]) == 1.0
    assert _score([5, 7], [7, 5]) == 0.0


def test_classes_only_predicted_count_as_zero() -> None:
    # class 0 right (F1 1), class 1 never predicted (0), class 2 not in the answers (0)
    assert _score([0, 1], [0, 2]) == pytest.approx(1 / 3)


def test_constant_prediction_of_an_absent_class_scores_zero() -> None:
    assert _score([1, 2, 3], [0, 0, 0]) == 0.0


def test_agrees_with_sklearn_on_random_labels() -> None:
    rng = np.random.default_rng(0)
    truth, predicted = rng.integers(0, 40, 500), rng.integers(0, 50, 500)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = f1_score(truth, predicted, average="macro")
    assert _score(list(truth), list(predicted)) == pytest.approx(expected, abs=1e-12)


def test_integral_floats_read_as_integers_others_refused() -> None:
    assert list(integer_classes(pd.Series(["3", "4.0", " 5"]), "c")) == [3, 4, 5]
    with pytest.raises(InvalidSubmission, match=r"'c' must hold integer class ids; found '2.5'"):
        integer_classes(pd.Series(["1", "2.5"]), "c")
    with pytest.raises(InvalidSubmission, match=r"found 'a', 'b', 'c' and 1 more"):
        integer_classes(pd.Series(["a", "b", "c", "inf"]), "c")
