"""ml2021spring-hw2: the re-split matrices, submission rules and the constant sample's score."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from mle_gym.competitions import get_competition
from mle_gym.competitions.catalog import ml2021spring_hw2
from tests.competitions.support import assert_invalid, grade_frame

COMP = get_competition("ml2021spring-hw2")
FOLDER = Path("timit_11") / "timit_11"


@pytest.fixture(scope="module")
def sample(dirs) -> pd.DataFrame:
    return pd.read_csv(dirs.public / "sampleSubmission.csv", dtype=str)


def test_layout_holds_out_the_share_of_kaggles_test_set(dirs) -> None:
    folder = dirs.public / FOLDER
    train = np.load(folder / "train_11.npy")
    labels = np.load(folder / "train_label_11.npy")
    test = np.load(folder / "test_11.npy")
    answers = pd.read_csv(dirs.private / "answers.csv")
    # 80 / (220 + 80) of the 220 labelled frames, rounded up by scikit-learn.
    assert (len(train), len(test)) == (161, 59)
    assert train.dtype == np.float32 and train.shape[1] == 429 and labels.dtype == "<U2"
    assert answers["Id"].tolist() == list(range(59))
    raw = np.concatenate([train, test])
    assert len(np.unique(raw, axis=0)) == 220  # each labelled frame lands once


def test_blocks_write_what_np_save_writes(tmp_path, monkeypatch) -> None:
    source = tmp_path / "source.npy"
    np.save(source, np.arange(70 * 3, dtype=np.float32).reshape(70, 3))
    rows = np.random.default_rng(1).permutation(70)[:50]
    monkeypatch.setattr(ml2021spring_hw2, "BLOCK_ROWS", 7)
    ml2021spring_hw2.save_rows(source, rows, tmp_path / "blocks.npy")
    np.save(tmp_path / "whole.npy", np.load(source)[rows])
    assert (tmp_path / "blocks.npy").read_bytes() == (tmp_path / "whole.npy").read_bytes()


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda s: s.iloc[1:], "test id\\(s\\) have no row"),
        (lambda s: pd.concat([s, s.iloc[:1].assign(Id="1000")]), "not in the test set"),
        (lambda s: pd.concat([s, s.iloc[:1]]), "duplicate row"),
        (lambda s: s.rename(columns={"ClassId": "Class"}), "missing column\\(s\\) 'ClassId'"),
        (lambda s: s.assign(ClassId=""), "empty or missing value"),
        (lambda s: s.assign(ClassId="sil"), "must hold one of"),
        (lambda s: s.assign(ClassId="2.5"), "must hold one of"),
    ],
)
def test_invalid_submissions_are_rejected(dirs, sample, tmp_path, change, reason) -> None:
    assert_invalid(grade_frame(COMP, dirs.private, change(sample.copy()), tmp_path), reason)


def test_constant_class_scores_its_frequency(dirs, sample, tmp_path) -> None:
    """The sample predicts class 0: its accuracy is the share of class 0 among test frames."""
    answers = pd.read_csv(dirs.private / "answers.csv")
    share = round(float((answers["ClassId"] == 0).mean()), 5)
    report = grade_frame(COMP, dirs.private, sample, tmp_path)
    assert report.score == share > 0


def test_classes_written_as_floats_count_as_integers(dirs, tmp_path) -> None:
    """MLE-bench reads the column as numbers: `7.0` is class 7."""
    answers = pd.read_csv(dirs.private / "answers.csv")
    as_floats = answers.assign(ClassId=answers["ClassId"].astype(float)).sample(frac=1)
    report = grade_frame(COMP, dirs.private, as_floats, tmp_path)
    assert report.score == 1.0 and report.warnings
