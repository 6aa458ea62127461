"""text-normalization (Russian): the English checks on Cyrillic data."""

from __future__ import annotations

import pandas as pd
import pytest

from mle_gym.competitions import get_competition
from mle_gym.grading.validation import read_as_text
from tests.competitions.test_text_normalization_challenge_english_language import (
    CASES,
    check_broken_submission,
    check_exotic_strings_grade_like_mlebench,
    check_sample_scores_unchanged_share,
)

COMP = get_competition("text-normalization-challenge-russian-language")


@pytest.fixture
def answers(dirs) -> pd.DataFrame:
    return read_as_text(dirs.private / "answers.csv")


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_broken_submission_is_invalid_with_reason(case, answers, dirs, tmp_path) -> None:
    check_broken_submission(COMP, case, answers, dirs, tmp_path)


def test_exotic_strings_grade_like_mlebench(answers, dirs, tmp_path) -> None:
    assert answers["after"].str.contains("[а-яё]").any()
    check_exotic_strings_grade_like_mlebench(COMP, answers, dirs, tmp_path)


def test_sample_scores_unchanged_share(dirs) -> None:
    check_sample_scores_unchanged_share(COMP, "ru", dirs)
