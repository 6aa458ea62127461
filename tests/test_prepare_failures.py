"""A failed preparation changes nothing: damaged raw files (a truncated CSV or zip, a missing
column) and a full disk fail with a plain error, an existing preparation survives whole,
raw files never replace a preparation without --force, and a damaged answer key is never
blamed on a submission."""

from __future__ import annotations

import functools
import json
import shutil
import subprocess
import sys
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest

from mle_gym.competitions import get_competition
from mle_gym.competitions.spec import Checksums
from mle_gym.data import AlreadyPrepared, CompetitionDirs, PrepareError, prepare
from mle_gym.data.checksums import md5_of
from mle_gym.grading import AnswerKeyError, build_answer_key, grade
from mle_gym.grading.bounded import grade_bounded
from tests.batch_support import mle_gym
from tests.conftest import require_bwrap
from tests.prerequisites import SPACESHIP_RAW, require_shared

COMP = get_competition("spaceship-titanic")
KEYED = functools.partial(build_answer_key, COMP)


@pytest.fixture(autouse=True)
def _real_files() -> None:
    require_shared("data", "spaceship-titanic", "raw")


def _fingerprint(dirs: CompetitionDirs) -> dict[str, str]:
    """Every file of a preparation (answer keys aside) and its md5."""
    return {
        str(p.relative_to(dirs.root)): md5_of(p)
        for p in sorted(dirs.root.rglob("*"))
        if p.is_file() and ".answer-keys" not in p.parts
    }


def _copy_raw(into: Path) -> Path:
    into.mkdir()
    for path in SPACESHIP_RAW.iterdir():
        shutil.copyfile(path, into / path.name)
    return into


@pytest.fixture
def prepared(tmp_path: Path) -> CompetitionDirs:
    root = tmp_path / "cache"
    prepare(COMP, SPACESHIP_RAW, root=root, check_private=KEYED)
    return CompetitionDirs.of(COMP.id, root)


def test_a_truncated_train_csv_fails_and_the_good_preparation_survives(
    prepared: CompetitionDirs, tmp_path: Path
) -> None:
    before = _fingerprint(prepared)
    bad = _copy_raw(tmp_path / "bad")
    data = (bad / "train.csv").read_bytes()
    # cut a third of the way in, mid-row, at a row MLE-bench's split puts in the hidden test
    # set: its answer is lost (the first five such cuts leave the broken row in train)
    cut = [i for i, byte in enumerate(data) if byte == 10 and i > len(data) // 3][5] - 30
    (bad / "train.csv").write_bytes(data[:cut])
    with pytest.raises(PrepareError, match=r"cannot be used for grading.*kept"):
        prepare(COMP, bad, root=prepared.root.parent, force=True, check_private=KEYED)
    assert prepared.is_prepared() and _fingerprint(prepared) == before
    assert sorted(p.name for p in prepared.root.iterdir() if p.name.startswith(".")) == []
    sample = prepared.public / "sample_submission.csv"
    assert grade(COMP, sample, prepared.private).valid_submission


def test_raw_files_do_not_replace_a_preparation_without_force(
    prepared: CompetitionDirs, tmp_path: Path
) -> None:
    before = _fingerprint(prepared)
    with pytest.raises(AlreadyPrepared, match="--force"):
        prepare(COMP, SPACESHIP_RAW, root=prepared.root.parent)
    assert _fingerprint(prepared) == before


def test_a_raw_file_without_its_target_column_is_a_plain_error(tmp_path: Path) -> None:
    bad = _copy_raw(tmp_path / "bad")
    lines = (bad / "train.csv").read_text().splitlines()
    (bad / "train.csv").write_text("\n".join(line.rsplit(",", 1)[0] for line in lines) + "\n")
    result = mle_gym("prepare", COMP.id, "--raw", str(bad), home=tmp_path / "home", ok=False)
    out = result.stdout + result.stderr
    assert result.returncode == 2 and "error:" in out and "'Transported'" in out, out
    assert "Traceback" not in out
    assert not CompetitionDirs.of(COMP.id, tmp_path / "home").is_prepared()


def test_a_truncated_zip_is_called_truncated(tmp_path: Path) -> None:
    archive = tmp_path / "spaceship-titanic.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in SPACESHIP_RAW.iterdir():
            zf.write(path, path.name)
    data = archive.read_bytes()
    archive.write_bytes(data[: len(data) // 2])
    with pytest.raises(PrepareError, match="truncated"):
        prepare(COMP, archive, root=tmp_path / "cache")
    assert not (tmp_path / "cache" / COMP.id).exists()


def test_a_full_disk_is_said_plainly(tmp_path: Path) -> None:
    """The cache on a 1 MiB tmpfs (in a bubblewrap namespace): the split cannot be written."""
    require_bwrap()
    command = [
        "bwrap", "--dev-bind", "/", "/", "--size", str(1 << 20), "--tmpfs", "/mnt",
        "--setenv", "MLE_GYM_HOME", "/mnt/home",
        sys.executable, "-m", "mle_gym.cli", "prepare", COMP.id, "--raw", str(SPACESHIP_RAW),
    ]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, timeout=300)
    out = result.stdout + result.stderr
    assert result.returncode == 2 and "error: disk full" in out, out
    assert "Traceback" not in out


def test_a_damaged_answer_key_is_never_the_submission_s_fault(
    prepared: CompetitionDirs,
) -> None:
    answers = prepared.private / "test.csv"
    lines = answers.read_text().splitlines()
    lines[5] = lines[5].rsplit(",", 1)[0] + ","  # one answer lost
    answers.write_text("\n".join(lines) + "\n")
    sample = prepared.public / "sample_submission.csv"
    with pytest.raises(AnswerKeyError, match="not the submission"):
        grade(COMP, sample, prepared.private)
    with pytest.raises(AnswerKeyError, match="prepare it again"):
        grade_bounded(COMP.id, sample, prepared.private)


def test_list_shows_a_preparation_that_differs_from_mle_bench(tmp_path: Path) -> None:
    wrong = replace(
        COMP,
        checksums=Checksums(
            public={**COMP.checksums.public, "train.csv": "0" * 32}, private=COMP.checksums.private
        ),
    )
    home = tmp_path / "home"
    prepare(wrong, SPACESHIP_RAW, root=home)
    listed = json.loads(mle_gym("list", "--json", home=home).stdout)
    entry = next(e for e in listed if e["id"] == COMP.id)
    assert entry["prepared"] and "public/train.csv" in entry["checksum_mismatches"][0]
    text = mle_gym("list", home=home).stdout
    assert "differs" in text and f"mle-gym prepare {COMP.id} --force" in text, text
