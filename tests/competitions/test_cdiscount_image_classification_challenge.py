"""cdiscount-image-classification-challenge: the BSON split, validation, accuracy."""

from __future__ import annotations

from pathlib import Path

import bson
import pandas as pd
import pytest

from mle_gym.competitions import get_competition
from tests.competitions.support import assert_invalid, grade_frame

COMP = get_competition("cdiscount-image-classification-challenge")


def _read(path: Path) -> list[dict]:
    with path.open("rb") as handle:
        return list(bson.decode_file_iter(handle))


@pytest.fixture
def answers(dirs) -> pd.DataFrame:
    return pd.read_csv(dirs.private / "answers.csv")


def test_bson_split_keeps_kaggles_order_and_hides_test_categories(answers, dirs) -> None:
    original = _read(dirs.raw / "train.bson")
    train = _read(dirs.public / "train.bson")
    test = _read(dirs.public / "test.bson")
    assert (len(train), len(test)) == (117, 13)  # 10% of 130 held out
    held_out = set(answers["_id"])
    assert train == [d for d in original if d["_id"] not in held_out]
    expected = [{k: v for k, v in d.items() if k != "category_id"} for d in original]
    assert test == [d for d in expected if d["_id"] in held_out]
    by_id = {d["_id"]: d["category_id"] for d in original}
    assert list(answers["_id"]) == sorted(held_out)
    assert list(answers["category_id"]) == [by_id[i] for i in answers["_id"]]
    # Kaggle's documents re-encoded as they were: the bytes are the raw ones
    raw_bytes = (dirs.raw / "train.bson").read_bytes()
    assert (dirs.public / "train.bson").read_bytes() == b"".join(
        bson.encode(d) for d in train
    ) and bson.encode(train[0]) in raw_bytes


def test_train_example_is_the_first_hundred_training_documents(dirs) -> None:
    example = (dirs.public / "train_example.bson").read_bytes()
    assert _read(dirs.public / "train_example.bson") == _read(dirs.public / "train.bson")[:100]
    assert (dirs.public / "train.bson").read_bytes().startswith(example)


def test_sample_predicts_one_category_for_every_test_product(answers, dirs, tmp_path) -> None:
    sample = pd.read_csv(dirs.public / "sample_submission.csv")
    assert list(sample["_id"]) == list(answers["_id"])
    assert set(sample["category_id"]) == {1000010653}
    share = round(float((answers["category_id"] == 1000010653).mean()), 5)
    assert 0 < share < 0.5
    assert grade_frame(COMP, dirs.private, sample.sample(frac=1), tmp_path).score == share


def test_categories_written_as_floats_count(answers, dirs, tmp_path) -> None:
    """MLE-bench compares the values pandas reads: 1000010653.0 is 1000010653."""
    as_floats = answers.assign(category_id=answers["category_id"].astype(float))
    assert grade_frame(COMP, dirs.private, as_floats, tmp_path).score == 1.0


CASES = {
    "missing rows": (lambda f: f.iloc[2:], r"2 test id\(s\) have no row"),
    "train product": (
        lambda f: pd.concat([f, f.iloc[:1].assign(_id=-5)]),
        r"ids that are not in the test set: '-5'",
    ),
    "duplicate rows": (lambda f: pd.concat([f, f.iloc[:1]]), r"1 duplicate row\(s\)"),
    "category missing": (
        lambda f: f.rename(columns={"category_id": "category"}),
        r"missing column\(s\) 'category_id'",
    ),
    "empty value": (
        lambda f: f.astype({"category_id": object}).assign(category_id=[None, *f.category_id[1:]]),
        r"'category_id' has 1 empty or missing value\(s\)",
    ),
    "category name": (
        lambda f: f.assign(category_id="SMARTPHONE"),
        r"'category_id' must hold finite numbers; found 'SMARTPHONE'",
    ),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_broken_submission_is_invalid_with_reason(case, answers, dirs, tmp_path) -> None:
    mutate, reason = CASES[case]
    assert_invalid(grade_frame(COMP, dirs.private, mutate(answers), tmp_path), reason)


def test_truncated_bson_is_reported(tmp_path: Path) -> None:
    raw = tmp_path / "raw"
    raw.mkdir()
    document = bson.encode({"_id": 1, "imgs": [], "category_id": 1000010653})
    (raw / "train.bson").write_bytes(document * 3 + document[:-5])
    (raw / "category_names.csv").write_text("category_id\n1000010653\n")
    (tmp_path / "public").mkdir()
    with pytest.raises(ValueError, match=r"train\.bson ends inside document 3"):
        COMP.prepare(raw, tmp_path / "public", tmp_path / "private")
