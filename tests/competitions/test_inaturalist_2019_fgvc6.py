"""inaturalist-2019-fgvc6: per-species 12% hold-out, tar streamed, top-1 error."""

from __future__ import annotations

import json
import random
import tarfile
from collections import Counter

import pandas as pd
import pytest

from mle_gym.competitions import get_competition
from tests.competitions.support import assert_invalid, grade_frame

COMP = get_competition("inaturalist-2019-fgvc6")

#: Test images per category: none for one image, the last one for two to four, 12%
#: (rounded up by train_test_split) from five on.
HELD_OUT = {400: 3, 644: 1, 3: 1, 1009: 1, 77: 1, 250: 2}


@pytest.fixture
def answers(dirs) -> pd.DataFrame:
    return pd.read_csv(dirs.private / "answers.csv")


def _members(path) -> list[str]:
    with tarfile.open(path) as tar:
        return sorted(m.name for m in tar.getmembers())


def test_each_category_rule_holds_out_its_share(answers, dirs) -> None:
    assert dict(Counter(answers["predicted"])) == HELD_OUT
    train = json.loads((dirs.public / "train2019.json").read_text())
    assert not set(answers["id"]) & {image["id"] for image in train["images"]}
    assert _members(dirs.public / "train_val2019.tar.gz") == sorted(
        image["file_name"].removeprefix("train_val2019/") for image in train["images"]
    )


def test_test_images_moved_without_labels(answers, dirs) -> None:
    test = json.loads((dirs.public / "test2019.json").read_text())
    assert set(test) == {"images", "info", "licenses"}
    assert [image["id"] for image in test["images"]] == list(answers["id"])
    names = [image["file_name"] for image in test["images"]]
    assert all(name.startswith("test2019/") and name.count("/") == 1 for name in names)
    assert _members(dirs.public / "test2019.tar.gz") == sorted(n.split("/")[1] for n in names)
    with tarfile.open(dirs.public / "test2019.tar.gz") as tar:
        assert tar.extractfile(tar.getmembers()[0]).read()[:2] == b"\xff\xd8"  # a JPEG


CASES = {
    "missing rows": (lambda f: f.iloc[1:], r"1 test id\(s\) have no row"),
    "unknown id": (lambda f: f.assign(id=f["id"] + 10_000), r"not in the test set"),
    "species name": (
        lambda f: f.assign(predicted="species 400"),
        r"start each cell with an integer",
    ),
    "empty guess": (lambda f: f.assign(predicted=""), r"start each cell with an integer"),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_broken_submission_is_invalid_with_reason(case, answers, dirs, tmp_path) -> None:
    mutate, reason = CASES[case]
    assert_invalid(grade_frame(COMP, dirs.private, mutate(answers), tmp_path), reason)


def test_scores_in_closed_form(answers, dirs, tmp_path) -> None:
    sample = pd.read_csv(dirs.public / "kaggle_sample_submission.csv")
    assert set(sample["predicted"]) == {random.Random(42).randint(0, 1009)}
    assert grade_frame(COMP, dirs.private, sample, tmp_path).score == 1.0
    # Only the first of several guesses counts: the true class first, or second.
    listed = answers.assign(predicted=answers["predicted"].astype(str) + " 5 6")
    assert (
        grade_frame(COMP, dirs.private, listed.sample(frac=1, random_state=0), tmp_path).score
        == 0.0
    )
    second = listed.assign(predicted=listed["predicted"].where(listed.index > 2, "5 400"))
    assert grade_frame(COMP, dirs.private, second, tmp_path).score == round(3 / 9, 5)
