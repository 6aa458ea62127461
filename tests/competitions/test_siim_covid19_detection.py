"""siim-covid19-detection: study and image answers, DICOM trees placed, broken submissions
refused with the reason, the sample scored as MLE-bench scores it."""

from __future__ import annotations

import pandas as pd
import pytest

from mle_gym.competitions import get_competition
from mle_gym.grading import grade
from tests.competitions.support import assert_invalid, grade_frame

COMP = get_competition("siim-covid19-detection")


@pytest.fixture
def answers(dirs) -> pd.DataFrame:
    return pd.read_csv(dirs.private / "test.csv", dtype=str)


def test_layout_answers_and_trees(dirs, answers) -> None:
    raw_studies = pd.read_csv(dirs.raw / "train_study_level.csv")
    studies = pd.read_csv(dirs.public / "train_study_level.csv")
    images = pd.read_csv(dirs.public / "train_image_level.csv", dtype=str)
    assert list(studies["id"]) == sorted(studies["id"])
    test_studies = answers[answers["id"].str.endswith("_study")]
    assert len(test_studies) == 3 and len(studies) == len(raw_studies) - 3
    assert not set(test_studies["id"]) & set(studies["id"])
    # A test study's answer is its one-hot label with the whole-image box.
    raw_by_id = raw_studies.set_index("id")
    for study, cell in zip(test_studies["id"], test_studies["PredictionString"], strict=True):
        label = ("negative", "typical", "indeterminate", "atypical")[
            raw_by_id.loc[study].to_numpy().argmax()
        ]
        assert cell == f"{label} 1 0 0 1 1"
    raw_images = pd.read_csv(dirs.raw / "train_image_level.csv", dtype=str).set_index("id")
    test_images = answers[answers["id"].str.endswith("_image")]
    assert list(test_images["PredictionString"]) == list(raw_images.loc[test_images["id"], "label"])
    assert len(images) + len(test_images) == len(raw_images)
    for folder, ids in (("train", studies["id"]), ("test", test_studies["id"])):
        uids = {i.removesuffix("_study") for i in ids}
        assert {p.name for p in (dirs.public / folder).iterdir()} == uids
        for path in (dirs.public / folder).rglob("*.dcm"):
            source = dirs.raw / "train" / path.relative_to(dirs.public / folder)
            assert path.read_bytes() == source.read_bytes()
    assert sorted(p.name for p in dirs.public.iterdir()) == [
        "sample_submission.csv", "test", "train", "train_image_level.csv",
        "train_study_level.csv",
    ]  # fmt: skip


def test_sample_and_answers(dirs, answers, tmp_path) -> None:
    sample = pd.read_csv(dirs.public / "sample_submission.csv", dtype=str)
    assert list(sample["id"]) == list(answers["id"])
    assert grade_frame(COMP, dirs.private, answers, tmp_path).score == 1.0
    score = grade(COMP, dirs.public / "sample_submission.csv", dirs.private).score
    assert 0 < score < COMP.thresholds.bronze
    # Same score whatever the row order.
    shuffled = sample.sample(frac=1, random_state=0)
    assert grade_frame(COMP, dirs.private, shuffled, tmp_path).score == score


CASES = {
    "missing rows": (lambda f: f.iloc[2:], r"2 test id\(s\) have no row"),
    "duplicate rows": (lambda f: pd.concat([f, f.iloc[:1]]), r"1 duplicate row\(s\)"),
    "unknown id": (
        lambda f: pd.concat([f, f.iloc[:1].assign(id="nope_study")]),
        r"ids that are not in the test set: 'nope_study'",
    ),
    "odd tokens": (lambda f: f.assign(PredictionString="none 1 0 0 1"), "groups of six"),
    "nan corner": (lambda f: f.assign(PredictionString="none 1 0 0 nan 1"), "non-finite"),
    "target missing": (
        lambda f: f.drop(columns="PredictionString"),
        r"missing column\(s\) 'PredictionString'",
    ),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_broken_submission_is_invalid_with_reason(case, answers, dirs, tmp_path) -> None:
    mutate, reason = CASES[case]
    assert_invalid(grade_frame(COMP, dirs.private, mutate(answers), tmp_path), reason)
