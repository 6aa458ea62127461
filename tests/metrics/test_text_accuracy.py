"""Exact-match text accuracy: hand-computed values, scikit-learn, and MLE-bench's reading."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
from pandas._libs.parsers import STR_NA_VALUES
from sklearn.metrics import accuracy_score

from mle_gym.grading.metrics import METRICS
from mle_gym.grading.metrics.text_accuracy import PANDAS_MISSING, text_accuracy
from mle_gym.grading.validation import read_as_text


def _frames(truth: list[str], predicted: list[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    ids = [f"0_{i}" for i in range(len(truth))]
    return (
        pd.DataFrame({"id": ids, "after": truth}),
        pd.DataFrame({"id": ids, "after": predicted}),
    )


def _score(truth: list[str], predicted: list[str]) -> float:
    return text_accuracy(*_frames(truth, predicted), ["after"])


def test_registered_under_its_name() -> None:
    assert METRICS["text_accuracy"] is text_accuracy


def test_hand_computed_share_of_exact_matches() -> None:
    assert _score(["one", "two", "three", "four"], ["one", "two", "three", "for"]) == 0.75
    assert _score(["a"], ["a"]) == 1.0
    assert _score(["a"], ["b"]) == 0.0


def test_agrees_with_sklearn_on_ordinary_strings() -> None:
    rng = np.random.default_rng(0)
    words = np.array(["the", "quick", "fox", "six feet", "b b c", "двенадцать"])
    truth, predicted = rng.choice(words, 200), rng.choice(words, 200)
    assert _score(list(truth), list(predicted)) == pytest.approx(accuracy_score(truth, predicted))


@pytest.mark.parametrize(
    ("truth", "predicted"),
    [
        ("Fox", "fox"),  # case matters
        ("six feet", "six  feet"),  # inner spacing matters
        ("ёлка", "елка"),  # letters differ
        ("caf\u00e9", "cafe\u0301"),  # composed and decomposed forms are different strings
        ("", "sil"),
        ("none", ""),  # only pandas' exact missing spellings fold together
    ],
)
def test_different_strings_do_not_match(truth: str, predicted: str) -> None:
    assert _score([truth], [predicted]) == 0.0


@pytest.mark.parametrize("spelling", sorted(PANDAS_MISSING))
def test_missing_spellings_match_an_empty_answer(spelling: str) -> None:
    assert _score([""], [spelling]) == 1.0
    assert _score([spelling], ["nan"]) == 1.0


def test_missing_spellings_are_pandas_defaults() -> None:
    assert PANDAS_MISSING == STR_NA_VALUES


def test_every_target_column_must_match() -> None:
    answers = pd.DataFrame({"id": ["a", "b"], "x": ["1", "2"], "y": ["p", "q"]})
    predictions = answers.assign(y=["p", "r"])
    assert text_accuracy(answers, predictions, ["x", "y"]) == 0.5


def _mlebench_score(answers_csv: str, submission_csv: str) -> float:
    """MLE-bench's grading: default pandas reading, sort by id, cast to str, accuracy.

    Its pandas 2 casts a missing cell to 'nan'; `str()` per cell does the same on pandas 3.
    """
    answers = pd.read_csv(io.StringIO(answers_csv)).sort_values("id")
    submission = pd.read_csv(io.StringIO(submission_csv)).sort_values("id")
    truth, predicted = ([str(v) for v in f["after"].astype(object)] for f in (answers, submission))
    return accuracy_score(truth, predicted)


def test_matches_mlebench_grading_of_the_same_files(tmp_path) -> None:
    answers_csv = (
        '"id","after"\n"0_0",""\n"0_1","None"\n"0_2","n a"\n"0_3","привет"\n'
        '"0_4","a, b"\n"0_5","say ""hi"""\n"0_6","NA"\n"0_7","12"\n'
    )
    submission_csv = (
        'id,after\n0_0,None\n0_1,\n0_2,n a\n0_3,привет\n0_4,"a, b"\n0_5,"say ""hi"""\n'
        "0_6,null\n0_7,twelve\n"
    )
    files = {}
    for name, text in (("answers", answers_csv), ("submission", submission_csv)):
        files[name] = tmp_path / f"{name}.csv"
        files[name].write_text(text, encoding="utf-8")
    ours = text_accuracy(
        read_as_text(files["answers"]).sort_values("id").reset_index(drop=True),
        read_as_text(files["submission"]).sort_values("id").reset_index(drop=True),
        ["after"],
    )
    assert ours == pytest.approx(_mlebench_score(answers_csv, submission_csv)) == 7 / 8
