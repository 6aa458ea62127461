"""alaska2-image-steganalysis: MLE-bench's answers to the byte, images from the right folder,
broken submissions rejected, any finite score ranked."""

from __future__ import annotations

import hashlib

import pandas as pd
import pytest

from mle_gym.competitions import get_competition
from tests.competitions.support import assert_invalid, assert_scores_like_the_sample, grade_frame
from tests.fixtures.raw.alaska2_image_steganalysis import COVERS, FOLDERS, origin

COMP = get_competition("alaska2-image-steganalysis")
TRAIN = COVERS - 5000


@pytest.fixture
def answers(dirs) -> pd.DataFrame:
    return pd.read_csv(dirs.private / "test.csv")


def test_answers_and_sample_are_mlebench_bytes(dirs) -> None:
    """They depend only on the seeded draws, not on the images: the real checksums hold."""
    for part, sums in (("public", COMP.checksums.public), ("private", COMP.checksums.private)):
        for name, md5 in sums.items():
            assert hashlib.md5((dirs.root / part / name).read_bytes()).hexdigest() == md5


def test_layout_and_renumbering(dirs) -> None:
    expected = sorted([*FOLDERS, "Test", "sample_submission.csv"])
    assert sorted(p.name for p in dirs.public.iterdir()) == expected
    numbers = [f"{n:05d}.jpg" for n in range(1, TRAIN + 1)]
    for folder in FOLDERS:
        assert sorted(p.name for p in (dirs.public / folder).iterdir()) == numbers
    tests = sorted(p.name for p in (dirs.public / "Test").iterdir())
    assert tests == [f"{n:04d}.jpg" for n in range(1, 5001)]


def test_train_folders_hold_versions_of_one_cover_per_number(dirs) -> None:
    for number in range(1, TRAIN + 1):
        found = [origin((dirs.public / f / f"{number:05d}.jpg").read_bytes()) for f in FOLDERS]
        assert [folder for folder, _ in found] == list(FOLDERS)
        assert len({index for _, index in found}) == 1


def test_test_images_are_covers_for_label_0_and_stego_for_label_1(answers, dirs) -> None:
    folders = [origin((dirs.public / "Test" / i).read_bytes())[0] for i in answers["Id"]]
    assert [int(f != "Cover") for f in folders] == answers["Label"].tolist()
    counts = pd.Series(folders).value_counts()
    assert 2300 < counts["Cover"] < 2700
    assert all(700 < counts[f] < 970 for f in FOLDERS[1:])


CASES = {
    "missing rows": (lambda f: f.iloc[3:], r"3 test id\(s\) have no row"),
    "unknown image": (
        lambda f: pd.concat([f, f.iloc[:1].assign(Id="5001.jpg")]),
        r"ids that are not in the test set: '5001.jpg'",
    ),
    "ids without .jpg": (
        lambda f: f.assign(Id=f["Id"].str.removesuffix(".jpg")),
        r"ids that are not in the test set",
    ),
    "duplicate rows": (lambda f: pd.concat([f, f.iloc[:2]]), r"2 duplicate row\(s\)"),
    "target missing": (lambda f: f.drop(columns="Label"), r"missing column\(s\) 'Label'"),
    "empty value": (
        lambda f: f.assign(Label=[None, *f["Label"][1:]]),
        r"'Label' has 1 empty or missing value\(s\)",
    ),
    "infinite": (
        lambda f: f.assign(Label=[float("inf"), *f["Label"][1:]]),
        r"'Label' must hold finite numbers; found 'inf'",
    ),
    "text": (
        lambda f: f.astype({"Label": object}).assign(Label="stego"),
        r"'Label' must hold finite numbers; found 'stego'",
    ),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_broken_submission_is_invalid_with_reason(case, answers, dirs, tmp_path) -> None:
    mutate, reason = CASES[case]
    assert_invalid(grade_frame(COMP, dirs.private, mutate(answers), tmp_path), reason)


def test_constant_scores_like_the_sample(answers, dirs, tmp_path) -> None:
    # A constant is the diagonal: (2 * 0.32 + 0.18) / 1.4 = 0.58571, whatever the constant.
    constant = answers.assign(Label=0.9)
    assert_scores_like_the_sample(
        COMP, dirs, constant, tmp_path, sample_file="sample_submission.csv", score=0.58571
    )


def test_scores_outside_0_1_are_ranked_with_a_warning(answers, dirs, tmp_path) -> None:
    report = grade_frame(
        COMP, dirs.private, answers.assign(Label=answers["Label"] * 40 - 3), tmp_path
    )
    assert report.score == 1.0
    assert any("outside [0, 1]" in w for w in report.warnings)
    reversed_ = answers.assign(Label=-answers["Label"])
    assert grade_frame(COMP, dirs.private, reversed_, tmp_path).score == 0.0
