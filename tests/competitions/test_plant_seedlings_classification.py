"""plant-seedlings-classification: broken submissions are rejected; the split follows the
sorted folder listing; training photographs stay filed by species."""

from __future__ import annotations

import pandas as pd
import pytest
from sklearn.model_selection import train_test_split

from mle_gym.competitions import get_competition
from mle_gym.grading import grade
from tests.competitions.support import assert_invalid, grade_frame

COMP = get_competition("plant-seedlings-classification")


@pytest.fixture
def answers(dirs) -> pd.DataFrame:
    return pd.read_csv(dirs.private / "answers.csv")


CASES = {
    "missing rows": (lambda f: f.iloc[1:], r"1 test id\(s\) have no row"),
    "duplicate rows": (lambda f: pd.concat([f, f.iloc[:1]]), r"1 duplicate row\(s\)"),
    "file without .png": (
        lambda f: f.assign(file=f["file"].str[:-4]),
        r"ids that are not in the test set",
    ),
    "species missing": (lambda f: f.drop(columns="species"), r"missing column\(s\) 'species'"),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_broken_submission_is_invalid_with_reason(case, answers, dirs, tmp_path) -> None:
    mutate, reason = CASES[case]
    assert_invalid(grade_frame(COMP, dirs.private, mutate(answers), tmp_path), reason)


def test_sample_scores_the_share_of_sugar_beet(answers, dirs, tmp_path) -> None:
    # the fixture holds 2 sugar beets among the 6 held-out photographs
    assert (answers["species"] == "Sugar beet").sum() == 2 and len(answers) == 6
    sample = grade(COMP, dirs.public / "sample_submission.csv", dirs.private)
    constant = answers.assign(species="Sugar beet").iloc[::-1]
    assert sample.score == grade_frame(COMP, dirs.private, constant, tmp_path).score == 0.33333


def test_padded_unknown_and_empty_names_are_wrong(answers, dirs, tmp_path) -> None:
    names = list(answers["species"])
    names[:3] = [" " + names[0], "Weed", ""]
    report = grade_frame(COMP, dirs.private, answers.assign(species=names), tmp_path)
    assert report.valid_submission and report.score == 0.5


def test_split_follows_sorted_listing_and_keeps_folders(answers, dirs) -> None:
    listing = [
        (p.name, p.parent.name)
        for folder in sorted((dirs.raw / "train").iterdir())
        for p in sorted(folder.glob("*.png"))
    ]
    frame = pd.DataFrame(listing, columns=["file", "species"])
    train, test = train_test_split(frame, test_size=0.14, random_state=0)
    assert list(answers["file"]) == list(test["file"])
    placed = sorted(
        (p.name, p.parent.name) for p in (dirs.public / "train").glob("*/*") if p.is_file()
    )
    assert placed == sorted(zip(train["file"], train["species"], strict=True))
    assert sorted(p.name for p in (dirs.public / "test").iterdir()) == sorted(answers["file"])
    name, species = answers["file"].iloc[0], answers["species"].iloc[0]
    raw_bytes = (dirs.raw / "train" / species / name).read_bytes()
    assert (dirs.public / "test" / name).read_bytes() == raw_bytes
    assert sorted(p.name for p in dirs.public.iterdir()) == [
        "sample_submission.csv",
        "test",
        "train",
    ]
