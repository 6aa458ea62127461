"""The clean-submission path changes speed, never the outcome (issue 11).

For every registered competition's submission format, answers are made up with ids of one
of several shapes (dense and sparse integers, hex, text with inner spaces, ids too long or
not ASCII for the id index), and a set of submissions, clean and broken, is graded twice:
as grading runs, and with the clean path switched off, so the general path reads
everything. The two must give the same frames, the same warnings, or the same refusal.
"""

from __future__ import annotations

import zlib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from mle_gym.competitions import all_competitions
from mle_gym.competitions.spec import Column, SubmissionFormat
from mle_gym.grading import validation
from mle_gym.grading.errors import InvalidSubmission
from mle_gym.grading.id_index import IntegerIdIndex, TextIdIndex
from mle_gym.grading.validation import answer_key, validate_against

ROWS = 300


def _ids(style: str, rng: np.random.Generator) -> list[str]:
    picks = rng.permutation(ROWS)
    if style == "dense integers":
        return [str(p + 1_000) for p in picks]
    if style == "sparse integers":
        return [str(x) for x in rng.choice(10**9, ROWS, replace=False)]
    if style == "hex":
        return [f"{p * 7919 + 104729:016x}" for p in picks]
    if style == "inner spaces":
        return [f"2013-01-{p % 28 + 1:02d} 10:{p % 60:02d}:00.{p:07d}" for p in picks]
    if style == "long":
        return [f"study_{p:070d}_image" for p in picks]
    return [f"éclair_{p}" for p in picks]  # not ASCII


#: Id shapes the id index holds (each competition takes one), and shapes it cannot hold.
INDEXED = ["dense integers", "sparse integers", "hex", "inner spaces"]
UNINDEXED = ["long", "not ascii"]


def _values(column: Column, rng: np.random.Generator) -> list[str]:
    if column.kind in ("probability", "score"):
        return [repr(round(float(x), 6)) for x in rng.random(ROWS)]
    if column.kind == "number":
        return [repr(float(x)) for x in rng.normal(5, 3, ROWS).round(4)]
    if column.kind == "bool":
        return ["True" if x else "False" for x in rng.random(ROWS) < 0.5]
    if column.kind == "label" and column.labels:
        return list(rng.choice(list(column.labels), ROWS))
    if column.kind == "label":
        return [f"class_{x}" for x in rng.integers(0, 9, ROWS)]
    return [f"word {x} and more" for x in rng.integers(0, 50, ROWS)]


def _answers(fmt: SubmissionFormat, style: str, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    cells = {fmt.id_column: _ids(style, rng)}
    cells.update({c.name: _values(c, rng) for c in fmt.columns})
    return pd.DataFrame(cells, dtype=str)


def _variants(answers: pd.DataFrame, fmt: SubmissionFormat) -> dict[str, pd.DataFrame]:
    """Clean submissions, and ones each needing the general path for one reason."""
    shuffled = answers.sample(frac=1.0, random_state=5).reset_index(drop=True)
    first, target = fmt.columns[0], fmt.columns[0].name
    ids = fmt.id_column

    def edited(row: int, column: str, value: str) -> pd.DataFrame:
        frame = shuffled.copy()
        frame.loc[row, column] = value
        return frame

    out = {
        "the answers, shuffled": shuffled,
        "columns reordered": shuffled[list(reversed(shuffled.columns))],
        "an extra column": shuffled.assign(comment="x"),
        "a row missing": shuffled.iloc[1:],
        "a row twice": pd.concat([shuffled, shuffled.iloc[:1]]),
        "an id twice": edited(0, ids, shuffled.loc[1, ids]),
        "an unknown id": edited(0, ids, "no-such-id"),
        "an id with spaces": edited(0, ids, f" {shuffled.loc[0, ids]} "),
        "an id as a float": edited(0, ids, f"{shuffled.loc[0, ids]}.0"),
        "an id with a leading zero": edited(0, ids, f"0{shuffled.loc[0, ids]}"),
        "an empty target": edited(2, target, ""),
        "a target with spaces": edited(2, target, f" {shuffled.loc[2, target]} "),
        "a target as nan": edited(2, target, "nan"),
        "a target of another class": edited(2, target, "7"),
        "a target as a float": edited(2, target, "2.0"),
        "a target of 1.5": edited(2, target, "1.5"),
        "a target with a tab": edited(2, target, f"\t{shuffled.loc[2, target]}"),
        "a target as +.5e0": edited(2, target, "+.5e0"),
        "a target of inf": edited(2, target, "inf"),
        "a target of -1": edited(2, target, "-1"),
    }
    if first.kind == "bool":
        binary = shuffled[target].map({"True": "1", "False": "0"})
        out["booleans as 1/0"] = shuffled.assign(**{target: binary})
        out["booleans in lower case"] = shuffled.assign(**{target: shuffled[target].str.lower()})
        out["booleans in upper case"] = shuffled.assign(**{target: shuffled[target].str.upper()})
    return out


def _outcome(path: Path, key, fmt: SubmissionFormat, rows: np.ndarray | None = None):
    try:
        truth, predictions, warnings = validate_against(path, key, fmt, rows)
    except InvalidSubmission as exc:
        return ("invalid", str(exc))
    return ("valid", truth, predictions, warnings)


def _only(outcome, rows: np.ndarray):
    """A whole outcome cut to the key rows `rows`, as a metric reading only them sees it."""
    if outcome[0] == "invalid":
        return outcome
    truth, predictions, warnings = outcome[1:]
    cut = [frame[rows].reset_index(drop=True) for frame in (truth, predictions)]
    return ("valid", *cut, warnings)


def _same(clean, general) -> None:
    assert clean[0] == general[0], (clean[1], general[1])
    if clean[0] == "invalid":
        assert clean[1] == general[1]
        return
    pd.testing.assert_frame_equal(clean[1], general[1], check_exact=True)
    pd.testing.assert_frame_equal(clean[2], general[2], check_exact=True)
    assert clean[3] == general[3]


COMPETITIONS = sorted(all_competitions(), key=lambda c: c.id)


@pytest.mark.parametrize("comp", COMPETITIONS, ids=[c.id for c in COMPETITIONS])
def test_the_clean_path_gives_the_general_paths_outcome(comp, tmp_path, monkeypatch):
    fmt = comp.submission
    style = INDEXED[zlib.crc32(comp.id.encode()) % len(INDEXED)]
    answers = _answers(fmt, style, zlib.crc32(comp.id.encode()))
    key = answer_key(answers, fmt)
    assert type(key.ids) is (IntegerIdIndex if style == "dense integers" else TextIdIndex)

    taken = []
    real = validation.clean_predictions
    monkeypatch.setattr(
        validation, "clean_predictions", lambda *a: taken.append(r := real(*a)) or r
    )
    for name, submission in _variants(answers, fmt).items():
        path = tmp_path / "submission.csv"
        submission.to_csv(path, index=False)
        taken.clear()
        clean = _outcome(path, key, fmt)
        with monkeypatch.context() as off:
            off.setattr(validation, "clean_predictions", lambda *a: None)
            general = _outcome(path, key, fmt)
        _same(clean, general)
        # a metric that reads some rows (MAP@k's answered ones) is given only those, every
        # row still checked: the same refusal, or the whole outcome's rows
        rows = np.random.default_rng(len(name)).random(ROWS) < 0.3
        _same(_outcome(path, key, fmt, rows), _only(general, rows))
        if name == "the answers, shuffled":
            assert taken and taken[0] is not None, "a clean submission took the general path"


@pytest.mark.parametrize("style", UNINDEXED)
def test_ids_the_index_cannot_hold_are_matched_by_sorting(style, tmp_path):
    comp = next(c for c in COMPETITIONS if c.id == "spaceship-titanic")
    answers = _answers(comp.submission, style, 1)
    key = answer_key(answers, comp.submission)
    assert key.ids is None
    path = tmp_path / "submission.csv"
    answers.sample(frac=1.0, random_state=2).to_csv(path, index=False)
    truth, predictions, warnings = validate_against(path, key, comp.submission)
    assert (truth["Transported"] == predictions["Transported"]).all() and not warnings


def test_a_hash_that_finds_the_wrong_row_is_caught_by_comparing_the_ids(monkeypatch):
    """The words of each found row are compared with the submitted id's: a hash pointing
    at another id (as a collision would) cannot line rows up wrongly."""
    import pyarrow as pa

    from mle_gym.grading import id_index

    ids = pa.array(sorted(_ids("hex", np.random.default_rng(3))))
    index = id_index.build_index(ids, integers=False)
    shuffled = ids.take(pa.array(np.random.default_rng(4).permutation(ROWS)))
    order = index.match(shuffled)
    assert order is not None and shuffled.take(pa.array(order)).equals(ids)
    real = id_index._hash
    monkeypatch.setattr(id_index, "_hash", lambda packed: np.roll(real(packed), 1))
    assert index.match(shuffled) is None


@pytest.mark.parametrize("wanted", [0.1, 0.9])
def test_cells_of_many_chunks_are_taken_in_order(wanted):
    """A few rows of a many-chunk column are taken chunk by chunk, most rows after joining
    the chunks: either way the cells in the order asked, as one take of the whole."""
    import pyarrow as pa

    from mle_gym.grading.clean_submission import _taken

    rng = np.random.default_rng(7)
    cells = [f"cell {x} " * (x % 5) for x in range(5_000)]
    sizes = rng.integers(0, 400, 40)  # empty chunks too
    ends = np.cumsum(sizes)
    ends = np.append(ends[ends < len(cells)], len(cells))
    starts = np.concatenate(([0], ends[:-1]))
    chunks = [pa.array(cells[a:b], pa.large_string()) for a, b in zip(starts, ends, strict=True)]
    column = pa.chunked_array(chunks)
    order = rng.permutation(len(cells))[: int(wanted * len(cells))]
    assert _taken(column, order).equals(column.combine_chunks().take(order))
