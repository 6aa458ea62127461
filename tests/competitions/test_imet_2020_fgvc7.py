"""imet-2020-fgvc7: broken submissions are rejected; micro F1 over attribute-id sets in
closed form (ids as text, unknown ids ignored); labels.csv and images in place."""

from __future__ import annotations

import pandas as pd
import pytest

from mle_gym.competitions import get_competition
from mle_gym.grading import grade
from tests.competitions.support import assert_invalid, grade_frame

COMP = get_competition("imet-2020-fgvc7")


@pytest.fixture
def answers(dirs) -> pd.DataFrame:
    return pd.read_csv(dirs.private / "answers.csv", dtype=str)


CASES = {
    "missing rows": (lambda f: f.iloc[2:], r"2 test id\(s\) have no row"),
    "duplicate rows": (lambda f: pd.concat([f, f.iloc[:1]]), r"1 duplicate row\(s\)"),
    "ids with .png": (
        lambda f: f.assign(id=f["id"] + ".png"),
        r"ids that are not in the test set: '[0-9a-f]{32}\.png'",
    ),
    "target missing": (
        lambda f: f.rename(columns={"attribute_ids": "labels"}),
        r"missing column\(s\) 'attribute_ids'",
    ),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_broken_submission_is_invalid_with_reason(case, answers, dirs, tmp_path) -> None:
    mutate, reason = CASES[case]
    assert_invalid(grade_frame(COMP, dirs.private, mutate(answers), tmp_path), reason)


def _f1(truth: list[set[str]], predicted: list[set[str]]) -> float:
    known = set().union(*truth)
    hits = sum(len(t & p) for t, p in zip(truth, predicted, strict=True))
    guessed = sum(len(p & known) for p in predicted)
    return 2 * hits / (guessed + sum(len(t) for t in truth))


def test_sample_scores_micro_f1_of_0_1_2(answers, dirs) -> None:
    truth = [set(cell.split()) for cell in answers["attribute_ids"]]
    expected = _f1(truth, [{"0", "1", "2"}] * len(truth))
    assert 0 < expected < 1
    sample = grade(COMP, dirs.public / "sample_submission.csv", dirs.private)
    assert sample.score == round(expected, 5)


def test_ids_are_text_and_unknown_ids_are_ignored(answers, dirs, tmp_path) -> None:
    # every row gains an unused id and a repeat; odd rows also zero-pad their first id
    cells = [
        ("0" + cell if i % 2 else cell) + f" 999 {cell.split()[-1]}"
        for i, cell in enumerate(answers["attribute_ids"])
    ]
    truth = [set(cell.split()) for cell in answers["attribute_ids"]]
    expected = _f1(truth, [set(cell.split()) for cell in cells])
    assert expected < 1
    frame = answers.assign(attribute_ids=cells).iloc[::-1]
    assert grade_frame(COMP, dirs.private, frame, tmp_path).score == round(expected, 5)


def test_labels_and_images_are_in_place(answers, dirs) -> None:
    assert (dirs.public / "labels.csv").read_bytes() == (dirs.raw / "labels.csv").read_bytes()
    train = pd.read_csv(dirs.public / "train.csv")
    assert len(train) == 34 and len(answers) == 6  # 85% / 15% of 40
    assert sorted(p.stem for p in (dirs.public / "train").iterdir()) == sorted(train["id"])
    assert sorted(p.stem for p in (dirs.public / "test").iterdir()) == sorted(answers["id"])
    first = answers["id"].iloc[0]
    raw_bytes = (dirs.raw / "train" / f"{first}.png").read_bytes()
    assert (dirs.public / "test" / f"{first}.png").read_bytes() == raw_bytes
    assert sorted(p.name for p in dirs.public.iterdir()) == [
        "labels.csv", "sample_submission.csv", "test", "train", "train.csv"
    ]  # fmt: skip
