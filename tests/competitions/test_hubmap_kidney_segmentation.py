"""hubmap-kidney-segmentation: slides linked not copied, the test glomerulus JSON (the
answer) kept out of public/, broken submissions refused with their reason, sample scores 0."""

from __future__ import annotations

import os

import pandas as pd
import pytest

from mle_gym.competitions import get_competition
from tests.competitions.support import assert_invalid, assert_scores_like_the_sample, grade_frame

COMP = get_competition("hubmap-kidney-segmentation")


@pytest.fixture
def gold(dirs) -> pd.DataFrame:
    return pd.read_csv(dirs.private / "gold_submission.csv", keep_default_na=False)


def test_layout_and_no_test_glomerulus_outlines(gold, dirs) -> None:
    train = pd.read_csv(dirs.public / "train.csv")
    assert len(train) == 12 and len(gold) == 3
    for image_id in train["id"]:
        for suffix in (".tiff", ".json", "-anatomical-structure.json"):
            assert (dirs.public / "train" / f"{image_id}{suffix}").is_file()
    for image_id in gold["id"]:
        assert (dirs.public / "test" / f"{image_id}.tiff").is_file()
        assert (dirs.public / "test" / f"{image_id}-anatomical-structure.json").is_file()
        assert not (dirs.public / "test" / f"{image_id}.json").exists()
    sample = (dirs.public / "test" / "sample_submission.csv").read_bytes()
    assert sample == (dirs.public / "sample_submission.csv").read_bytes()
    info = pd.read_csv(dirs.public / "HuBMAP-20-dataset_information.csv")
    assert len(info) == 15 and "id" not in info.columns


def test_slides_are_hard_links(gold, dirs) -> None:
    tiff = dirs.public / "test" / f"{gold['id'][0]}.tiff"
    assert os.stat(tiff).st_nlink >= 2


CASES = {
    "missing rows": (lambda f: f.iloc[1:], r"1 test id\(s\) have no row"),
    "duplicate rows": (lambda f: pd.concat([f, f.iloc[:1]]), r"1 duplicate row\(s\)"),
    "run past the slide": (
        lambda f: f.assign(predicted="1 100000"),
        r"predicted of id '\w+': RLE '1 100000': run 1 .* ends past the image's last pixel",
    ),
    "unsorted runs": (lambda f: f.assign(predicted="50 2 10 2"), r"increasing order"),
    "not integers": (lambda f: f.assign(predicted="1 x"), r"only integers"),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_broken_submission_is_invalid_with_reason(case, gold, dirs, tmp_path) -> None:
    mutate, reason = CASES[case]
    assert_invalid(grade_frame(COMP, dirs.private, mutate(gold), tmp_path), reason)


def test_empty_masks_score_zero(gold, dirs, tmp_path) -> None:
    assert_scores_like_the_sample(
        COMP,
        dirs,
        gold.assign(predicted=""),
        tmp_path,
        sample_file="sample_submission.csv",
        score=0.0,
    )


def test_one_slide_right_scores_a_third(gold, dirs, tmp_path) -> None:
    frame = gold.assign(predicted=["", gold["predicted"][1], ""]).iloc[::-1]
    assert grade_frame(COMP, dirs.private, frame, tmp_path).score == pytest.approx(1 / 3, abs=5e-6)
