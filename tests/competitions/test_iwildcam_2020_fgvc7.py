"""iwildcam-2020-fgvc7: camera locations held out and balanced, JSON rebuilt, accuracy."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from mle_gym.competitions import get_competition
from mle_gym.competitions.catalog.iwildcam_2020_fgvc7 import held_out_locations
from tests.competitions.support import assert_invalid, grade_frame

COMP = get_competition("iwildcam-2020-fgvc7")


@pytest.fixture
def answers(dirs) -> pd.DataFrame:
    return pd.read_csv(dirs.private / "answers.csv")


def _images(counts: dict[int, int]) -> pd.DataFrame:
    return pd.DataFrame({"location": [loc for loc, n in counts.items() for _ in range(n)]})


@pytest.mark.parametrize(
    ("small", "expected"),
    [
        # The seeded split of locations 1-10 holds out 3, 9, 5. With those three tiny,
        # 6 then 1 move to test (3/76, 13/86 < 0.22), then 1 moves back (23/96 > 0.22).
        ({3: 1, 9: 1, 5: 1}, [3, 9, 5, 6]),
        # With 8, 9, 10 tiny, 21/94 > 0.22 sends 5 back to train.
        ({8: 1, 9: 1, 10: 1}, [3, 9]),
    ],
)
def test_location_balancing_moves_locations_as_mlebench(small, expected) -> None:
    counts = {loc: 10 for loc in range(1, 11)} | small
    assert [int(v) for v in held_out_locations(_images(counts))] == expected


def test_split_by_location_and_files_placed(answers, dirs) -> None:
    train = json.loads((dirs.public / "iwildcam2020_train_annotations.json").read_text())
    test = json.loads((dirs.public / "iwildcam2020_test_information.json").read_text())
    assert list(train) == ["annotations", "images", "categories", "info"]
    assert list(test) == ["images", "categories", "info"]
    train_locations = {i["location"] for i in train["images"]}
    assert {i["location"] for i in test["images"]} == {3, 301, 440}
    assert not train_locations & {3, 301, 440}
    assert sorted(i["id"] for i in test["images"]) == sorted(answers["Id"])
    assert {a["image_id"] for a in train["annotations"]} == {i["id"] for i in train["images"]}
    for side, meta in (("train", train), ("test", test)):
        on_disk = sorted(p.name for p in (dirs.public / side).iterdir())
        assert on_disk == sorted(i["file_name"] for i in meta["images"])


def test_missing_key_written_as_nan_like_mlebench(dirs) -> None:
    text = (dirs.public / "iwildcam2020_train_annotations.json").read_text()
    text += (dirs.public / "iwildcam2020_test_information.json").read_text()
    assert text.count('"seq_num_frames": NaN') == 1


CASES = {
    "missing rows": (lambda f: f.iloc[1:], r"1 test id\(s\) have no row"),
    "unknown id": (lambda f: f.assign(Id="x" + f["Id"]), r"not in the test set"),
    "species name": (lambda f: f.assign(Category="empty"), r"'Category' must hold one of"),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_broken_submission_is_invalid_with_reason(case, answers, dirs, tmp_path) -> None:
    mutate, reason = CASES[case]
    assert_invalid(grade_frame(COMP, dirs.private, mutate(answers), tmp_path), reason)


def test_scores_in_closed_form(answers, dirs, tmp_path) -> None:
    sample = pd.read_csv(dirs.public / "sample_submission.csv")
    hits = (sample["Category"].to_numpy() == answers["Category"].to_numpy()).mean()
    assert grade_frame(COMP, dirs.private, sample, tmp_path).score == round(hits, 5)
    # Float spellings read as integers; an id beyond 675 is a wrong answer, with a warning.
    spelled = answers.assign(Category=answers["Category"].astype(float)).sample(
        frac=1, random_state=0
    )
    assert grade_frame(COMP, dirs.private, spelled, tmp_path).score == 1.0
    one_off = answers.assign(Category=answers["Category"].where(answers.index > 0, 9999))
    report = grade_frame(COMP, dirs.private, one_off, tmp_path)
    assert (
        report.score == round(1 - 1 / len(answers), 5)
        and "outside the classes" in report.warnings[0]
    )
