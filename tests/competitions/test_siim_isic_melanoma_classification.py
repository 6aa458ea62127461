"""siim-isic-melanoma-classification: the TFRecord split, label-free test shards, validation."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from mle_gym.competitions import get_competition
from mle_gym.competitions.tfrecord import parse_example, read_records
from tests.competitions.support import assert_invalid, assert_scores_like_the_sample, grade_frame
from tests.fixtures.raw import generator_for

COMP = get_competition("siim-isic-melanoma-classification")
FIXTURE = generator_for(COMP)


@pytest.fixture
def answers(dirs) -> pd.DataFrame:
    return pd.read_csv(dirs.private / "test.csv")


def _shard(path: Path) -> list[dict]:
    return [parse_example(record) for record in read_records(path)]


CASES = {
    "missing rows": (lambda f: f.iloc[2:], r"2 test id\(s\) have no row"),
    "kaggle test image": (
        lambda f: pd.concat([f, f.iloc[:1].assign(image_name="ISIC_9000000")]),
        r"ids that are not in the test set: 'ISIC_9000000'",
    ),
    "duplicate rows": (lambda f: pd.concat([f, f.iloc[:1]]), r"1 duplicate row\(s\)"),
    "target missing": (lambda f: f.drop(columns="target"), r"missing column\(s\) 'target'"),
    "benign_malignant instead": (
        lambda f: f.rename(columns={"target": "benign_malignant"}),
        r"missing column\(s\) 'target'",
    ),
    "empty value": (
        lambda f: f.assign(target=[None, *f["target"][1:]]),
        r"'target' has 1 empty or missing value\(s\)",
    ),
    "above one": (lambda f: f.assign(target=1.2), r"'target' must hold probabilities in \[0, 1\]"),
    "words": (
        lambda f: f.astype({"target": object}).assign(target="malignant"),
        r"'target' must hold finite numbers; found 'malignant'",
    ),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_broken_submission_is_invalid_with_reason(case, answers, dirs, tmp_path) -> None:
    mutate, reason = CASES[case]
    assert_invalid(grade_frame(COMP, dirs.private, mutate(answers), tmp_path), reason)


def test_constant_prediction_scores_half_like_the_sample(answers, dirs, tmp_path) -> None:
    # a constant ties every malignant lesion with every benign one: AUC = 1/2
    constant = answers.assign(target=0.02)
    assert_scores_like_the_sample(
        COMP, dirs, constant, tmp_path, sample_file="sample_submission.csv", score=0.5
    )


def test_test_set_is_the_images_of_the_two_held_out_shards(answers, dirs) -> None:
    assert set(answers["image_name"]) == FIXTURE.held_out_names(dirs.raw)
    original = pd.read_csv(dirs.raw / "train.csv")
    in_test = original["image_name"].isin(answers["image_name"])
    assert list(answers["image_name"]) == list(original["image_name"][in_test])
    train = pd.read_csv(dirs.public / "train.csv")
    assert list(train["image_name"]) == list(original["image_name"][~in_test])
    test = pd.read_csv(dirs.public / "test.csv")
    assert list(test["image_name"]) == list(answers["image_name"])
    assert "target" not in test.columns and "diagnosis" not in test.columns


def test_shards_are_renumbered_and_test_shards_lose_labels(dirs) -> None:
    shards = sorted(p.name for p in (dirs.public / "tfrecords").iterdir())
    assert shards == [f"test{i:02d}-2071.tfrec" for i in range(2)] + [
        f"train{i:02d}-2071.tfrec" for i in range(14)
    ]
    for public_name, raw_name in (("test00", "train00"), ("test01", "train06")):
        held_out = _shard(dirs.public / "tfrecords" / f"{public_name}-2071.tfrec")
        original = _shard(dirs.raw / "tfrecords" / f"{raw_name}-2071.tfrec")
        expected = [
            {k: v for k, v in e.items() if k not in ("target", "diagnosis")} for e in original
        ]
        assert held_out == expected
    assert (dirs.public / "tfrecords" / "train05-2071.tfrec").read_bytes() == (
        dirs.raw / "tfrecords" / "train07-2071.tfrec"
    ).read_bytes()


def test_images_in_both_formats_follow_the_split(answers, dirs) -> None:
    train = pd.read_csv(dirs.public / "train.csv")
    for folder, suffix, names in (
        ("test", ".dcm", answers["image_name"]),
        ("jpeg/test", ".jpg", answers["image_name"]),
        ("train", ".dcm", train["image_name"]),
        ("jpeg/train", ".jpg", train["image_name"]),
    ):
        files = sorted((dirs.public / folder).iterdir())
        assert [p.name for p in files] == sorted(f"{n}{suffix}" for n in names)


def test_missing_held_out_shard_is_reported(tmp_path: Path) -> None:
    raw = tmp_path / "raw"
    raw.mkdir()
    FIXTURE.make_raw(raw)
    (raw / "tfrecords" / "train06-2071.tfrec").unlink()
    (tmp_path / "public").mkdir()
    with pytest.raises(FileNotFoundError, match=r"train06-2071\.tfrec"):
        COMP.prepare(raw, tmp_path / "public", tmp_path / "private")
