"""spaceship-titanic on the real Kaggle files: MLE-bench's split, figures and grading."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest

from mle_gym.competitions import get_competition
from mle_gym.competitions.spec import Checksums
from mle_gym.data import ChecksumError, CompetitionDirs, prepare
from mle_gym.data.checksums import md5_of
from mle_gym.grading import grade
from tests.prerequisites import SPACESHIP_RAW, require_shared

require_shared("data", "spaceship-titanic", "raw", module=True)
COMP = get_competition("spaceship-titanic")


def test_prepared_files_have_mlebench_md5(spaceship_cache: Path) -> None:
    import json

    checksums = require_shared("specs", "mlebench_checksums.json")
    expected = json.loads(checksums.read_text())[COMP.id]
    dirs = CompetitionDirs.of(COMP.id, spaceship_cache)
    assert sorted(p.name for p in dirs.public.iterdir()) == sorted(expected["public"])
    for name, md5 in expected["public"].items():
        assert md5_of(dirs.public / name) == md5, name
    for name, md5 in expected["private"].items():
        assert md5_of(dirs.private / name) == md5, name
    assert dirs.preparation_record()["mismatches"] == []


def test_sample_submission_grades_to_spec(spaceship_cache: Path) -> None:
    dirs = CompetitionDirs.of(COMP.id, spaceship_cache)
    report = grade(COMP, dirs.public / "sample_submission.csv", dirs.private)
    assert report.valid_submission
    assert report.score == pytest.approx(0.50345)
    assert report.normalized_score == pytest.approx(0.0)
    assert not report.any_medal and not report.above_median


def test_private_answers_reach_gold(spaceship_cache: Path) -> None:
    dirs = CompetitionDirs.of(COMP.id, spaceship_cache)
    report = grade(COMP, dirs.private / "test.csv", dirs.private)
    assert report.score == 1.0 and report.gold_medal and report.any_medal
    assert report.normalized_score > 1.0


def test_prepare_reuses_a_finished_preparation(spaceship_cache: Path) -> None:
    result = prepare(COMP, root=spaceship_cache)
    assert result.reused


def test_interrupted_prepare_never_looks_prepared(tmp_path: Path) -> None:
    def crash(raw: Path, public: Path, private: Path) -> None:
        COMP.prepare(raw, public, private)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        prepare(replace(COMP, prepare=crash), SPACESHIP_RAW, root=tmp_path)
    dirs = CompetitionDirs.of(COMP.id, tmp_path)
    assert not dirs.is_prepared()
    assert not dirs.public.exists() and not dirs.private.exists()
    assert [p.name for p in dirs.root.iterdir()] == ["raw"]


def test_checksum_mismatch_warns_by_name_and_strict_fails(tmp_path: Path) -> None:
    wrong = replace(
        COMP,
        checksums=Checksums(
            public={**COMP.checksums.public, "train.csv": "0" * 32}, private=COMP.checksums.private
        ),
    )
    result = prepare(wrong, SPACESHIP_RAW, root=tmp_path / "a")
    assert [m.file for m in result.mismatches] == ["public/train.csv"]
    assert "public/train.csv" in str(result.mismatches[0])
    with pytest.raises(ChecksumError, match=r"public/train\.csv"):
        prepare(wrong, SPACESHIP_RAW, root=tmp_path / "b", strict=True)
    assert not CompetitionDirs.of(COMP.id, tmp_path / "b").is_prepared()


def test_prepare_from_a_zip(tmp_path: Path) -> None:
    import zipfile

    archive = tmp_path / "spaceship-titanic.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for path in SPACESHIP_RAW.iterdir():
            zf.write(path, path.name)
    result = prepare(COMP, archive, root=tmp_path / "cache")
    assert result.checked and not result.mismatches


def test_no_test_passenger_in_public_train(spaceship_cache: Path) -> None:
    dirs = CompetitionDirs.of(COMP.id, spaceship_cache)
    train = pd.read_csv(dirs.public / "train.csv")
    answers = pd.read_csv(dirs.private / "test.csv")
    public_test = pd.read_csv(dirs.public / "test.csv")
    assert not set(train.PassengerId) & set(answers.PassengerId)
    assert "Transported" not in public_test.columns
    assert list(public_test.PassengerId) == list(answers.PassengerId)
