"""invasive-species-monitoring: photos streamed into the new 7z archives, validation, AUC."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pandas as pd
import pytest

from mle_gym.competitions import get_competition
from mle_gym.competitions.catalog import invasive_species_monitoring
from mle_gym.competitions.prepare_progress import Progress
from mle_gym.competitions.zip_members import FIXED_TIME
from tests.competitions.support import assert_invalid, assert_scores_like_the_sample, grade_frame
from tests.competitions.test_archive_streams import unpacked
from tests.fixtures.raw import generator_for

COMP = get_competition("invasive-species-monitoring")
FIXTURE = generator_for(COMP)


@pytest.fixture
def answers(dirs) -> pd.DataFrame:
    return pd.read_csv(dirs.private / "answers.csv")


def _zipped(archive: Path, name: str) -> str:
    with zipfile.ZipFile(archive) as opened:
        assert opened.namelist() == [name]
        return opened.read(name).decode()


def test_labels_split_twenty_percent_in_split_order(answers, dirs) -> None:
    train = pd.read_csv(dirs.public / "train_labels.csv.zip")
    assert (len(train), len(answers)) == (32, 8)
    original = pd.read_csv(dirs.raw / "train_labels.csv.zip").set_index("name")["invasive"]
    for frame in (train, answers):
        assert list(frame["invasive"]) == list(original[frame["name"]])
    assert set(train["name"]).isdisjoint(answers["name"])
    assert set(train["name"]) | set(answers["name"]) == set(original.index)
    assert answers["invasive"].nunique() == 2


def test_photos_are_streamed_into_train_and_test_archives(answers, dirs) -> None:
    raw = unpacked(dirs.raw / "train.7z")
    train = pd.read_csv(dirs.public / "train_labels.csv.zip")
    for folder, names in (("train", train["name"]), ("test", answers["name"])):
        photos = unpacked(dirs.public / f"{folder}.7z")
        assert photos == {f"{folder}/{n}.jpg": raw[f"train/{n}.jpg"] for n in names}


def test_samples_zipped_plain_and_private_agree(answers, dirs) -> None:
    private = (dirs.private / "sample_submission.csv").read_text()
    assert _zipped(dirs.public / "sample_submission.csv.zip", "sample_submission.csv") == private
    plain = (dirs.public / "sample_submission.csv").read_text()
    assert plain.splitlines()[0] == '"name","invasive"'
    assert plain.splitlines()[1:] == private.splitlines()[1:]
    assert private.splitlines()[1:] == [f"{n},0.5" for n in answers["name"]]


def test_missing_photo_is_reported(tmp_path: Path) -> None:
    raw = tmp_path / "raw"
    raw.mkdir()
    FIXTURE.make_raw(raw)
    labels = pd.read_csv(raw / "train_labels.csv.zip")
    extra = pd.concat([labels, pd.DataFrame({"name": [999], "invasive": [1]})])
    with zipfile.ZipFile(raw / "train_labels.csv.zip", "w") as archive:
        archive.writestr("train_labels.csv", extra.to_csv(index=False))
    (tmp_path / "public").mkdir()
    (tmp_path / "private").mkdir()
    with pytest.raises(FileNotFoundError, match="lacks 1 of the labelled photos"):
        COMP.prepare(raw, tmp_path / "public", tmp_path / "private")


CASES = {
    "missing rows": (lambda f: f.iloc[2:], r"2 test id\(s\) have no row"),
    "training photo": (
        lambda f: pd.concat([f, f.iloc[:1].assign(name=10_000)]),
        r"ids that are not in the test set: '10000'",
    ),
    "duplicate rows": (lambda f: pd.concat([f, f.iloc[:1]]), r"1 duplicate row\(s\)"),
    "target missing": (lambda f: f.drop(columns="invasive"), r"missing column\(s\) 'invasive'"),
    "empty value": (
        lambda f: f.assign(invasive=[None, *f["invasive"][1:]]),
        r"'invasive' has 1 empty or missing value\(s\)",
    ),
    "above one": (lambda f: f.assign(invasive=2), r"must hold probabilities in \[0, 1\]"),
    "words": (
        lambda f: f.astype({"invasive": object}).assign(invasive="yes"),
        r"'invasive' must hold finite numbers; found 'yes'",
    ),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_broken_submission_is_invalid_with_reason(case, answers, dirs, tmp_path) -> None:
    mutate, reason = CASES[case]
    assert_invalid(grade_frame(COMP, dirs.private, mutate(answers), tmp_path), reason)


def test_constant_prediction_scores_half_like_the_sample(answers, dirs, tmp_path) -> None:
    constant = answers.assign(invasive=0.9).sample(frac=1, random_state=0)
    assert_scores_like_the_sample(
        COMP, dirs, constant, tmp_path, sample_file="sample_submission.csv", score=0.5
    )


def test_inverted_ranking_scores_zero(answers, dirs, tmp_path) -> None:
    inverted = answers.assign(invasive=1 - answers["invasive"])
    assert grade_frame(COMP, dirs.private, inverted, tmp_path).score == 0.0


def test_a_written_photo_gets_a_fixed_write_time(tmp_path: Path) -> None:
    """Each photo reaches the archive as a file whose write time (which 7z records) is
    fixed, so two preparations write the same bytes."""

    class Archive:
        def __init__(self) -> None:
            self.written: list[tuple[str, bytes, int]] = []

        def write(self, path: Path, arcname: str) -> None:
            self.written.append((arcname, path.read_bytes(), path.stat().st_mtime_ns))

    archive = Archive()
    with Progress("photos") as progress:
        photo = invasive_species_monitoring._Photo(
            archive, "test/7.jpg", tmp_path / "photo.jpg", progress
        )
        photo.write(b"\xff\xd8 first part ")
        photo.write(b"second part \xff\xd9")
        photo.close()
    data = b"\xff\xd8 first part second part \xff\xd9"
    assert archive.written == [("test/7.jpg", data, FIXED_TIME * 10**9)]
    assert (progress.files, progress.nbytes) == (1, len(data))
