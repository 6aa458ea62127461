"""herbarium-2022-fgvc9: every species split 80:20, both sides renamed, macro F1 grading."""

from __future__ import annotations

import json
from collections import Counter

import pandas as pd
import pytest

from mle_gym.competitions import get_competition
from tests.competitions.support import assert_invalid, grade_frame
from tests.fixtures.raw.herbarium_2022_fgvc9 import SIZES

COMP = get_competition("herbarium-2022-fgvc9")

#: Test images per category: train_test_split's 20%, rounded up.
HELD_OUT = {0: 1, 1: 1, 15500: 3, 873: 1, 2045: 2}


@pytest.fixture
def answers(dirs) -> pd.DataFrame:
    return pd.read_csv(dirs.private / "answers.csv")


def test_every_category_on_both_sides_train_renumbered(answers, dirs) -> None:
    assert dict(Counter(answers["Predicted"])) == HELD_OUT
    train = json.loads((dirs.public / "train_metadata.json").read_text())
    ids = [image["image_id"] for image in train["images"]]
    expected = [f"{c:05d}__{k:03d}" for c in SIZES for k in range(1, SIZES[c] - HELD_OUT[c] + 1)]
    assert sorted(ids) == sorted(expected)
    assert [a["image_id"] for a in train["annotations"]] == ids
    on_disk = {
        str(p.relative_to(dirs.public / "train_images"))
        for p in (dirs.public / "train_images").rglob("*.jpg")
    }
    assert on_disk == {image["file_name"] for image in train["images"]}


def test_public_test_metadata_is_a_list_of_renamed_images(answers, dirs) -> None:
    test = json.loads((dirs.public / "test_metadata.json").read_text())
    assert [image["image_id"] for image in test] == [str(i) for i in answers["Id"]]
    assert [image["file_name"] for image in test] == [f"000/test-{n:06d}.jpg" for n in range(8)]
    assert all((dirs.public / "test_images" / image["file_name"]).is_file() for image in test)
    assert set(test[0]) == {"image_id", "file_name", "license"}


CASES = {
    "missing rows": (lambda f: f.iloc[1:], r"1 test id\(s\) have no row"),
    "unknown id": (lambda f: f.assign(Id=f["Id"].astype(str) + "x"), r"not in the test set"),
    "scientific name": (lambda f: f.assign(Predicted="Poa sp1"), r"integer class ids"),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_broken_submission_is_invalid_with_reason(case, answers, dirs, tmp_path) -> None:
    mutate, reason = CASES[case]
    assert_invalid(grade_frame(COMP, dirs.private, mutate(answers), tmp_path), reason)


def test_scores_in_closed_form(answers, dirs, tmp_path) -> None:
    sample = pd.read_csv(dirs.public / "sample_submission.csv")
    assert (sample["Predicted"] == 42).all()
    assert grade_frame(COMP, dirs.private, sample, tmp_path).score == COMP.sample_score == 0.0
    # Category 0's one image called 1: class 0 scores 0, class 1 precision 1/2 -> 2/3.
    wrong = answers.assign(Predicted=answers["Predicted"].replace({0: 1}))
    assert grade_frame(COMP, dirs.private, wrong, tmp_path).score == round((2 / 3 + 3) / 5, 5)
