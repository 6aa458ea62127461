"""cassava-leaf-disease-classification: the shard split, label-free test shards, validation."""

from __future__ import annotations

import pandas as pd
import pytest

from mle_gym.competitions import get_competition
from mle_gym.competitions.tfrecord import parse_example, read_records
from mle_gym.grading import grade
from tests.competitions.support import assert_invalid, grade_frame
from tests.fixtures.raw import generator_for

COMP = get_competition("cassava-leaf-disease-classification")
FIXTURE = generator_for(COMP)


@pytest.fixture
def answers(dirs) -> pd.DataFrame:
    return pd.read_csv(dirs.private / "test.csv")


def _examples(path) -> list[dict]:
    return [parse_example(record) for record in read_records(path)]


def test_test_set_is_the_images_of_the_held_out_shards(answers, dirs) -> None:
    assert set(answers["image_id"]) == FIXTURE.held_out_ids(dirs.raw)
    original = pd.read_csv(dirs.raw / "train.csv")
    in_test = original["image_id"].isin(answers["image_id"])
    pd.testing.assert_frame_equal(answers, original[in_test].reset_index(drop=True))
    train = pd.read_csv(dirs.public / "train.csv")
    pd.testing.assert_frame_equal(train, original[~in_test].reset_index(drop=True))
    sample = pd.read_csv(dirs.public / "sample_submission.csv")
    assert list(sample["image_id"]) == list(answers["image_id"]) and set(sample["label"]) == {4}


def test_shards_are_renumbered_in_split_order_and_test_shards_lose_labels(dirs) -> None:
    public = dirs.public
    assert sorted(p.name for p in (public / "test_tfrecords").iterdir()) == [
        "ld_test00-3.tfrec",
        "ld_test01-3.tfrec",
    ]
    assert len(list((public / "train_tfrecords").iterdir())) == 14
    raw = dirs.raw / "train_tfrecords"
    for number, held_out in enumerate(FIXTURE.HELD_OUT):
        original = _examples(raw / FIXTURE.shard_name(held_out))
        expected = [{k: v for k, v in e.items() if k != "target"} for e in original]
        assert _examples(public / "test_tfrecords" / f"ld_test{number:02d}-3.tfrec") == expected
    # scikit-learn's shuffle puts sorted shard 8 first among the training shards
    first = public / "train_tfrecords" / "ld_train00-3.tfrec"
    assert first.read_bytes() == (raw / FIXTURE.shard_name(8)).read_bytes()


def test_images_follow_the_split(answers, dirs) -> None:
    train = pd.read_csv(dirs.public / "train.csv")
    for folder, frame in (("train_images", train), ("test_images", answers)):
        files = sorted(p.name for p in (dirs.public / folder).iterdir())
        assert files == sorted(frame["image_id"])
        first = frame["image_id"].iloc[0]
        raw_image = dirs.raw / "train_images" / first
        assert (dirs.public / folder / first).read_bytes() == raw_image.read_bytes()


CASES = {
    "missing rows": (lambda f: f.iloc[2:], r"2 test id\(s\) have no row"),
    "kaggle test image": (
        lambda f: pd.concat([f, f.iloc[:1].assign(image_id="2216849948.jpg")]),
        r"ids that are not in the test set: '2216849948.jpg'",
    ),
    "duplicate rows": (lambda f: pd.concat([f, f.iloc[:1]]), r"1 duplicate row\(s\)"),
    "label missing": (lambda f: f.drop(columns="label"), r"missing column\(s\) 'label'"),
    "empty value": (
        lambda f: f.astype({"label": object}).assign(label=[None, *f["label"][1:]]),
        r"'label' has 1 empty or missing value\(s\)",
    ),
    "disease name": (lambda f: f.assign(label="Healthy"), r"'label' must hold"),
    "fraction": (lambda f: f.assign(label=2.5), r"'label' must hold"),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_broken_submission_is_invalid_with_reason(case, answers, dirs, tmp_path) -> None:
    mutate, reason = CASES[case]
    assert_invalid(grade_frame(COMP, dirs.private, mutate(answers), tmp_path), reason)


def test_unknown_class_counts_as_wrong_with_a_warning(answers, dirs, tmp_path) -> None:
    """MLE-bench compares values: a class 7 is simply a wrong answer."""
    wrong_first = answers.assign(label=[7, *answers["label"][1:]]).sample(frac=1, random_state=0)
    report = grade_frame(COMP, dirs.private, wrong_first, tmp_path)
    assert report.score == round(1 - 1 / len(answers), 5) and report.warnings


def test_sample_scores_the_share_of_healthy_leaves(answers, dirs, tmp_path) -> None:
    """The sample predicts 4 (healthy) everywhere (the spec's 0.11584 is the real set's share)."""
    share = round(float((answers["label"] == 4).mean()), 5)
    assert 0 < share < 0.5
    assert grade(COMP, dirs.public / "sample_submission.csv", dirs.private).score == share
    assert grade_frame(COMP, dirs.private, answers.assign(label=4), tmp_path).score == share
