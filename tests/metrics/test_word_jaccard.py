"""Word-level Jaccard: hand values, the competition's reference formula, missing spellings."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import jaccard_score
from sklearn.preprocessing import MultiLabelBinarizer

from mle_gym.grading.metrics import METRICS

word_jaccard = METRICS["word_jaccard"]


def _score(truth: list[str], predicted: list[str]) -> float:
    return word_jaccard(pd.DataFrame({"a": truth}), pd.DataFrame({"a": predicted}), ["a"])


def _reference(truth: str, predicted: str) -> float:
    """The formula the competition's evaluation page gives."""
    a, b = set(truth.lower().split()), set(predicted.lower().split())
    common = a & b
    return len(common) / (len(a) + len(b) - len(common))


def test_registered_under_its_name() -> None:
    assert METRICS["word_jaccard"] is word_jaccard


def test_hand_values() -> None:
    assert _score(["New Delhi"], ["new  delhi"]) == 1.0
    assert _score(["a b c"], ["a b d"]) == pytest.approx(2 / 4)
    assert _score(["a b", "x"], ["a", "y"]) == pytest.approx((1 / 2 + 0) / 2)
    assert _score(["a a a b"], ["b"]) == pytest.approx(1 / 2)  # sets: repeats count once
    assert _score(["end."], ["end"]) == 0.0  # punctuation stays on the word


@pytest.mark.parametrize("spelling", ["", "NA", "None", "null", "nan", "N/A"])
def test_missing_spellings_are_an_empty_prediction(spelling: str) -> None:
    assert _score(["na none"], [spelling]) == 0.0
    assert _score(["x", "y"], [spelling, "y"]) == 0.5


def test_both_empty_scores_zero() -> None:
    assert _score(["", "a"], ["", "a"]) == 0.5


def test_matches_the_reference_formula_on_random_text() -> None:
    rng = np.random.default_rng(3)
    words = np.array(["नई", "दिल्ली", "சென்னை", "Nagar", "nagar", "1947", "।", "a,b"])
    truth = [" ".join(rng.choice(words, rng.integers(1, 5))) for _ in range(300)]
    predicted = [" ".join(rng.choice(words, rng.integers(1, 5))) for _ in range(300)]
    expected = np.mean([_reference(t, p) for t, p in zip(truth, predicted, strict=True)])
    assert _score(truth, predicted) == pytest.approx(expected)


def test_matches_scikit_learn_samples_jaccard() -> None:
    """MLE-bench's route: binarised word sets, jaccard_score(average='samples')."""
    rng = np.random.default_rng(5)
    words = ["a", "b", "c", "d", "e"]
    truth = [" ".join(rng.choice(words, rng.integers(0, 4))) for _ in range(200)]
    predicted = [" ".join(rng.choice(words, rng.integers(0, 4))) for _ in range(200)]
    binarizer = MultiLabelBinarizer(classes=words)
    y_true = binarizer.fit_transform([set(t.split()) for t in truth])
    y_pred = binarizer.transform([set(p.split()) for p in predicted])
    expected = jaccard_score(y_true, y_pred, average="samples", zero_division=0.0)
    assert _score(truth, predicted) == pytest.approx(expected)
