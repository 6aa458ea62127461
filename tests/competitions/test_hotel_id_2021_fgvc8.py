"""hotel-id-2021-fgvc8: the repeated file is dropped, test photos lose their chain folder,
broken submissions are rejected, MAP@5 scores lists as MLE-bench does."""

from __future__ import annotations

import pandas as pd
import pytest

from mle_gym.competitions import get_competition
from mle_gym.grading import grade
from tests.competitions.support import assert_invalid, grade_frame
from tests.fixtures.raw.hotel_id_2021_fgvc8 import REPEATED

COMP = get_competition("hotel-id-2021-fgvc8")
GUESS = ["36363", "53586", "18807", "64314", "60181"]


@pytest.fixture
def answers(dirs) -> pd.DataFrame:
    return pd.read_csv(dirs.private / "test.csv", dtype=str)


def test_layout_and_the_repeated_file_dropped(answers, dirs) -> None:
    train = pd.read_csv(dirs.public / "train.csv", dtype=str)
    assert list(train.columns) == ["image", "chain", "hotel_id", "timestamp"]
    assert list(answers.columns) == list(train.columns)
    raw = pd.read_csv(dirs.raw / "train.csv", dtype=str)
    assert len(train) + len(answers) == len(raw) - 2
    assert REPEATED not in set(train["image"]) | set(answers["image"])
    assert len(answers) == 12
    for image, chain in zip(train["image"], train["chain"], strict=True):
        placed = dirs.public / "train_images" / chain / image
        assert placed.read_bytes() == (dirs.raw / "train_images" / chain / image).read_bytes()
    test_images = dirs.public / "test_images"
    assert sorted(p.name for p in test_images.iterdir()) == sorted(answers["image"])
    for image, chain in zip(answers["image"], answers["chain"], strict=True):
        assert (test_images / image).read_bytes() == (
            dirs.raw / "train_images" / chain / image
        ).read_bytes()
    assert sorted(p.name for p in dirs.public.iterdir()) == [
        "sample_submission.csv",
        "test_images",
        "train.csv",
        "train_images",
    ]


def test_sample_scores_one_over_the_rank_of_each_hit(answers, dirs) -> None:
    ranks = [GUESS.index(h) + 1 if h in GUESS else None for h in answers["hotel_id"]]
    expected = sum(1 / r for r in ranks if r) / len(ranks)
    assert expected > 0
    score = grade(COMP, dirs.public / "sample_submission.csv", dirs.private).score
    assert score == round(expected, 5)


CASES = {
    "missing rows": (lambda f: f.iloc[3:], r"3 test id\(s\) have no row"),
    "unknown image": (
        lambda f: pd.concat([f, f.iloc[:1].assign(image="nope.jpg")]),
        r"ids that are not in the test set: 'nope.jpg'",
    ),
    "duplicate rows": (lambda f: pd.concat([f, f.iloc[:2]]), r"2 duplicate row\(s\)"),
    "target missing": (lambda f: f.drop(columns="hotel_id"), r"missing column\(s\) 'hotel_id'"),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_broken_submission_is_invalid_with_reason(case, answers, dirs, tmp_path) -> None:
    mutate, reason = CASES[case]
    submission = answers[["image", "hotel_id"]]
    assert_invalid(grade_frame(COMP, dirs.private, mutate(submission), tmp_path), reason)


def _score(answers, dirs, tmp_path, lists) -> float:
    frame = answers[["image"]].assign(hotel_id=lists)
    return grade_frame(COMP, dirs.private, frame, tmp_path).score


def test_ranks_repeats_cut_off_and_spelling(answers, dirs, tmp_path) -> None:
    truth = answers["hotel_id"].tolist()
    n = len(truth)
    # The answer at rank 2 after a repeated miss counts 1/3; at rank 6 it is past the cut.
    assert _score(answers, dirs, tmp_path, [f"9 9 {t} {t}" for t in truth]) == round(1 / 3, 5)
    assert _score(answers, dirs, tmp_path, [f"1 2 3 4 5 {t}" for t in truth]) == 0.0
    # Compared as written: a leading zero misses; an empty cell is a valid miss.
    leading = [f"0{t}" if i % 2 else t for i, t in enumerate(truth)]
    assert _score(answers, dirs, tmp_path, leading) == round(len(truth[::2]) / n, 5)
    assert _score(answers, dirs, tmp_path, ["", *truth[1:]]) == round((n - 1) / n, 5)
