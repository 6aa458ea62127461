"""tgs-salt-identification-challenge: layout of the split, broken submissions refused with
their reason, the single-pixel sample scores 0, row order does not matter."""

from __future__ import annotations

import pandas as pd
import pytest

from mle_gym.competitions import get_competition
from tests.competitions.support import assert_invalid, assert_scores_like_the_sample, grade_frame

COMP = get_competition("tgs-salt-identification-challenge")


@pytest.fixture
def answers(dirs) -> pd.DataFrame:
    return pd.read_csv(dirs.private / "test.csv", keep_default_na=False)


def test_layout_train_with_masks_test_without(answers, dirs) -> None:
    train = pd.read_csv(dirs.public / "train.csv", keep_default_na=False)
    images = {p.stem for p in (dirs.public / "train" / "images").glob("*.png")}
    masks = {p.stem for p in (dirs.public / "train" / "masks").glob("*.png")}
    test_images = {p.stem for p in (dirs.public / "test" / "images").glob("*.png")}
    assert images == masks == set(train["id"])
    assert test_images == set(answers["id"]) and len(answers) == 4
    assert not (dirs.public / "test" / "masks").exists()
    # Kaggle's unlabelled test images and every depth but the training ones stay out.
    assert len(images) + len(test_images) == 16
    depths = pd.read_csv(dirs.public / "depths.csv")
    assert set(depths["id"]) == images


CASES = {
    "missing rows": (lambda f: f.iloc[1:], r"1 test id\(s\) have no row"),
    "duplicate rows": (lambda f: pd.concat([f, f.iloc[:1]]), r"1 duplicate row\(s\)"),
    "extra column": (lambda f: f.assign(score=1), r"unexpected column\(s\) 'score'"),
    "run past the image": (
        lambda f: f.assign(rle_mask="10000 300"),
        r"rle_mask of id '\w+': RLE '10000 300': run 1 .* ends past the image's last pixel",
    ),
    "unsorted runs": (lambda f: f.assign(rle_mask="50 2 10 2"), r"increasing order"),
    "overlapping runs": (lambda f: f.assign(rle_mask="10 5 12 2"), r"overlaps the previous run"),
    "odd count": (lambda f: f.assign(rle_mask="1 2 3"), r"needs start/length pairs"),
    "not integers": (lambda f: f.assign(rle_mask="1 2.0"), r"only integers"),
    "zero length": (lambda f: f.assign(rle_mask="4 0"), r"length of at least 1"),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_broken_submission_is_invalid_with_reason(case, answers, dirs, tmp_path) -> None:
    mutate, reason = CASES[case]
    assert_invalid(grade_frame(COMP, dirs.private, mutate(answers), tmp_path), reason)


def test_single_pixel_sample_scores_zero(answers, dirs, tmp_path) -> None:
    constant = answers.assign(rle_mask="1 1")
    assert_scores_like_the_sample(
        COMP, dirs, constant, tmp_path, sample_file="sample_submission.csv", score=0.0
    )


def test_shuffled_answers_score_one(answers, dirs, tmp_path) -> None:
    report = grade_frame(COMP, dirs.private, answers.sample(frac=1, random_state=3), tmp_path)
    assert report.score == 1.0


def test_empty_predictions_score_the_no_salt_images_and_the_quirk(answers, dirs, tmp_path) -> None:
    # Images without salt score 1; with salt, an empty guess scores the thresholds below
    # salt/10201 (MLE-bench's histogram quirk).
    thresholds = [0.5 + 0.05 * k for k in range(10)]
    expected = []
    for text in answers["rle_mask"]:
        salt = sum(int(n) for n in text.split()[1::2])
        expected.append(1.0 if not salt else sum(salt / 10201 > t for t in thresholds) / 10)
    report = grade_frame(COMP, dirs.private, answers.assign(rle_mask=""), tmp_path)
    assert 0 < report.score < 1
    assert report.score == pytest.approx(sum(expected) / len(expected), abs=5e-6)
