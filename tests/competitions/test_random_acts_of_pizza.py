"""random-acts-of-pizza: layout, submission rules and the sample's AUC of one half."""

from __future__ import annotations

import json
import zipfile

import pandas as pd
import pytest

from mle_gym.competitions import get_competition
from tests.competitions.support import assert_scores_like_the_sample, grade_frame
from tests.fixtures.raw.random_acts_of_pizza import TEST_FIELDS

COMP = get_competition("random-acts-of-pizza")
TARGET = "requester_received_pizza"


@pytest.fixture(scope="module")
def sample(dirs) -> pd.DataFrame:
    return pd.read_csv(dirs.public / "sampleSubmission.csv", dtype=str)


def test_layout(dirs) -> None:
    train = json.loads((dirs.public / "train.json").read_text())
    test = json.loads((dirs.public / "test.json").read_text())
    answers = pd.read_csv(dirs.private / "test.csv")
    # 60 of 220 requests were Kaggle's test set: the same share of the 160 labelled ones.
    assert (len(train), len(test)) == (116, 44)
    assert all(list(row) == TEST_FIELDS for row in test)
    assert [row["request_id"] for row in test] == answers["request_id"].tolist()
    assert set(answers[TARGET]) <= {0, 1}
    for stem in ("train", "test"):
        with zipfile.ZipFile(dirs.public / f"{stem}.zip") as zf:
            assert zf.read(f"{stem}.json") == (dirs.public / f"{stem}.json").read_bytes()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda s: s.iloc[1:], "test id(s) have no row"),
        (lambda s: pd.concat([s, s.iloc[:1].assign(request_id="t3_zzzz")]), "not in the test set"),
        (lambda s: pd.concat([s, s.iloc[:1]]), "duplicate row"),
        (lambda s: s.drop(columns=TARGET), f"missing column(s) '{TARGET}'"),
        (lambda s: s.assign(**{TARGET: ""}), "empty or missing value"),
        (lambda s: s.assign(**{TARGET: "True"}), "must hold finite numbers"),
        (lambda s: s.assign(**{TARGET: "2"}), "probabilities in [0, 1]"),
    ],
)
def test_invalid_submissions_are_rejected(dirs, sample, tmp_path, change, message) -> None:
    report = grade_frame(COMP, dirs.private, change(sample.copy()), tmp_path)
    assert not report.valid_submission
    assert message in report.error


def test_constant_prediction_scores_the_sample_auc(dirs, sample, tmp_path) -> None:
    """MLE-bench's sample predicts 0 everywhere; any constant has an AUC of exactly 1/2."""
    constant = sample.assign(**{TARGET: "0.25"})
    assert_scores_like_the_sample(
        COMP, dirs, constant, tmp_path, sample_file="sampleSubmission.csv", score=0.5
    )
