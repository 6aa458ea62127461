"""stanford-covid-vaccine: held-out sequences from the filtered ones, answers per position,
rejected submissions, MCRMSE on scored targets and positions by id."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from mle_gym.competitions import get_competition
from mle_gym.competitions.catalog import stanford_covid_vaccine as covid
from tests.competitions.support import assert_invalid, grade_frame
from tests.fixtures.raw.stanford_covid_vaccine import make_raw

COMP = get_competition("stanford-covid-vaccine")
TARGETS = list(covid.TARGETS)
SCORED = ["reactivity", "deg_Mg_pH10", "deg_Mg_50C"]


@pytest.fixture
def answers(dirs) -> pd.DataFrame:
    return pd.read_csv(dirs.private / "test.csv")


def _json_lines(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_test_sequences_pass_the_filter_and_lose_their_labels(answers, dirs) -> None:
    raw = {row["id"]: row for row in _json_lines(dirs.raw / "train.json")}
    test = _json_lines(dirs.public / "test.json")
    train = _json_lines(dirs.public / "train.json")
    assert len(test) == 3 and len(train) == 27
    assert [row["index"] for row in test] == [0, 1, 2]
    assert not {r["id"] for r in test} & {r["id"] for r in train}
    assert all(raw[row["id"]]["SN_filter"] == 1 for row in test)
    assert set(test[0]) == {
        "index",
        "id",
        "sequence",
        "structure",
        "predicted_loop_type",
        "seq_length",
        "seq_scored",
    }
    first = raw[test[0]["id"]]
    rows = answers[answers["id_seqpos"].str.startswith(test[0]["id"] + "_")]
    assert rows["keep"].tolist() == [True] * 68 + [False] * 39
    assert np.allclose(rows["reactivity"][:68], first["reactivity"])
    assert (rows[TARGETS][68:] == 0).all().all()


def test_prepare_refuses_sequences_with_another_scored_length(tmp_path) -> None:
    raw, public, private = (tmp_path / n for n in ("raw", "public", "private"))
    for folder in (raw, public, private):
        folder.mkdir()
    make_raw(raw)
    train = pd.read_json(raw / "train.json", lines=True)
    train["seq_scored"] = 67
    train.to_json(raw / "train.json", orient="records", lines=True)
    with pytest.raises(ValueError, match="67 scored of 107 positions"):
        covid.prepare(raw, public, private)


CASES = {
    "missing position": (lambda f: f.iloc[1:], r"1 test id\(s\) have no row"),
    "duplicate position": (lambda f: pd.concat([f, f.iloc[:2]]), r"2 duplicate row\(s\)"),
    "position past the end": (
        lambda f: pd.concat([f, f.iloc[:1].assign(id_seqpos="id_x_107")]),
        r"not in the test set: 'id_x_107'",
    ),
    "unscored column missing": (
        lambda f: f.drop(columns="deg_50C"),
        r"missing column\(s\) 'deg_50C'",
    ),
    "scored value empty": (
        lambda f: f.assign(reactivity=[None] + [0.0] * (len(f) - 1)),
        r"'reactivity' has 1 empty or missing value\(s\)",
    ),
    "scored value not a number": (
        lambda f: f.astype({"deg_Mg_50C": object}).assign(deg_Mg_50C="high"),
        r"'deg_Mg_50C' must hold finite numbers; found 'high'",
    ),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_broken_submission_is_invalid_with_reason(case, answers, dirs, tmp_path) -> None:
    mutate, reason = CASES[case]
    submission = answers[["id_seqpos", *TARGETS]]
    assert_invalid(grade_frame(COMP, dirs.private, mutate(submission), tmp_path), reason)


def _mcrmse(answers: pd.DataFrame, predicted: pd.DataFrame) -> float:
    kept = answers["keep"].to_numpy()
    errors = [
        np.sqrt(np.mean((answers[c].to_numpy()[kept] - predicted[c].to_numpy()[kept]) ** 2))
        for c in SCORED
    ]
    return float(np.mean(errors))


def test_scored_targets_on_scored_positions_matched_by_id(answers, dirs, tmp_path) -> None:
    rng = np.random.default_rng(0)
    predicted = answers[["id_seqpos", *TARGETS]].copy()
    predicted[TARGETS] = rng.normal(0.5, 0.5, (len(predicted), len(TARGETS)))
    expected = round(_mcrmse(answers, predicted), 5)
    shuffled = predicted.sample(frac=1, random_state=1)
    assert grade_frame(COMP, dirs.private, shuffled, tmp_path).score == expected
    # unscored columns and positions may hold anything
    ignored = shuffled.astype({"deg_pH10": object}).assign(deg_pH10="", deg_50C="n/a")
    unscored = ~ignored["id_seqpos"].isin(answers.loc[answers["keep"], "id_seqpos"])
    ignored.loc[unscored, SCORED] = 1e6
    assert grade_frame(COMP, dirs.private, ignored, tmp_path).score == expected


def test_zero_sample_scores_the_mean_root_mean_square(answers, dirs, tmp_path) -> None:
    kept = answers[answers["keep"]]
    expected = np.mean([np.sqrt(np.mean(kept[c] ** 2)) for c in SCORED])
    sample = pd.read_csv(dirs.public / "sample_submission.csv")
    assert sample["id_seqpos"].tolist() == answers["id_seqpos"].tolist()
    assert grade_frame(COMP, dirs.private, sample, tmp_path).score == round(expected, 5)
    assert COMP.sample_score == 0.63824
