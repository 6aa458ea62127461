"""One large shuffled submission per metric family, graded end to end and checked against
the metric computed directly on the arrays it was made from (issue 11).

Grading reads large files through fast paths (pyarrow's CSV reader typing the columns,
the answer key's id index, answer keys kept on disk, metrics over whole arrays); these
tests show the fast paths give the score the definition gives, at a size where they are
the ones taken, and again when a cell forces the general, cell-by-cell reading.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from mle_gym.competitions import get_competition
from mle_gym.grading.grader import score_submission

ROWS = 100_000

Case = Callable[[np.random.Generator], tuple[pd.DataFrame, pd.DataFrame, float]]


def _hex_ids(rng: np.random.Generator) -> list[str]:
    return [f"{x:016x}" for x in rng.permutation(ROWS) * 7919 + 104729]


def labels(rng: np.random.Generator) -> tuple[pd.DataFrame, pd.DataFrame, float]:
    truth, guess = rng.integers(1, 8, ROWS), rng.integers(1, 8, ROWS)
    ids = rng.permutation(ROWS) + 4_000_000
    answers = pd.DataFrame({"Id": ids, "Cover_Type": truth})
    return answers, answers.assign(Cover_Type=guess), float(np.mean(truth == guess))


def booleans(rng: np.random.Generator) -> tuple[pd.DataFrame, pd.DataFrame, float]:
    truth, guess = rng.random(ROWS) < 0.5, rng.random(ROWS) < 0.5
    ids = [f"{p // 3:07d}_{p % 3 + 1:02d}" for p in rng.permutation(ROWS)]
    answers = pd.DataFrame({"PassengerId": ids, "Transported": truth})
    return answers, answers.assign(Transported=guess), float(np.mean(truth == guess))


def numbers(rng: np.random.Generator) -> tuple[pd.DataFrame, pd.DataFrame, float]:
    truth = rng.gamma(2.0, 6.0, ROWS).round(2)
    guess = truth + rng.normal(0, 3, ROWS)
    keys = [f"2013-01-{p % 28 + 1:02d} 10:{p % 60:02d}:00.{p:09d}" for p in rng.permutation(ROWS)]
    answers = pd.DataFrame({"key": keys, "fare_amount": truth})
    return answers, answers.assign(fare_amount=guess), float(np.sqrt(np.mean((truth - guess) ** 2)))


def column_auc(rng: np.random.Generator) -> tuple[pd.DataFrame, pd.DataFrame, float]:
    classes = ["toxic", "severe_toxic", "obscene", "threat", "insult", "identity_hate"]
    truth = (rng.random((ROWS, 6)) < 0.1).astype(int)
    truth[rng.random(ROWS) < 0.3] = -1
    guess = np.clip(truth + rng.normal(0, 0.6, truth.shape), 0, 1)
    scored = truth[:, 0] >= 0
    direct = np.mean([roc_auc_score(truth[scored, k], guess[scored, k]) for k in range(6)])
    answers = pd.DataFrame(truth, columns=classes)
    answers.insert(0, "id", _hex_ids(rng))
    submission = pd.DataFrame({"id": answers["id"], **dict(zip(classes, guess.T, strict=True))})
    return answers, submission, float(direct)


def scored_mae(rng: np.random.Generator) -> tuple[pd.DataFrame, pd.DataFrame, float]:
    truth, u_out = rng.normal(11, 8, ROWS), (rng.random(ROWS) < 0.6).astype(int)
    guess = truth + rng.normal(0, 1, ROWS)
    answers = pd.DataFrame({"id": rng.permutation(ROWS) + 1, "u_out": u_out, "pressure": truth})
    direct = np.mean(np.abs(truth - guess)[u_out == 0])
    return answers, answers[["id"]].assign(pressure=guess), float(direct)


def log_mae_by_type(rng: np.random.Generator) -> tuple[pd.DataFrame, pd.DataFrame, float]:
    kinds = np.array(["1JHC", "1JHN", "2JHC", "2JHH", "2JHN", "3JHC", "3JHH", "3JHN"])
    kind = kinds[rng.integers(0, len(kinds), ROWS)]
    truth = rng.normal(15, 30, ROWS).round(5)
    guess = truth + rng.normal(0, 2, ROWS) * (1 + (kind == "1JHC"))
    errors = pd.Series(np.abs(truth - guess)).groupby(kind).mean()
    answers = pd.DataFrame(
        {"id": rng.permutation(ROWS) + 4_658_147, "type": kind, "scalar_coupling_constant": truth}
    )
    submission = answers[["id"]].assign(scalar_coupling_constant=guess)
    return answers, submission, float(np.mean(np.log(errors)))


def text(rng: np.random.Generator) -> tuple[pd.DataFrame, pd.DataFrame, float]:
    words = np.array(["the", "of", "twenty one", "sil", "a", "John", "b c", "dollars"])
    truth = words[rng.integers(0, len(words), ROWS)]
    guess = np.where(rng.random(ROWS) < 0.9, truth, "sil")
    ids = [f"{p // 12}_{p % 12}" for p in rng.permutation(ROWS)]
    answers = pd.DataFrame({"id": ids, "after": truth})
    return answers, answers.assign(after=guess), float(np.mean(truth == guess))


def angular(rng: np.random.Generator) -> tuple[pd.DataFrame, pd.DataFrame, float]:
    azimuth, zenith = rng.random(ROWS) * 2 * np.pi, rng.random(ROWS) * np.pi
    guess_az = (azimuth + rng.normal(0, 0.5, ROWS)) % (2 * np.pi)
    guess_zen = np.clip(zenith + rng.normal(0, 0.3, ROWS), 0, np.pi)

    def unit(az: np.ndarray, zen: np.ndarray) -> np.ndarray:
        return np.stack([np.sin(zen) * np.cos(az), np.sin(zen) * np.sin(az), np.cos(zen)])

    cosine = np.clip((unit(azimuth, zenith) * unit(guess_az, guess_zen)).sum(axis=0), -1, 1)
    ids = rng.choice(20 * ROWS, ROWS, replace=False)
    answers = pd.DataFrame({"event_id": ids, "azimuth": azimuth, "zenith": zenith})
    guess = answers.assign(azimuth=guess_az, zenith=guess_zen)
    return answers, guess, float(np.mean(np.arccos(cosine)))


def ranked_lists(rng: np.random.Generator) -> tuple[pd.DataFrame, pd.DataFrame, float]:
    """H&M: one customer in ten bought something; MAP@12 by the row-by-row definition."""
    articles = [f"0{a:09d}" for a in rng.integers(108775015, 959461001, 300)]
    customers = [f"{x:064x}" for x in rng.permutation(ROWS) * 7919 + 104729]
    buyers = np.flatnonzero(rng.random(ROWS) < 0.1)
    bought = {customers[b]: list(rng.choice(articles, rng.integers(1, 6))) for b in buyers}
    guesses = [list(rng.choice(articles, 14)) for _ in customers]
    precisions = []
    for customer, guess in zip(customers, guesses, strict=True):
        if customer not in bought:
            continue
        relevant, seen, hits, total = set(bought[customer]), set(), 0, 0.0
        for rank, item in enumerate(guess[:12], start=1):
            if item in relevant and item not in seen:
                hits += 1
                total += hits / rank
            seen.add(item)
        precisions.append(total / min(len(relevant), 12))
    answers = pd.DataFrame(
        {"customer_id": list(bought), "prediction": [" ".join(b) for b in bought.values()]}
    )
    submission = pd.DataFrame(
        {"customer_id": customers, "prediction": [" ".join(g) for g in guesses]}
    )
    return answers, submission, float(np.mean(precisions))


def _h_and_m_customers(private: Path, submission: pd.DataFrame) -> None:
    """H&M's answers reader also reads the list of every test customer."""
    submission[["customer_id"]].to_csv(private / "sample_customers.csv", index=False)


JIGSAW = "jigsaw-toxic-comment-classification-challenge"
H_AND_M = "h-and-m-personalized-fashion-recommendations"
#: Private files beyond the answers file, written from the submission's ids.
EXTRA_PRIVATE = {H_AND_M: _h_and_m_customers}
#: metric family -> (competition, answers file, case)
FAMILIES: dict[str, tuple[str, str, Case]] = {
    "accuracy of labels": ("tabular-playground-series-dec-2021", "test.csv", labels),
    "accuracy of booleans": ("spaceship-titanic", "test.csv", booleans),
    "rmse": ("new-york-city-taxi-fare-prediction", "test.csv", numbers),
    "column-mean auc, unscored rows": (JIGSAW, "test.csv", column_auc),
    "mae of scored rows": ("ventilator-pressure-prediction", "test.csv", scored_mae),
    "log mae by type": ("champs-scalar-coupling", "answers.csv", log_mae_by_type),
    "text accuracy": ("text-normalization-challenge-english-language", "answers.csv", text),
    "mean angular error": ("icecube-neutrinos-in-deep-ice", "test.csv", angular),
    "map@12 of ranked lists": (H_AND_M, "answers.csv", ranked_lists),
}


def _write(tmp_path: Path, family: str) -> tuple[str, Path, Path, pd.DataFrame, float]:
    competition, answers_file, case = FAMILIES[family]
    answers, submission, direct = case(np.random.default_rng(7))
    private = tmp_path / "private"
    private.mkdir()
    answers.to_csv(private / answers_file, index=False)
    if competition in EXTRA_PRIVATE:
        EXTRA_PRIVATE[competition](private, submission)
    shuffled = submission.sample(frac=1.0, random_state=3)
    path = tmp_path / "submission.csv"
    shuffled.to_csv(path, index=False)
    return competition, path, private, shuffled, direct


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_large_submission_scores_as_computed_directly(family, tmp_path):
    competition, path, private, _, direct = _write(tmp_path, family)
    comp = get_competition(competition)
    score, _ = score_submission(comp, path, private)
    assert score == pytest.approx(round(direct, 5), abs=1e-5)
    again, _ = score_submission(comp, path, private)  # from the answer key kept on disk
    assert again == score


@pytest.mark.parametrize("family", ["accuracy of labels", "rmse", "text accuracy"])
def test_one_odd_cell_takes_the_slow_reading_and_scores_the_same(family, tmp_path):
    """A cell the fast parsers refuse (a number written with spaces, an id written as a
    float) or an extra column sends the file through pandas; the score must not move."""
    competition, path, private, shuffled, direct = _write(tmp_path, family)
    id_column, target = shuffled.columns[0], shuffled.columns[-1]
    odd = shuffled.astype({id_column: str, target: str})
    if family == "accuracy of labels":
        odd.iloc[5, 0] = f"{odd.iloc[5, 0]}.0"  # read as the integer id, with a warning
        odd.iloc[6, 1] = f"{odd.iloc[6, 1]}.0"
    elif family == "rmse":
        odd.iloc[5, 1] = f" {odd.iloc[5, 1]} "
    else:
        odd["note"] = "ignored"  # text ids are compared as written: the odd part is a column
    odd.to_csv(path, index=False)
    score, warnings = score_submission(get_competition(competition), path, private)
    assert score == pytest.approx(round(direct, 5), abs=1e-5)
    assert bool(warnings) == (family != "rmse")
