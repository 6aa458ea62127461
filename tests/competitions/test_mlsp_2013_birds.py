"""mlsp-2013-birds: broken submissions are rejected; pooled AUC; the constant sample's 0.5."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from mle_gym.competitions import get_competition
from mle_gym.competitions.catalog.mlsp_2013_birds import NUM_SPECIES
from tests.competitions.support import assert_invalid, assert_scores_like_the_sample, grade_frame

COMP = get_competition("mlsp-2013-birds")


@pytest.fixture
def answers(dirs) -> pd.DataFrame:
    return pd.read_csv(dirs.private / "answers.csv")


CASES = {
    "missing recording": (
        lambda f: f.iloc[NUM_SPECIES:],
        rf"{NUM_SPECIES} test id\(s\) have no row",
    ),
    "training recording": (
        lambda f: pd.concat([f, f.iloc[:1].assign(Id=0)]),
        r"ids that are not in the test set: '0'",
    ),
    "duplicate rows": (lambda f: pd.concat([f, f.iloc[:2]]), r"2 duplicate row\(s\)"),
    "old three-column format": (
        lambda f: pd.DataFrame({"rec_id": f.Id // 100, "species": f.Id % 100, "probability": 0}),
        r"missing column\(s\) 'Id', 'Probability'",
    ),
    "lower-case header": (
        lambda f: f.rename(columns={"Probability": "probability"}),
        r"missing column\(s\) 'Probability'",
    ),
    "empty value": (
        lambda f: f.assign(Probability=[None] + [0.5] * (len(f) - 1)),
        r"'Probability' has 1 empty or missing value\(s\)",
    ),
    "not a number": (
        lambda f: f.astype({"Probability": object}).assign(Probability="yes"),
        r"'Probability' must hold finite numbers; found 'yes'",
    ),
    "above one": (
        lambda f: f.assign(Probability=1.2),
        r"'Probability' must hold probabilities in \[0, 1\]; found '1.2'",
    ),
    "negative": (lambda f: f.assign(Probability=-0.1), r"'Probability' must hold probabilities"),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_broken_submission_is_invalid_with_reason(case, answers, dirs, tmp_path) -> None:
    mutate, reason = CASES[case]
    assert_invalid(grade_frame(COMP, dirs.private, mutate(answers), tmp_path), reason)


def test_answers_cover_19_species_of_each_hidden_recording(answers, dirs) -> None:
    labels = (dirs.public / "essential_data" / "rec_labels_test_hidden.txt").read_text()
    hidden = sorted(int(line.split(",")[0]) for line in labels.splitlines() if line.endswith(",?"))
    expected = [rec * 100 + s for rec in hidden for s in range(NUM_SPECIES)]
    assert sorted(answers["Id"]) == expected
    assert set(answers["Probability"]) == {0, 1}


def test_auc_is_pooled_over_all_pairs(answers, dirs, tmp_path) -> None:
    scores = np.random.default_rng(0).random(len(answers))
    shuffled = answers.assign(Probability=scores).sample(frac=1, random_state=1)
    report = grade_frame(COMP, dirs.private, shuffled, tmp_path)
    assert report.score == pytest.approx(roc_auc_score(answers["Probability"], scores), abs=5e-6)


def test_constant_submission_scores_one_half_like_the_sample(answers, dirs, tmp_path) -> None:
    # a constant ties every pair, so its AUC is 1/2 whatever the labels: MLE-bench's sample
    constant = answers.assign(Probability=0.3)
    assert_scores_like_the_sample(
        COMP, dirs, constant, tmp_path, sample_file="sample_submission.csv", score=0.5
    )
