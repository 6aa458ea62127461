"""vesuvius_f05: hand-counted F0.5, agreement with scikit-learn's fbeta_score on decoded
masks, refusals, and a value computed by MLE-bench's grader on the same masks."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import fbeta_score

from mle_gym.formats.rle import encode_rle, with_shape
from mle_gym.grading.errors import InvalidSubmission
from mle_gym.grading.metrics import METRICS
from mle_gym.grading.metrics.rle import decode_rle

F05 = METRICS["vesuvius_f05"]


def score(truth: list[str], predicted: list[str], shape: tuple[int, int] = (2, 5)) -> float:
    ids = [chr(ord("a") + i) for i in range(len(truth))]
    answers = pd.DataFrame({"Id": ids, "Predicted": [with_shape(*shape, t) for t in truth]})
    return F05(answers, pd.DataFrame({"Id": ids, "Predicted": predicted}), ["Predicted"])


def test_hand_counted_f05() -> None:
    # Truth {1..4}, prediction {3..8}: TP 2, FP 4, FN 2 -> p 1/3, r 1/2,
    # F0.5 = 1.25 p r / (0.25 p + r) = (5/24) / (7/12) = 5/14.
    assert score(["1 4"], ["3 6"]) == pytest.approx(5 / 14)
    assert score(["1 4"], ["1 4"]) == 1.0
    assert score(["1 4"], ["5 2"]) == 0.0


def test_fragments_are_averaged_not_pooled() -> None:
    # Fragment a perfect (1), fragment b missed (0): mean 0.5.
    assert score(["1 4", "2 2"], ["1 4", "6 1"]) == 0.5


def test_empty_masks_score_zero_as_scikit_learn_does() -> None:
    assert score(["1 4"], [" "]) == 0.0
    assert score([""], [" "]) == 0.0


@pytest.mark.parametrize("seed", range(5))
def test_agrees_with_scikit_learn_on_decoded_masks(seed: int) -> None:
    rng = np.random.default_rng(seed)
    truth, predicted = rng.random((2, 6, 9)) < rng.uniform(0.05, 0.6, (2, 1, 1))
    expected = fbeta_score(truth.ravel(), predicted.ravel(), beta=0.5)
    rles = encode_rle(truth, order="C"), encode_rle(predicted, order="C")
    assert score([rles[0]], [rles[1]], shape=(6, 9)) == expected
    np.testing.assert_array_equal(decode_rle(rles[1], (6, 9), order="C"), predicted)


@pytest.mark.parametrize(
    ("cell", "reason"),
    [
        ("", r"fragment 'a' is empty or missing"),
        ("1 2 5", r"needs start/length pairs"),
        ("8 5", r"ends past the image's last pixel \(10\)"),
        ("+1 2", r"must hold only integers"),
        ("1 3 2 1", r"overlaps the previous run"),
    ],
)
def test_malformed_masks_are_refused(cell: str, reason: str) -> None:
    with pytest.raises(InvalidSubmission, match=reason):
        score(["1 4"], [cell])


def test_matches_mlebench_on_a_random_fragment() -> None:
    rng = np.random.default_rng(11)
    truth, predicted = rng.random((2, 9, 13)) < 0.3
    rles = encode_rle(truth, order="C"), encode_rle(predicted, order="C")
    # MLE-bench's grade() on these masks (answer width 13, height 9) returned this value.
    assert score([rles[0]], [rles[1]], shape=(9, 13)) == 0.32432432432432434
