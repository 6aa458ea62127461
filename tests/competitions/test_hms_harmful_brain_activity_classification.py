"""hms-harmful-brain-activity-classification: split by spectrogram with linked parquet
files, rejected submissions, rows of a repeated eeg_id paired in order, the sample's KL."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest

from mle_gym.competitions import get_competition
from mle_gym.competitions.catalog.hms_harmful_brain_activity_classification import VOTES
from tests.competitions.support import assert_invalid, grade_frame

COMP = get_competition("hms-harmful-brain-activity-classification")
TARGETS = list(VOTES)


@pytest.fixture
def gold(dirs) -> pd.DataFrame:
    return pd.read_csv(dirs.private / "gold_submission.csv")


@pytest.fixture
def labels(dirs) -> pd.DataFrame:
    return pd.read_csv(dirs.private / "test.csv")


def test_split_keeps_spectrograms_and_recordings_apart(labels, dirs) -> None:
    train = pd.read_csv(dirs.public / "train.csv")
    public_test = pd.read_csv(dirs.public / "test.csv")
    assert public_test.equals(labels[["spectrogram_id", "eeg_id", "patient_id"]])
    assert not set(train["spectrogram_id"]) & set(labels["spectrogram_id"])
    assert not set(train["eeg_id"]) & set(labels["eeg_id"])
    assert labels["eeg_id"].duplicated().any()  # the pairing rule below is exercised
    for kind, key in (("eegs", "eeg_id"), ("spectrograms", "spectrogram_id")):
        for part, frame in (("train", train), ("test", labels)):
            names = {p.name for p in (dirs.public / f"{part}_{kind}").iterdir()}
            assert names == {f"{i}.parquet" for i in frame[key]}
    eeg = f"{labels['eeg_id'].iloc[0]}.parquet"
    assert os.path.samefile(dirs.public / "test_eegs" / eeg, dirs.raw / "train_eegs" / eeg)


def test_answers_are_votes_over_their_total(labels, gold) -> None:
    votes = labels[TARGETS].to_numpy(float)
    assert np.array_equal(gold[TARGETS].to_numpy(), votes / votes.sum(axis=1, keepdims=True))
    assert gold["eeg_id"].tolist() == labels["eeg_id"].tolist()


def _spread(frame: pd.DataFrame, amount: float) -> pd.DataFrame:
    """Move `amount` of probability from the first class to the second."""
    return frame.assign(
        seizure_vote=frame["seizure_vote"] - amount, lpd_vote=frame["lpd_vote"] + amount
    )


CASES = {
    "a repeated eeg_id one row short": (
        lambda f: f.drop(index=f.index[f["eeg_id"].duplicated()][0]),
        r"1 test id\(s\) have no row",
    ),
    "an eeg_id once too often": (lambda f: pd.concat([f, f.iloc[:1]]), r"1 duplicate row"),
    "a training eeg_id": (
        lambda f: f.assign(eeg_id=[7, *f["eeg_id"][1:]]),
        r"1 row\(s\) have ids that are not in the test set: '7'",
    ),
    "missing class column": (lambda f: f.drop(columns="other_vote"), r"'other_vote'"),
    "row sums to 1.00001": (
        lambda f: f.assign(other_vote=f["other_vote"] + 1e-5),
        r"do not sum to 1 \(rounded to 5 decimals\)",
    ),
    "negative probability": (lambda f: _spread(f, 0.2), r"'seizure_vote' must hold probabilities"),
    "empty value": (
        lambda f: f.assign(gpd_vote=[None] + [0.2] * (len(f) - 1)),
        r"'gpd_vote' has 1 empty",
    ),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_broken_submission_is_invalid_with_reason(case, dirs, tmp_path) -> None:
    mutate, reason = CASES[case]
    sample = pd.read_csv(dirs.public / "sample_submission.csv")
    assert_invalid(grade_frame(COMP, dirs.private, mutate(sample), tmp_path), reason)


def test_row_sum_within_rounding_is_accepted(dirs, tmp_path) -> None:
    sample = pd.read_csv(dirs.public / "sample_submission.csv")
    nudged = sample.assign(other_vote=sample.other_vote + 4e-6)
    assert grade_frame(COMP, dirs.private, nudged, tmp_path).valid_submission


def _kl(truth: np.ndarray, predicted: np.ndarray) -> float:
    predicted = np.clip(predicted, 1e-15, 1 - 1e-15)
    cells = np.where(truth > 0, truth * np.log(np.where(truth > 0, truth, 1) / predicted), 0.0)
    return float(cells.sum(axis=1).mean())


def test_rows_of_an_eeg_id_pair_with_its_test_rows_in_order(gold, dirs, tmp_path) -> None:
    predictions = gold.copy()
    predictions[TARGETS] = np.random.default_rng(0).dirichlet(np.ones(6), len(gold))
    expected = round(_kl(gold[TARGETS].to_numpy(), predictions[TARGETS].to_numpy()), 5)
    # other eeg_ids first, yet each eeg_id's rows keep their relative order: same score
    regrouped = pd.concat([g for _, g in predictions.groupby("eeg_id", sort=False)][::-1])
    assert grade_frame(COMP, dirs.private, regrouped, tmp_path).score == expected
    # reversing the rows within an eeg_id pairs them with other answers
    reversed_rows = predictions.iloc[::-1]
    assert grade_frame(COMP, dirs.private, reversed_rows, tmp_path).score != expected


def test_one_prediction_per_eeg_id_scores_alike_in_any_order(gold, dirs, tmp_path) -> None:
    per_eeg = gold.groupby("eeg_id")[TARGETS].transform("mean")
    predictions = gold[["eeg_id"]].join(per_eeg)
    expected = round(_kl(gold[TARGETS].to_numpy(), per_eeg.to_numpy()), 5)
    for seed in range(3):
        shuffled = predictions.sample(frac=1, random_state=seed)
        assert grade_frame(COMP, dirs.private, shuffled, tmp_path).score == expected


def test_uniform_sample_scores_mean_kl_from_uniform(labels, dirs, tmp_path) -> None:
    votes = labels[TARGETS].to_numpy(float)
    shares = votes / votes.sum(axis=1, keepdims=True)
    safe = np.where(shares > 0, shares, 1.0)
    expected = float((shares * np.log(6 * safe)).sum(axis=1).mean())
    sample = pd.read_csv(dirs.public / "sample_submission.csv")
    assert np.allclose(sample[TARGETS], 1 / 6)
    assert grade_frame(COMP, dirs.private, sample, tmp_path).score == round(expected, 5)
    assert COMP.sample_score == 1.40995
