"""jigsaw-unintended-bias: layout, broken submissions with their reason, the 0.5 threshold
on predictions, and scores known in closed form (sample 1/2, exact 1, inverted 0)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from mle_gym.competitions import get_competition
from tests.competitions.support import assert_invalid, assert_scores_like_the_sample, grade_frame

COMP = get_competition("jigsaw-unintended-bias-in-toxicity-classification")


@pytest.fixture
def truth(dirs) -> pd.DataFrame:
    """The test ids with their true toxicity as `prediction`."""
    answers = pd.read_csv(dirs.private / "test.csv")
    return answers[["id"]].assign(prediction=answers["toxicity"])


def test_layout(dirs) -> None:
    assert list(pd.read_csv(dirs.public / "test.csv").columns) == ["id", "comment_text"]
    assert pd.read_csv(dirs.public / "train.csv").shape[1] == 45
    assert pd.read_csv(dirs.private / "test.csv").shape[1] == 45


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda f: f.iloc[3:], r"3 test id\(s\) have no row"),
        (lambda f: pd.concat([f, f.iloc[:1].assign(id=1)]), r"not in the test set: '1'"),
        (
            lambda f: f.rename(columns={"prediction": "toxicity"}),
            r"missing column\(s\) 'prediction'",
        ),
        (lambda f: f.assign(prediction=[None, *f.prediction[1:]]), r"1 empty or missing value"),
        (lambda f: f.astype({"prediction": object}).assign(prediction="toxic"), r"hold numbers"),
    ],
)
def test_broken_submission_is_invalid_with_reason(truth, dirs, tmp_path, change, reason) -> None:
    assert_invalid(grade_frame(COMP, dirs.private, change(truth), tmp_path), reason)


def test_sample_and_any_constant_score_one_half(dirs, truth, tmp_path) -> None:
    """A constant prediction ranks nothing: every AUC, and so every power mean, is 1/2."""
    assert_scores_like_the_sample(
        COMP,
        dirs,
        truth.assign(prediction=0.97),
        tmp_path,
        sample_file="sample_submission.csv",
        score=0.5,
    )


def test_only_the_side_of_one_half_counts(dirs, truth, tmp_path) -> None:
    """Exact toxicity scores 1; so does any prediction on the same side of 0.5 (0.5 is
    toxic, as in the answers); the opposite side everywhere makes every AUC 0."""
    toxic = truth.prediction >= 0.5
    assert 0 < toxic.mean() < 1 and (truth.prediction == 0.5).any()
    assert grade_frame(COMP, dirs.private, truth, tmp_path).score == 1.0
    coarse = truth.assign(prediction=np.where(toxic, 0.5, 0.4999))
    assert grade_frame(COMP, dirs.private, coarse, tmp_path).score == 1.0
    inverted = truth.assign(prediction=np.where(toxic, 0.2, 7.0))
    assert grade_frame(COMP, dirs.private, inverted, tmp_path).score == 0.0
