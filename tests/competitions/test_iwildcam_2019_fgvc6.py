"""iwildcam-2019-fgvc6: whole camera locations held out, images re-zipped, macro F1."""

from __future__ import annotations

import zipfile

import pandas as pd
import pytest

from mle_gym.competitions import get_competition
from tests.competitions.support import assert_invalid, grade_frame

COMP = get_competition("iwildcam-2019-fgvc6")


@pytest.fixture
def answers(dirs) -> pd.DataFrame:
    return pd.read_csv(dirs.private / "answers.csv")


def test_test_locations_never_appear_in_train(dirs) -> None:
    train, test = pd.read_csv(dirs.public / "train.csv"), pd.read_csv(dirs.public / "test.csv")
    assert test["location"].nunique() == 3  # 10% of the fixture's 30 locations
    assert not set(train["location"]) & set(test["location"])
    assert "category_id" not in test.columns and train.columns[0] == "category_id"


def test_archives_hold_each_sides_images_flat(dirs) -> None:
    for side in ("train", "test"):
        ids = pd.read_csv(dirs.public / f"{side}.csv")["id"]
        with zipfile.ZipFile(dirs.public / f"{side}_images.zip") as archive:
            assert sorted(archive.namelist()) == sorted(f"{i}.jpg" for i in ids)
            assert archive.testzip() is None


def test_sample_keeps_mlebench_index_column(answers, dirs) -> None:
    sample = pd.read_csv(dirs.public / "sample_submission.csv")
    assert list(sample.columns) == ["Unnamed: 0", "Id", "Category"]
    assert list(sample["Id"]) == list(answers["Id"]) and (sample["Category"] == 0).all()


CASES = {
    "missing rows": (lambda f: f.iloc[1:], r"1 test id\(s\) have no row"),
    "unknown id": (lambda f: f.assign(Id=f["Id"] + "0"), r"not in the test set"),
    "animal name": (lambda f: f.assign(Category="deer"), r"integer class ids; found 'deer'"),
    "wrong column": (lambda f: f.rename(columns={"Category": "category_id"}), r"'Category'"),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_broken_submission_is_invalid_with_reason(case, answers, dirs, tmp_path) -> None:
    mutate, reason = CASES[case]
    assert_invalid(grade_frame(COMP, dirs.private, mutate(answers), tmp_path), reason)


def test_constant_empty_scores_in_closed_form(answers, dirs, tmp_path) -> None:
    # Only class 0 can score: precision n0/N, recall 1 -> F1 2*n0/(N+n0), over all classes.
    n, n0 = len(answers), int((answers["Category"] == 0).sum())
    classes = len(set(answers["Category"]) | {0})
    expected = round(2 * n0 / (n + n0) / classes, 5)
    constant = answers.assign(Category=0).sample(frac=1, random_state=0)
    assert grade_frame(COMP, dirs.private, constant, tmp_path).score == expected
    report = grade_frame(
        COMP, dirs.private, pd.read_csv(dirs.public / "sample_submission.csv"), tmp_path
    )
    assert report.score == expected and "Unnamed: 0" in report.warnings[0]
