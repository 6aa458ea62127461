"""Micro F1 over tag sets: hand values, scikit-learn's route as MLE-bench takes it, and the
rules it implies (unknown tags ignored, repeats once, missing spellings empty)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import f1_score
from sklearn.preprocessing import MultiLabelBinarizer

from mle_gym.grading.metrics import METRICS
from mle_gym.grading.metrics.tag_f1 import micro_f1_tags


def _score(truth: list[str], predicted: list[str]) -> float:
    return micro_f1_tags(pd.DataFrame({"t": truth}), pd.DataFrame({"t": predicted}), ["t"])


def test_registered_under_its_name() -> None:
    assert METRICS["micro_f1_tags"] is micro_f1_tags


def test_hand_values() -> None:
    # TP 2 (a, c), FP 1 (e on row 1), FN 2 (d, e on row 2): 2*2 / (4 + 1 + 2) = 4/7.
    assert _score(["a d", "c e"], ["a e", "c"]) == pytest.approx(4 / 7)
    assert _score(["a b"], ["b  a"]) == 1.0
    assert _score(["a b"], ["a a a"]) == pytest.approx(2 / 3)  # repeats count once


def test_tags_no_answer_holds_are_ignored() -> None:
    assert _score(["a", "b"], ["a zzz", "b yyy xxx"]) == 1.0
    assert _score(["a", "b"], ["a b", "b"]) == pytest.approx(2 * 2 / (4 + 1))


@pytest.mark.parametrize("spelling", ["", "NA", "null", "None", "nan"])
def test_missing_spellings_hold_no_tag(spelling: str) -> None:
    assert _score(["a", spelling], ["a", "a"]) == pytest.approx(2 / 3)
    assert _score(["a", "b"], ["a", spelling]) == pytest.approx(2 / 3)


def test_nothing_to_count_scores_zero() -> None:
    assert _score(["", ""], ["", "zzz"]) == 0.0


def test_matches_mlebench_route_through_scikit_learn() -> None:
    """MultiLabelBinarizer with the answers' tags as classes, then micro f1_score."""
    rng = np.random.default_rng(9)
    tags = np.array(["c#", "java", "python", "php", "r", "c++"])
    truth = [" ".join(rng.choice(tags[:5], rng.integers(1, 4))) for _ in range(300)]
    predicted = [" ".join(rng.choice(tags, rng.integers(0, 4))) for _ in range(300)]
    truth[0] = "r"  # every answer class appears
    binarizer = MultiLabelBinarizer(classes=sorted({t for row in truth for t in row.split()}))
    y_true = binarizer.fit_transform([row.split() for row in truth])
    with pytest.warns(UserWarning, match="unknown class"):
        y_pred = binarizer.transform([row.split() for row in predicted])
    expected = f1_score(y_true, y_pred, average="micro")
    assert _score(truth, predicted) == pytest.approx(expected)
