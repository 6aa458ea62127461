"""icecube: the batch split (streamed), hard links, column rules, and the angle by hand."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest

from mle_gym.competitions import get_competition
from mle_gym.competitions.catalog import icecube_neutrinos_in_deep_ice as ice
from tests.competitions.support import assert_invalid, grade_frame
from tests.fixtures.raw.icecube_neutrinos_in_deep_ice import make_raw

COMP = get_competition("icecube-neutrinos-in-deep-ice")


@pytest.fixture(scope="module")
def answers(dirs) -> pd.DataFrame:
    return pd.read_csv(dirs.private / "test.csv")


def test_held_out_batches_move_to_test(dirs, answers) -> None:
    train = pd.read_parquet(dirs.public / "train_meta.parquet")
    test = pd.read_parquet(dirs.public / "test_meta.parquet")
    test_batches = sorted(int(p.stem.split("_")[1]) for p in (dirs.public / "test").iterdir())
    assert len(test_batches) == 2 and len(list((dirs.public / "train").iterdir())) == 18
    assert sorted(test["batch_id"].unique()) == test_batches
    assert set(train["batch_id"]).isdisjoint(test_batches)
    assert "azimuth" not in test.columns and list(answers.columns) == ["event_id", *ice.TARGETS]
    assert test["event_id"].tolist() == answers["event_id"].tolist()
    assert not (dirs.public / "test" / "batch_661.parquet").exists()


def test_batch_files_are_hard_links(dirs) -> None:
    files = [*(dirs.public / "train").iterdir(), *(dirs.public / "test").iterdir()]
    assert all(os.stat(p).st_nlink >= 2 for p in files)


def test_small_reads_write_the_same_tables(tmp_path, monkeypatch) -> None:
    raw = tmp_path / "raw"
    raw.mkdir()
    make_raw(raw)
    written = {}
    for rows in (1_000, 7):
        public, private = tmp_path / f"public{rows}", tmp_path / f"private{rows}"
        public.mkdir(), private.mkdir()
        monkeypatch.setattr(ice, "READ_ROWS", rows)
        ice.split_meta(raw / ice.META, public, private, {3, 17})
        written[rows] = [pd.read_parquet(public / "train_meta.parquet")]
        written[rows] += [(private / "test.csv").read_bytes()]
    pd.testing.assert_frame_equal(written[1_000][0], written[7][0])
    assert written[1_000][1] == written[7][1]


def test_batch_ids_keep_their_first_appearance_order(tmp_path) -> None:
    path = tmp_path / "meta.parquet"
    pd.DataFrame({"batch_id": [5, 5, 2, 9, 2, 5]}).to_parquet(path, row_group_size=2)
    assert ice.batch_ids_in_order(path) == [5, 2, 9]


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda s: s.iloc[1:], "test id\\(s\\) have no row"),
        (lambda s: pd.concat([s, s.iloc[:1].assign(event_id="1")]), "not in the test set"),
        (lambda s: pd.concat([s, s.iloc[:1]]), "duplicate row"),
        (lambda s: s.drop(columns="zenith"), "missing column\\(s\\) 'zenith'"),
        (lambda s: s.assign(energy="1"), "unexpected column\\(s\\) 'energy'"),
        (lambda s: s.assign(azimuth="inf"), "must hold finite numbers"),
        (lambda s: s.assign(zenith=""), "empty or missing value"),
    ],
)
def test_invalid_submissions_are_rejected(dirs, tmp_path, change, reason) -> None:
    sample = pd.read_csv(dirs.public / "sample_submission.csv", dtype=str)
    assert_invalid(grade_frame(COMP, dirs.private, change(sample.copy()), tmp_path), reason)


def test_angles_by_hand(dirs, answers, tmp_path) -> None:
    """Pointing at the antipode is off by π; the same direction written with an azimuth
    shifted by 2π is off by 0; a zenith moved by 0.25 is off by 0.25. In any row order."""
    azimuth, zenith = answers["azimuth"].to_numpy(), answers["zenith"].to_numpy()
    part = np.arange(len(answers)) % 3
    guess_azimuth = azimuth + np.select([part == 0, part == 1], [np.pi, 2 * np.pi], 0)
    moved = np.where(zenith > 1, zenith - 0.25, zenith + 0.25)
    guess_zenith = np.select([part == 0, part == 1], [np.pi - zenith, zenith], moved)
    guess = answers.assign(azimuth=guess_azimuth, zenith=guess_zenith)
    expected = ((part == 0).sum() * np.pi + (part == 2).sum() * 0.25) / len(answers)
    report = grade_frame(COMP, dirs.private, guess.sample(frac=1, random_state=0), tmp_path)
    assert report.score == pytest.approx(round(expected, 5), abs=2e-5), report.error
