"""Word-level Jaccard: hand values, scikit-learn on word sets, missing cells, empty pairs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import jaccard_score
from sklearn.preprocessing import MultiLabelBinarizer

from mle_gym.grading.metrics import METRICS
from mle_gym.grading.metrics.word_jaccard import word_set_jaccard

METRIC = METRICS["tweet_word_jaccard"]


def word_jaccard(first: str, second: str) -> float:
    return word_set_jaccard(set(first.lower().split()), set(second.lower().split()), 1.0)


def _frames(truth: list[str], guess: list[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    ids = [f"t{i}" for i in range(len(truth))]
    return pd.DataFrame({"id": ids, "s": truth}), pd.DataFrame({"id": ids, "s": guess})


def test_hand_computed_values() -> None:
    assert word_jaccard("my dog is amazing", "amazing dog") == pytest.approx(2 / 4)
    assert word_jaccard("Sad  day", "sad\tDAY") == 1.0  # case and any whitespace
    assert word_jaccard("good!", "good") == 0.0  # punctuation stays on the word
    assert word_jaccard("a a a b", "a") == pytest.approx(1 / 2)  # sets, not counts
    assert word_jaccard("x", "") == 0.0


def test_both_empty_is_a_match_not_an_error() -> None:
    assert word_jaccard("", "   ") == 1.0


def test_matches_sklearn_on_word_sets() -> None:
    rng = np.random.default_rng(0)
    vocab = ["a", "B", "b", "c!", "dd", "e"]
    truth = [" ".join(rng.choice(vocab, rng.integers(1, 5))) for _ in range(50)]
    guess = [" ".join(rng.choice(vocab, rng.integers(1, 5))) for _ in range(50)]
    binarizer = MultiLabelBinarizer().fit([s.lower().split() for s in truth + guess])
    expected = jaccard_score(
        binarizer.transform([s.lower().split() for s in truth]),
        binarizer.transform([s.lower().split() for s in guess]),
        average="samples",
    )
    assert METRIC(*_frames(truth, guess), ["s"]) == pytest.approx(expected)


@pytest.mark.parametrize("missing", ["", "NA", "None", "null", "nan", "N/A"])
def test_pandas_missing_spellings_are_empty(missing: str) -> None:
    # MLE-bench's pandas reads these cells as NaN and grades them as ""
    assert METRIC(*_frames(["good day", missing], [missing, missing]), ["s"]) == 0.5


def test_other_text_that_looks_missing_is_kept() -> None:
    assert METRIC(*_frames(["na", "NONE"], ["na", "none"]), ["s"]) == 1.0
