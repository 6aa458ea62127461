"""kuzushiji-recognition: re-zipped pages, broken submissions refused with their reason,
and scores counted from the answers' boxes."""

from __future__ import annotations

import zipfile

import pandas as pd
import pytest

from mle_gym.competitions import get_competition
from mle_gym.grading import grade
from tests.competitions.support import assert_invalid, grade_frame

COMP = get_competition("kuzushiji-recognition")


def read(path) -> pd.DataFrame:
    return pd.read_csv(path, keep_default_na=False)


@pytest.fixture
def gold(dirs) -> pd.DataFrame:
    return read(dirs.private / "gold_submission.csv")


def test_public_layout_zips_each_side_flat(dirs) -> None:
    train, test = read(dirs.public / "train.csv"), read(dirs.private / "test.csv")
    assert not (dirs.public / "test.csv").exists()
    for ids, name in ((train, "train_images.zip"), (test, "test_images.zip")):
        with zipfile.ZipFile(dirs.public / name) as archive:
            assert sorted(archive.namelist()) == sorted(f"{i}.jpg" for i in ids["image_id"])
    assert len(train) + len(test) == 40 and len(test) == 4
    assert "" in set(test["labels"])  # a page without characters is in the test set
    sample = read(dirs.public / "sample_submission.csv")
    assert list(sample["image_id"]) == list(test["image_id"])
    assert set(sample["labels"]) == {"U+003F 1 1 U+FF2F 2 2"}


def test_gold_puts_one_point_inside_each_box(dirs, gold) -> None:
    test = read(dirs.private / "test.csv").set_index("image_id")["labels"]
    for image_id, points in zip(gold["image_id"], gold["labels"], strict=True):
        boxes = test[image_id].split()
        expected = [
            f"{c} {int(x) + 1} {int(y) + 1}"
            for c, x, y in zip(*(boxes[k::5] for k in range(3)), strict=True)
        ]
        assert points == " ".join(expected)


CASES = {
    "missing page": (lambda f: f.iloc[1:], r"1 test id\(s\) have no row"),
    "duplicate page": (lambda f: pd.concat([f, f.iloc[:1]]), r"1 duplicate row\(s\)"),
    "unknown page": (
        lambda f: f.assign(image_id=f["image_id"].str.replace("_", "-")),
        r"ids that are not in the test set",
    ),
    "labels column missing": (
        lambda f: f.rename(columns={"labels": "points"}),
        r"missing column\(s\) 'labels'",
    ),
    "boxes instead of points": (
        lambda f: f.assign(labels="U+306F 1 1 10 10"),
        r"'label x y' triples .* found 5",
    ),
    "trailing space": (lambda f: f.assign(labels="U+306F 1 1 "), r"found 4"),
    "non-numeric point": (lambda f: f.assign(labels="U+306F x 1"), r"x and y must be numbers"),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_broken_submission_is_invalid_with_reason(case, gold, dirs, tmp_path) -> None:
    mutate, reason = CASES[case]
    assert_invalid(grade_frame(COMP, dirs.private, mutate(gold), tmp_path), reason)


def test_scores_count_boxes_found(dirs, gold, tmp_path) -> None:
    boxes = [len(v.split()) // 3 for v in gold["labels"]]
    assert grade_frame(COMP, dirs.private, gold.iloc[::-1], tmp_path).score == 1.0
    # Only the first page predicted: precision 1, recall r -> F1 = 2r / (1 + r).
    first = gold.assign(labels=[gold["labels"][0], *[""] * (len(gold) - 1)])
    recall = boxes[0] / sum(boxes)
    expected = round(2 * recall / (1 + recall), 5)
    assert grade_frame(COMP, dirs.private, first, tmp_path).score == expected
    # Every point given twice: the copies are false positives, precision 1/2 -> F1 2/3.
    doubled = gold.assign(labels=[f"{v} {v}" if v else "" for v in gold["labels"]])
    assert grade_frame(COMP, dirs.private, doubled, tmp_path).score == round(2 / 3, 5)


def test_sample_scores_zero(dirs) -> None:
    assert COMP.sample_score == 0.0
    assert grade(COMP, dirs.public / "sample_submission.csv", dirs.private).score == 0.0
