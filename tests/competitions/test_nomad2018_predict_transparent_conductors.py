"""nomad2018-predict-transparent-conductors: layout, submission rules, the sample's RMSLE."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from mle_gym.competitions import get_competition
from mle_gym.competitions.catalog.nomad2018_predict_transparent_conductors import (
    SAMPLE_GUESS,
    TARGETS,
)
from mle_gym.grading import grade
from tests.competitions.support import grade_frame
from tests.fixtures.raw.nomad2018_predict_transparent_conductors import MATERIALS

COMP = get_competition("nomad2018-predict-transparent-conductors")


@pytest.fixture(scope="module")
def sample(dirs) -> pd.DataFrame:
    return pd.read_csv(dirs.public / "sample_submission.csv", dtype=str)


def test_ids_restart_at_one_and_geometries_follow_them(dirs) -> None:
    train = pd.read_csv(dirs.public / "train.csv")
    test = pd.read_csv(dirs.private / "test.csv")
    assert len(test) == MATERIALS // 10
    for frame, side in ((train, "train"), (test, "test")):
        assert frame["id"].tolist() == list(range(1, len(frame) + 1))
        assert len(list((dirs.public / side).glob("*/geometry.xyz"))) == len(frame)
    # The geometry under a new id is the one of the material with the same lattice.
    row = test.iloc[0]
    text = (dirs.public / "test" / str(int(row["id"])) / "geometry.xyz").read_text()
    assert f"lattice_vector {row['lattice_vector_1_ang']:.8f} " in text


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda s: s.iloc[1:], "test id(s) have no row"),
        (lambda s: pd.concat([s, s.iloc[:1].assign(id="999")]), "not in the test set"),
        (lambda s: pd.concat([s, s.iloc[:1]]), "duplicate row"),
        (lambda s: s.drop(columns="bandgap_energy_ev"), "missing column(s) 'bandgap_energy_ev'"),
        (lambda s: s.assign(formation_energy_ev_natom=""), "empty or missing value"),
        (lambda s: s.assign(bandgap_energy_ev="nan"), "must hold finite numbers"),
        (lambda s: s.assign(formation_energy_ev_natom="-1"), "greater than -1"),
    ],
)
def test_invalid_submissions_are_rejected(dirs, sample, tmp_path, change, message) -> None:
    report = grade_frame(COMP, dirs.private, change(sample.copy()), tmp_path)
    assert not report.valid_submission
    assert message in report.error


def test_constant_guess_scores_the_mean_of_two_rmsles(dirs) -> None:
    """The sample guesses one value per target; its score is the mean of the two RMSLEs."""
    answers = pd.read_csv(dirs.private / "test.csv")
    expected = np.mean(
        [np.sqrt(np.mean((np.log1p(SAMPLE_GUESS[t]) - np.log1p(answers[t])) ** 2)) for t in TARGETS]
    )
    report = grade(COMP, dirs.public / "sample_submission.csv", dirs.private)
    assert report.score == round(float(expected), 5)


def test_rows_are_matched_by_id_not_by_order(dirs, tmp_path) -> None:
    answers = pd.read_csv(dirs.private / "test.csv")[["id", *TARGETS]]
    report = grade_frame(COMP, dirs.private, answers.iloc[::-1], tmp_path)
    assert report.score == 0.0
