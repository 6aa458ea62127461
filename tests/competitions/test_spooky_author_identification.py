"""spooky-author-identification: broken submissions are rejected; the sample's score."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from mle_gym.competitions import get_competition
from mle_gym.competitions.catalog.spooky_author_identification import AUTHORS, SAMPLE_PROBABILITIES
from mle_gym.grading import grade
from tests.competitions.support import assert_invalid, grade_frame

COMP = get_competition("spooky-author-identification")


@pytest.fixture
def answers(dirs) -> pd.DataFrame:
    return pd.read_csv(dirs.private / "test.csv")


def _thirds(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.assign(EAP=0.5, HPL=0.25, MWS=0.25)


CASES = {
    "missing rows": (lambda f: f.iloc[3:], r"3 test id\(s\) have no row"),
    "unknown id": (
        lambda f: pd.concat([f, f.iloc[:1].assign(id="id99999")]),
        r"ids that are not in the test set: 'id99999'",
    ),
    "duplicate rows": (lambda f: pd.concat([f, f.iloc[:2]]), r"2 duplicate row\(s\)"),
    "author column missing": (lambda f: f.drop(columns="MWS"), r"missing column\(s\) 'MWS'"),
    "lower-case header": (lambda f: f.rename(columns={"EAP": "eap"}), r"missing column\(s\) 'EAP'"),
    "empty value": (
        lambda f: f.assign(HPL=[None, *list(f.HPL[1:])]),
        r"'HPL' has 1 empty or missing value\(s\)",
    ),
    "not a number": (
        lambda f: f.astype({"EAP": object}).assign(EAP="Poe"),
        r"'EAP' must hold finite numbers; found 'Poe'",
    ),
    "infinite": (lambda f: f.assign(EAP=math.inf), r"'EAP' must hold finite numbers"),
    "above one": (
        lambda f: f.assign(EAP=1.5, HPL=-0.25, MWS=-0.25),
        r"'EAP' must hold probabilities in \[0, 1\]; found '1.5'",
    ),
    "negative": (
        lambda f: f.assign(EAP=0.75, HPL=-0.25, MWS=0.5),
        r"'HPL' must hold probabilities in \[0, 1\]; found '-0.25'",
    ),
    "rows not summing to one": (
        lambda f: f.assign(EAP=0.9, HPL=0.3, MWS=0.3),
        r"row\(s\) have probabilities that do not sum to one",
    ),
    "scores instead of probabilities": (
        lambda f: f.assign(EAP=0.0, HPL=0.0, MWS=0.0),
        r"do not sum to one .*\(sum 0\)",
    ),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_broken_submission_is_invalid_with_reason(case, answers, dirs, tmp_path) -> None:
    mutate, reason = CASES[case]
    assert_invalid(grade_frame(COMP, dirs.private, mutate(_thirds(answers)), tmp_path), reason)


def test_valid_submission_with_shuffled_rows_and_columns(answers, dirs, tmp_path) -> None:
    frame = _thirds(answers)[["MWS", "id", "HPL", "EAP"]].sample(frac=1, random_state=0)
    report = grade_frame(COMP, dirs.private, frame, tmp_path)
    expected = -(answers[list(AUTHORS)] * [math.log(0.5), math.log(0.25), math.log(0.25)])
    assert report.score == pytest.approx(round(expected.sum(axis=1).mean(), 5))


def test_row_sum_within_mlebench_tolerance_is_accepted(answers, dirs, tmp_path) -> None:
    report = grade_frame(COMP, dirs.private, _thirds(answers).assign(EAP=0.50001), tmp_path)
    assert report.valid_submission, report.error


def _prior_cross_entropy(counts: pd.Series) -> float:
    """Score of the constant sample: -sum_k share_k * log(p_k) over the test authors' shares."""
    shares = counts / counts.sum()
    return -sum(shares[a] * math.log(SAMPLE_PROBABILITIES[a]) for a in AUTHORS)


def test_sample_score_is_cross_entropy_of_the_constant(answers, dirs) -> None:
    report = grade(COMP, dirs.public / "sample_submission.csv", dirs.private)
    counts = answers[list(AUTHORS)].sum()
    assert report.score == pytest.approx(_prior_cross_entropy(counts), abs=5e-6)


def test_spec_sample_score_is_near_the_prior_entropy() -> None:
    # the constants are the authors' shares in Kaggle's train, so on a 10% split the
    # sample scores about their entropy (the exact value depends on the split's counts)
    entropy = -sum(p * math.log(p) for p in SAMPLE_PROBABILITIES.values())
    assert sum(SAMPLE_PROBABILITIES.values()) == pytest.approx(1.0, abs=1e-12)
    assert COMP.sample_score == pytest.approx(entropy, abs=0.01)
