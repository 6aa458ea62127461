"""3d-object-detection-for-autonomous-vehicles: the split by drive and the tables that
follow it, sensor files placed, broken submissions refused with the reason."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from mle_gym.competitions import get_competition
from mle_gym.grading import grade
from tests.competitions.support import assert_invalid, grade_frame

COMP = get_competition("3d-object-detection-for-autonomous-vehicles")


@pytest.fixture
def answers(dirs) -> pd.DataFrame:
    return pd.read_csv(dirs.private / "test.csv", dtype=str, keep_default_na=False)


def _table(dirs, side: str, name: str) -> list[dict]:
    return json.loads((dirs.public / f"{side}_data" / name).read_text())


def test_split_by_drive_and_tables_follow(dirs, answers) -> None:
    train_logs = {log["token"] for log in _table(dirs, "train", "log.json")}
    test_logs = {log["token"] for log in _table(dirs, "test", "log.json")}
    assert len(train_logs) == 8 and len(test_logs) == 2
    test_samples = {s["token"] for s in _table(dirs, "test", "sample.json")}
    assert {s["scene_token"] for s in _table(dirs, "test", "sample.json")} == test_logs
    assert set(answers["Id"]) == test_samples
    train = pd.read_csv(dirs.public / "train.csv", dtype=str)
    assert not set(train["Id"]) & test_samples
    # Answers gain the confidence 1.0 in front of each box; train keeps 8 tokens per box.
    raw = pd.read_csv(dirs.raw / "train.csv", dtype=str).set_index("Id")
    for sample, cell in zip(answers["Id"], answers["PredictionString"], strict=True):
        tokens = cell.split(" ")
        assert tokens[::9] == ["1.0"] * (len(tokens) // 9)
        del tokens[::9]
        assert " ".join(tokens) == raw.loc[sample, "PredictionString"]
    data = _table(dirs, "test", "sample_data.json")
    assert {d["sample_token"] for d in data} == test_samples
    assert [p["token"] for p in _table(dirs, "test", "ego_pose.json")] == [
        d["ego_pose_token"] for d in data
    ]
    assert not (dirs.public / "test_data" / "sample_annotation.json").exists()
    assert not (dirs.public / "test_data" / "instance.json").exists()
    annotated = {a["sample_token"] for a in _table(dirs, "train", "sample_annotation.json")}
    assert annotated == set(train["Id"])
    # MLE-bench's map.json names the test drives on both sides.
    for side in ("train", "test"):
        assert set(_table(dirs, side, "map.json")[0]["log_tokens"]) == test_logs
    for datum in data:
        folder = "test_images" if datum["fileformat"] == "jpeg" else "test_lidar"
        name = datum["filename"].split("/")[-1]
        raw_folder = "train_images" if datum["fileformat"] == "jpeg" else "train_lidar"
        assert (dirs.public / folder / name).read_bytes() == (
            dirs.raw / raw_folder / name
        ).read_bytes()
    assert len(list((dirs.public / "test_lidar").iterdir())) == len(test_samples)


def test_sample_scores_zero_and_answers_one(dirs, answers, tmp_path) -> None:
    assert grade(COMP, dirs.public / "sample_submission.csv", dirs.private).score == 0.0
    assert grade_frame(COMP, dirs.private, answers.iloc[::-1], tmp_path).score == 1.0


CASES = {
    "missing rows": (lambda f: f.iloc[1:], r"1 test id\(s\) have no row"),
    "duplicate rows": (lambda f: pd.concat([f, f.iloc[:1]]), r"1 duplicate row\(s\)"),
    "unknown id": (
        lambda f: pd.concat([f, f.iloc[:1].assign(Id="nope")]),
        r"ids that are not in the test set: 'nope'",
    ),
    "eight tokens": (
        lambda f: f.assign(PredictionString="1 0 0 0 2 4 2 car"),
        "9 tokens per box",
    ),
    "nan centre": (
        lambda f: f.assign(PredictionString="1 nan 0 0 2 4 2 0 car"),
        "non-finite",
    ),
    "negative size": (
        lambda f: f.assign(PredictionString="1 0 0 0 -2 4 2 0 car"),
        "not > 0",
    ),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_broken_submission_is_invalid_with_reason(case, answers, dirs, tmp_path) -> None:
    mutate, reason = CASES[case]
    assert_invalid(grade_frame(COMP, dirs.private, mutate(answers), tmp_path), reason)
