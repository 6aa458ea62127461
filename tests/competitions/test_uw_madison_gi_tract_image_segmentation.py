"""uw-madison-gi-tract-image-segmentation: the case/day split and its folders, float slice
sizes in the answers, broken submissions refused with their reason, any row order."""

from __future__ import annotations

import os

import pandas as pd
import pytest

from mle_gym.competitions import get_competition
from mle_gym.grading import grade
from tests.competitions.support import assert_invalid, grade_frame

COMP = get_competition("uw-madison-gi-tract-image-segmentation")


@pytest.fixture
def answers(dirs) -> pd.DataFrame:
    return pd.read_csv(dirs.private / "test.csv", keep_default_na=False)


def _scans(folder) -> set[str]:
    return {p.parent.parent.name for p in folder.glob("*/*/scans/*.png")}


def test_split_by_case_and_by_later_days(answers, dirs) -> None:
    train = pd.read_csv(dirs.public / "train.csv", keep_default_na=False)
    public_test = pd.read_csv(dirs.public / "test.csv")
    assert list(train.columns) == ["id", "class", "segmentation"]
    assert list(public_test.columns) == ["id", "class"]
    assert list(answers.columns) == ["id", "class", "predicted", "image_width", "image_height"]
    assert public_test.equals(answers[["id", "class"]])
    scan = train["id"].str.split("_slice_").str[0]
    test_scan = answers["id"].str.split("_slice_").str[0]
    assert set(scan) == _scans(dirs.public / "train")
    assert set(test_scan) == _scans(dirs.public / "test")
    # Case 7's first four days by number stay in training; days 14 and 20 are tested.
    assert {s for s in scan if s.startswith("case7_")} == {f"case7_day{d}" for d in (1, 3, 9, 10)}
    assert {"case7_day14", "case7_day20"} <= set(test_scan)
    # Two of eleven cases are tested whole.
    whole = {s.split("_")[0] for s in test_scan} - {"case7"}
    assert len(whole) == 2 and not whole & {s.split("_")[0] for s in scan}


def test_slice_sizes_are_written_as_mlebench_writes_them(answers, dirs) -> None:
    first_row = (dirs.private / "test.csv").read_text().splitlines()[1]
    assert first_row.split(",")[-2].endswith(".0") and first_row.split(",")[-1].endswith(".0")
    case = answers["id"][0].split("_")[0]
    day_folder = "_".join(answers["id"][0].split("_")[:2])
    scan = next((dirs.public / "test" / case / day_folder / "scans").glob("slice_0001_*.png"))
    width, height = scan.stem.split("_")[2:4]
    assert (answers["image_width"][0], answers["image_height"][0]) == (int(width), int(height))
    assert os.stat(scan).st_nlink >= 2


CASES = {
    "missing rows": (lambda f: f.iloc[3:], r"3 test id\(s\) have no row"),
    "extra row": (lambda f: pd.concat([f, f.iloc[:1]]), r"1 duplicate row\(s\)"),
    "class repeated on a slice": (
        lambda f: f.assign(**{"class": ["stomach", *f["class"][1:]]}),
        r"needs exactly one row for each class",
    ),
    "unknown class": (lambda f: f.assign(**{"class": "liver"}), r"'class' must hold one of"),
    "run past the slice": (
        lambda f: f.assign(predicted="40 5"),
        r"predicted of id 'case\d+_day\d+_slice_\d{4}': RLE '40 5'.*past the image's last pixel",
    ),
    "overlapping runs": (lambda f: f.assign(predicted="1 3 2 1"), r"overlaps the previous run"),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_broken_submission_is_invalid_with_reason(case, answers, dirs, tmp_path) -> None:
    mutate, reason = CASES[case]
    frame = mutate(answers[["id", "class", "predicted"]])
    assert_invalid(grade_frame(COMP, dirs.private, frame, tmp_path), reason)


def test_row_order_does_not_change_the_score(answers, dirs, tmp_path) -> None:
    frame = answers[["id", "class", "predicted"]].copy()
    frame.loc[frame.index[::4], "predicted"] = ""
    in_order = grade_frame(COMP, dirs.private, frame, tmp_path).score
    shuffled = grade_frame(COMP, dirs.private, frame.sample(frac=1, random_state=0), tmp_path)
    assert 0 < in_order < 1
    assert shuffled.score == in_order


def test_sample_scores_what_mlebench_gives_it(dirs) -> None:
    # MLE-bench's grader, run side by side on this fixture, gave 0.3346583143985489.
    report = grade(COMP, dirs.public / "sample_submission.csv", dirs.private)
    assert report.score == 0.33466
