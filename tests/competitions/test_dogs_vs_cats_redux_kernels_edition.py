"""dogs-vs-cats-redux-kernels-edition: broken submissions are rejected; 0.5 scores log(2)."""

from __future__ import annotations

import math
import zipfile

import pandas as pd
import pytest

from mle_gym.competitions import get_competition
from mle_gym.grading import grade
from tests.competitions.support import assert_invalid, grade_frame

COMP = get_competition("dogs-vs-cats-redux-kernels-edition")


@pytest.fixture
def sample(dirs) -> pd.DataFrame:
    return pd.read_csv(dirs.public / "sample_submission.csv")


CASES = {
    "missing rows": (lambda f: f.iloc[1:], r"1 test id\(s\) have no row, e.g. '1'"),
    "unknown id": (
        lambda f: pd.concat([f, pd.DataFrame({"id": [0], "label": [0.5]})]),
        r"ids that are not in the test set: '0'",
    ),
    "file names as ids": (
        lambda f: f.assign(id=f["id"].astype(str) + ".jpg"),
        r"ids that are not in the test set: '1.jpg'",
    ),
    "duplicate rows": (lambda f: pd.concat([f, f.iloc[:1]]), r"1 duplicate row\(s\)"),
    "label column missing": (
        lambda f: f.rename(columns={"label": "dog"}),
        r"missing column\(s\) 'label'",
    ),
    "empty value": (
        lambda f: f.assign(label=[None, *list(f.label[1:])]),
        r"'label' has 1 empty or missing value\(s\)",
    ),
    "class names": (lambda f: f.assign(label="dog"), r"'label' must hold finite numbers"),
    "above one": (
        lambda f: f.assign(label=1.2),
        r"must hold probabilities in \[0, 1\]; found '1.2'",
    ),
    "negative": (lambda f: f.assign(label=-0.1), r"must hold probabilities in \[0, 1\]"),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_broken_submission_is_invalid_with_reason(case, sample, dirs, tmp_path) -> None:
    mutate, reason = CASES[case]
    assert_invalid(grade_frame(COMP, dirs.private, mutate(sample), tmp_path), reason)


def test_hard_labels_are_allowed_and_clipped(dirs, tmp_path) -> None:
    answers = pd.read_csv(dirs.private / "answers.csv")
    flipped = answers.assign(label=1 - answers["label"])
    report = grade_frame(COMP, dirs.private, flipped, tmp_path)
    assert report.score == pytest.approx(round(-math.log(2.0**-52), 5))


def test_public_layout_has_renamed_folders_and_flat_zips(dirs) -> None:
    answers = pd.read_csv(dirs.private / "answers.csv")
    assert set(answers["label"]) == {0, 1}
    for name in ("train", "test"):
        with zipfile.ZipFile(dirs.public / f"{name}.zip") as archive:
            members = sorted(archive.namelist())
        assert members == sorted(p.name for p in (dirs.public / name).iterdir())
    test_names = {p.name for p in (dirs.public / "test").iterdir()}
    assert test_names == {f"{i}.jpg" for i in answers["id"]}
    train_names = [p.name for p in (dirs.public / "train").iterdir()]
    cats = sorted(int(n.split(".")[1]) for n in train_names if n.startswith("cat."))
    assert cats == list(range(len(cats)))
    assert len(train_names) + len(test_names) == 120


def test_constant_half_scores_log_two(dirs) -> None:
    report = grade(COMP, dirs.public / "sample_submission.csv", dirs.private)
    assert report.score == pytest.approx(math.log(2), abs=5e-6)
    assert COMP.sample_score == pytest.approx(math.log(2), abs=5e-6)
