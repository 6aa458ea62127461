"""plant-pathology-2021-fgvc8: broken submissions are rejected; micro F1 over label sets in
closed form; test photographs move to test_images/ unrenamed."""

from __future__ import annotations

import pandas as pd
import pytest

from mle_gym.competitions import get_competition
from mle_gym.grading import grade
from tests.competitions.support import assert_invalid, grade_frame

COMP = get_competition("plant-pathology-2021-fgvc8")


@pytest.fixture
def answers(dirs) -> pd.DataFrame:
    return pd.read_csv(dirs.private / "answers.csv")


CASES = {
    "missing rows": (lambda f: f.iloc[3:], r"3 test id\(s\) have no row"),
    "duplicate rows": (lambda f: pd.concat([f, f.iloc[:1]]), r"1 duplicate row\(s\)"),
    "kaggle test image": (
        lambda f: pd.concat([f, f.iloc[:1].assign(image="85f8cb619c66b863.jpg")]),
        r"ids that are not in the test set: '85f8cb619c66b863.jpg'",
    ),
    "labels missing": (lambda f: f.drop(columns="labels"), r"missing column\(s\) 'labels'"),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_broken_submission_is_invalid_with_reason(case, answers, dirs, tmp_path) -> None:
    mutate, reason = CASES[case]
    assert_invalid(grade_frame(COMP, dirs.private, mutate(answers), tmp_path), reason)


def test_sample_scores_micro_f1_of_healthy_everywhere(answers, dirs) -> None:
    truth = [set(cell.split()) for cell in answers["labels"]]
    healthy = sum("healthy" in t for t in truth)
    pairs = sum(len(t) for t in truth)
    assert healthy > 0
    # TP = healthy leaves; FP = the other rows; FN = every true pair but those TPs
    expected = 2 * healthy / (2 * healthy + (len(truth) - healthy) + (pairs - healthy))
    sample = grade(COMP, dirs.public / "sample_submission.csv", dirs.private)
    assert sample.score == round(expected, 5)


def test_unknown_words_repeats_and_order_do_not_count(answers, dirs, tmp_path) -> None:
    noisy = [
        " ".join([*reversed(cell.split()), "blight", cell.split()[0]]) for cell in answers["labels"]
    ]
    frame = answers.assign(labels=noisy).iloc[::-1]
    assert grade_frame(COMP, dirs.private, frame, tmp_path).score == 1.0


def test_empty_predictions_lower_recall_only(answers, dirs, tmp_path) -> None:
    truth = [set(cell.split()) for cell in answers["labels"]]
    kept = [i % 2 == 0 for i in range(len(truth))]
    frame = answers.assign(
        labels=[c if k else "" for c, k in zip(answers["labels"], kept, strict=True)]
    )
    hits = sum(len(t) for t, k in zip(truth, kept, strict=True) if k)
    expected = 2 * hits / (2 * hits + sum(len(t) for t in truth) - hits)
    assert grade_frame(COMP, dirs.private, frame, tmp_path).score == round(expected, 5)


def test_images_split_without_renaming(answers, dirs) -> None:
    train = pd.read_csv(dirs.public / "train.csv")
    assert list(train.columns) == ["image", "labels"]
    assert len(train) == 36 and len(answers) == 9  # 80% / 20% of 45
    assert sorted(p.name for p in (dirs.public / "train_images").iterdir()) == sorted(
        train["image"]
    )
    assert sorted(p.name for p in (dirs.public / "test_images").iterdir()) == sorted(
        answers["image"]
    )
    name = answers["image"].iloc[0]
    raw_bytes = (dirs.raw / "train_images" / name).read_bytes()
    assert (dirs.public / "test_images" / name).read_bytes() == raw_bytes
    assert not (dirs.public / "test.csv").exists()
