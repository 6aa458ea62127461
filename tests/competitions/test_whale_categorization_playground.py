"""whale-categorization-playground: MLE-bench's per-whale split rules, new_whale relabelling,
broken submissions rejected, MAP@5 with new_whale as a plain label."""

from __future__ import annotations

import pandas as pd
import pytest

from mle_gym.competitions import get_competition
from mle_gym.grading import grade
from tests.competitions.support import assert_invalid, grade_frame

COMP = get_competition("whale-categorization-playground")
GUESS = ["new_whale", "w_1287fbc", "w_98baff9", "w_7554f44", "w_1eafe46"]


@pytest.fixture
def answers(dirs) -> pd.DataFrame:
    return pd.read_csv(dirs.private / "test.csv")


@pytest.fixture
def raw(dirs) -> pd.DataFrame:
    return pd.read_csv(dirs.raw / "train.csv")


def test_every_whale_with_two_photos_is_on_both_sides(answers, raw, dirs) -> None:
    train = pd.read_csv(dirs.public / "train.csv")
    assert len(train) + len(answers) == len(raw)
    assert not set(train["Image"]) & set(answers["Image"])
    # train.csv keeps Kaggle's rows and labels, in Kaggle's order.
    assert train.equals(raw[raw["Image"].isin(train["Image"])].reset_index(drop=True))
    test_whales = set(raw.loc[raw["Image"].isin(answers["Image"]), "Id"])
    counts = raw["Id"].value_counts()
    for whale in counts[counts >= 2].index:
        assert whale in set(train["Id"]) and whale in test_whales


def test_test_only_whales_become_new_whale(answers, raw, dirs) -> None:
    train_whales = set(pd.read_csv(dirs.public / "train.csv")["Id"])
    original = answers.merge(raw, on="Image", suffixes=("", "_raw"))
    relabelled = original[original["Id"] != original["Id_raw"]]
    assert len(relabelled) >= 1, "the fixture must send a single-photo whale to test"
    assert (relabelled["Id"] == "new_whale").all()
    assert not set(relabelled["Id_raw"]) & train_whales
    kept = original[original["Id"] == original["Id_raw"]]
    assert set(kept["Id"]) - {"new_whale"} <= train_whales


def test_images_and_layout(answers, dirs) -> None:
    assert sorted(p.name for p in dirs.public.iterdir()) == [
        "sample_submission.csv",
        "test",
        "train",
        "train.csv",
    ]
    test_dir = dirs.public / "test"
    assert sorted(p.name for p in test_dir.iterdir()) == sorted(answers["Image"])
    for image in answers["Image"]:
        assert (test_dir / image).read_bytes() == (dirs.raw / "train" / image).read_bytes()


def test_sample_scores_one_over_the_rank_of_each_hit(answers, dirs) -> None:
    hits = [1 / (GUESS.index(w) + 1) for w in answers["Id"] if w in GUESS]
    assert {"new_whale", "w_1287fbc"} <= set(answers["Id"])
    score = grade(COMP, dirs.public / "sample_submission.csv", dirs.private).score
    assert score == round(sum(hits) / len(answers), 5)


CASES = {
    "missing rows": (lambda f: f.iloc[3:], r"3 test id\(s\) have no row"),
    "unknown image": (
        lambda f: pd.concat([f, f.iloc[:1].assign(Image="nope.jpg")]),
        r"ids that are not in the test set: 'nope.jpg'",
    ),
    "duplicate rows": (lambda f: pd.concat([f, f.iloc[:2]]), r"2 duplicate row\(s\)"),
    "target missing": (lambda f: f.drop(columns="Id"), r"missing column\(s\) 'Id'"),
    "extra column": (lambda f: f.assign(score=1), r"unexpected column\(s\) 'score'"),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_broken_submission_is_invalid_with_reason(case, answers, dirs, tmp_path) -> None:
    mutate, reason = CASES[case]
    assert_invalid(grade_frame(COMP, dirs.private, mutate(answers), tmp_path), reason)


def test_new_whale_is_a_plain_label(answers, dirs, tmp_path) -> None:
    n = len(answers)
    new = int((answers["Id"] == "new_whale").sum())
    always_new = answers.assign(Id="w_0000000 new_whale new_whale")
    assert grade_frame(COMP, dirs.private, always_new, tmp_path).score == round(new / 2 / n, 5)
    # Case counts and the answer after two repeats of a miss sits at rank 3.
    assert grade_frame(COMP, dirs.private, answers.assign(Id="NEW_WHALE"), tmp_path).score == 0
    repeated = answers.assign(Id=[f"x x {w}" for w in answers["Id"]])
    assert grade_frame(COMP, dirs.private, repeated, tmp_path).score == round(1 / 3, 5)
