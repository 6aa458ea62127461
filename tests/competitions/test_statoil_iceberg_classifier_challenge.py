"""statoil-iceberg-classifier-challenge: the JSON split inside 7z archives, validation, log loss."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from mle_gym.competitions import get_competition
from tests.competitions.support import assert_invalid, assert_scores_like_the_sample, grade_frame
from tests.competitions.test_archive_streams import unpacked

COMP = get_competition("statoil-iceberg-classifier-challenge")


def _raw_records(raw: Path, name: str) -> list[dict]:
    return json.loads(unpacked(raw / f"{name}.json.7z")[f"data/processed/{name}.json"])


@pytest.fixture
def answers(dirs) -> pd.DataFrame:
    return pd.read_csv(dirs.private / "test.csv")


def test_split_is_twenty_percent_of_train_json_in_split_order(answers, dirs) -> None:
    original = {r["id"]: r for r in _raw_records(dirs.raw, "train")}
    train_text = unpacked(dirs.public / "train.json.7z")["train.json"].decode()
    train = json.loads(train_text)
    test = json.loads(unpacked(dirs.public / "test.json.7z")["test.json"])
    assert (len(train), len(test)) == (19, 5)  # 24 records, test rounded up
    # json.dump's own spacing, records unchanged
    assert train_text == json.dumps(train) and train == [original[r["id"]] for r in train]
    assert [r["id"] for r in test] == list(answers["id"])
    assert not {r["id"] for r in train} & {r["id"] for r in test}
    for record in test:
        assert list(record) == ["id", "band_1", "band_2", "inc_angle"]
        source = original[record["id"]]
        assert record == {k: v for k, v in source.items() if k != "is_iceberg"}
        assert answers.set_index("id").loc[record["id"], "is_iceberg"] == source["is_iceberg"]


def test_samples_list_the_test_ids_in_order(answers, dirs) -> None:
    private = (dirs.private / "sample_submission.csv").read_bytes()
    assert unpacked(dirs.public / "sample_submission.csv.7z") == {"sample_submission.csv": private}
    plain = (dirs.public / "sample_submission.csv").read_text().splitlines()
    assert plain[0] == '"id","is_iceberg"'
    assert plain[1:] == [f'"{i}",0.5' for i in answers["id"]]
    assert pd.read_csv(dirs.public / "sample_submission.csv").equals(
        pd.read_csv(dirs.private / "sample_submission.csv")
    )


def test_scratch_files_are_removed(dirs) -> None:
    assert sorted(p.name for p in dirs.private.iterdir()) == ["sample_submission.csv", "test.csv"]
    assert sorted(p.name for p in dirs.public.iterdir()) == [
        "sample_submission.csv",
        "sample_submission.csv.7z",
        "test.json.7z",
        "train.json.7z",
    ]


CASES = {
    "missing rows": (lambda f: f.iloc[2:], r"2 test id\(s\) have no row"),
    "unknown id": (
        lambda f: pd.concat([f, f.iloc[:1].assign(id="deadbeef")]),
        r"ids that are not in the test set: 'deadbeef'",
    ),
    "duplicate rows": (lambda f: pd.concat([f, f.iloc[:1]]), r"1 duplicate row\(s\)"),
    "target missing": (lambda f: f.drop(columns="is_iceberg"), r"missing column\(s\) 'is_iceberg'"),
    "empty value": (
        lambda f: f.assign(is_iceberg=[None, *f["is_iceberg"][1:]]),
        r"'is_iceberg' has 1 empty or missing value\(s\)",
    ),
    "above one": (lambda f: f.assign(is_iceberg=1.5), r"must hold probabilities in \[0, 1\]"),
    "negative": (lambda f: f.assign(is_iceberg=-0.1), r"must hold probabilities in \[0, 1\]"),
    "words": (
        lambda f: f.astype({"is_iceberg": object}).assign(is_iceberg="ship"),
        r"'is_iceberg' must hold finite numbers; found 'ship'",
    ),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_broken_submission_is_invalid_with_reason(case, answers, dirs, tmp_path) -> None:
    mutate, reason = CASES[case]
    submission = mutate(answers.assign(is_iceberg=0.3))
    assert_invalid(grade_frame(COMP, dirs.private, submission, tmp_path), reason)


def test_one_half_everywhere_scores_log_two_like_the_sample(answers, dirs, tmp_path) -> None:
    constant = answers.assign(is_iceberg=0.5).sample(frac=1, random_state=0)
    assert_scores_like_the_sample(
        COMP, dirs, constant, tmp_path, sample_file="sample_submission.csv", score=0.69315
    )


def test_confident_mistakes_cost_the_clipped_log(answers, dirs, tmp_path) -> None:
    """One certain wrong answer among n costs -log(eps) / n, eps = float64 machine epsilon."""
    flipped = answers.assign(is_iceberg=answers["is_iceberg"].astype(float))
    flipped.loc[0, "is_iceberg"] = 1.0 - flipped.loc[0, "is_iceberg"]
    expected = round(-math.log(2.0**-52) / len(answers), 5)
    assert grade_frame(COMP, dirs.private, flipped, tmp_path).score == expected
