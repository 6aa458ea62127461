"""Checks a submission file against the competition's format and the test ids.

Every rule failure raises `InvalidSubmission` with a message precise enough for an agent
to fix its file: which column, how many rows, and a few example ids.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from mle_gym.competitions.spec import Column, SubmissionFormat
from mle_gym.grading import normalise
from mle_gym.grading.clean_submission import clean_predictions, in_order
from mle_gym.grading.csv_text import read_as_text
from mle_gym.grading.errors import InvalidSubmission, examples
from mle_gym.grading.id_index import IdIndex, build_index
from mle_gym.grading.shape import check_shape

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd


def _empty_cells(raw: pd.Series, ids: pd.Series, column: Column) -> None:
    empty = raw == ""
    if empty.any():
        raise InvalidSubmission(
            f"column {column.name!r} has {int(empty.sum())} empty or missing value(s), "
            f"e.g. for id(s) {examples(ids[empty])}"
        )


def _numbers(raw: pd.Series, column: Column, warnings: list[str]) -> pd.Series:
    import numpy as np

    values = normalise.parse_floats(raw)
    bad = values.isna()
    if not column.infinite:
        bad |= ~np.isfinite(values.to_numpy(float))
    if bad.any():
        kind = "numbers" if column.infinite else "finite numbers"
        raise InvalidSubmission(
            f"column {column.name!r} must hold {kind}; found {examples(raw[bad])}"
        )
    outside = (values < 0) | (values > 1)
    if column.kind == "probability" and outside.any():
        raise InvalidSubmission(
            f"column {column.name!r} must hold probabilities in [0, 1]; "
            f"found {examples(raw[outside])}"
        )
    if column.kind == "score" and outside.any():
        warnings.append(
            f"column {column.name!r}: {int(outside.sum())} value(s) outside [0, 1] (e.g. "
            f"{examples(raw[outside])}) were scored as they are (the metric only ranks "
            "them, as MLE-bench scores them)"
        )
    return values.astype(float)


def _labels(raw: pd.Series, column: Column, warnings: list[str]) -> pd.Series:
    labels = column.labels
    if labels is None:
        return raw
    integers = normalise.all_canonical_integers(labels)
    if integers:
        raw = normalise.integer_text(raw, f"value(s) of column {column.name!r}", warnings)
    outside = ~raw.isin(labels)
    if not outside.any():
        return raw
    well_formed = raw[outside].str.fullmatch(r"-?(0|[1-9][0-9]*)") if integers else None
    if column.open_labels and (well_formed is None or well_formed.all()):
        warnings.append(
            f"column {column.name!r}: {int(outside.sum())} value(s) outside the classes "
            f"{', '.join(labels)} (e.g. {examples(raw[outside])}) were scored as they are, "
            "as MLE-bench scores them"
        )
        return raw
    # With open labels only the malformed values are the problem; otherwise any outsider is.
    found = (
        raw[outside]
        if well_formed is None or not column.open_labels
        else raw[outside][~well_formed]
    )
    kind = "integer " if integers and column.open_labels else ""
    raise InvalidSubmission(
        f"column {column.name!r} must hold one of {examples(list(labels))}"
        + (f" (or another {kind}class)" if column.open_labels else "")
        + f"; found {examples(found)}"
    )


def _convert(frame: pd.DataFrame, ids: pd.Series, column: Column, warnings: list[str]) -> pd.Series:
    """One column typed by its kind; readings MLE-bench also accepts add to `warnings`."""
    # Text is compared exactly as written (MLE-bench does not strip it). Numbers and
    # integer labels are parsed, and pandas' parser ignores spaces around them too.
    # Booleans are read from the cells as written: pandas reads ` False` as text.
    if column.kind == "text":
        return frame[column.name]
    raw = frame[column.name].str.strip()
    _empty_cells(raw, ids, column)
    if column.kind == "bool":
        values = normalise.booleans(frame[column.name], column.name, warnings)
        if values is None:
            bad = ~raw.str.lower().isin(["true", "false"])
            raise InvalidSubmission(
                f"column {column.name!r} must hold True or False; found {examples(raw[bad])}"
            )
        return values
    if column.kind in ("probability", "score", "number"):
        return _numbers(raw, column, warnings)
    if column.kind == "label":
        return _labels(raw, column, warnings)
    return raw


def _check_columns(frame: pd.DataFrame, fmt: SubmissionFormat) -> None:
    expected = [fmt.id_column, *fmt.target_names]
    missing = [c for c in expected if c not in frame.columns]
    if missing:
        found = ",".join(frame.columns[:12]) + ("..." if len(frame.columns) > 12 else "")
        padded = [c for c in frame.columns if c != c.strip() and c.strip() in missing]
        hint = (
            f"; {examples(padded)} has spaces around the name, and MLE-bench reads names as written"
            if padded
            else ""
        )
        raise InvalidSubmission(
            f"missing column(s) {examples(missing)}; the header must start with "
            f"{','.join(expected[:12])}{'...' if len(expected) > 12 else ''} "
            f"(found {found or 'no columns'}){hint}"
        )


def _check_ids(submitted: pd.Series, expected: pd.Series) -> None:
    """Each test id exactly as many times as the answers hold it (once, almost always;
    a few competitions key rows by text that repeats, e.g. identical comments)."""
    allowed = expected.value_counts()
    counts = submitted.value_counts()
    extra = counts - allowed.reindex(counts.index, fill_value=1)
    duplicated = extra[extra > 0]
    if len(duplicated):
        raise InvalidSubmission(
            f"{int(duplicated.sum())} duplicate row(s): id(s) {examples(duplicated.index)} "
            "appear more than once; write exactly one row per test id"
        )
    unknown = submitted[~submitted.isin(set(allowed.index))]
    if len(unknown):
        padded = unknown.str.strip().isin(set(allowed.index)).any()
        raise InvalidSubmission(
            f"{len(unknown)} row(s) have ids that are not in the test set: {examples(unknown)}"
            + ("; ids are compared as written, so remove the spaces around them" if padded else "")
        )
    missing = allowed - counts.reindex(allowed.index, fill_value=0)
    absent = missing[missing > 0]
    if len(absent):
        raise InvalidSubmission(
            f"{int(absent.sum())} test id(s) have no row, e.g. {examples(absent.index)}; "
            f"expected {len(expected)} rows, found {len(submitted)}"
        )


@dataclass(frozen=True)
class AnswerKey:
    """The answers as grading compares them: columns typed, rows sorted by id.

    It depends only on the answers, so a grader may build it once and reuse it for every
    submission (see `mle_gym.grading.answer_keys`).
    """

    #: The id column and the target columns, sorted by id (stably).
    frame: pd.DataFrame
    #: Whether every id is an integer written canonically (then other spellings are read).
    integer_ids: bool
    #: Finds the key row of each submitted id in linear time; None when the ids do not
    #: suit one (see `id_index.build_index`), and then ids are matched by sorting.
    ids: IdIndex | None = None


def answer_key(answers: pd.DataFrame, fmt: SubmissionFormat) -> AnswerKey:
    import pandas as pd

    ids = answers[fmt.id_column]
    # The answers are written canonically: whatever they would warn about is not news.
    typed = {c.name: _convert(answers, ids, c, []) for c in fmt.columns}
    order = _sort_order(ids)
    frame = pd.DataFrame(
        {fmt.id_column: in_order(ids, order), **{k: in_order(v, order) for k, v in typed.items()}}
    )
    integers = normalise.all_canonical_integers(frame[fmt.id_column])
    return AnswerKey(frame, integers, build_index(_as_arrow(frame[fmt.id_column]), integers))


def _as_arrow(ids: pd.Series):
    import pyarrow as pa

    column = pa.array(ids, type=pa.string(), from_pandas=True)
    return column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column


def _sort_order(ids: pd.Series) -> np.ndarray:
    """The stable order that sorts `ids`, from pyarrow: pandas' own sort of text is several
    times slower on millions of rows."""
    import pyarrow.compute as pc

    return pc.sort_indices(_as_arrow(ids)).to_numpy()


def _matching_order(submitted: pd.Series, sorted_expected: pd.Series) -> np.ndarray | None:
    """The order that sorts the submitted ids, when they then equal the expected (sorted)
    ids, i.e. both hold the same ids the same number of times, as MLE-bench checks it;
    None otherwise, and `_check_ids` says what differs. The answer key's index matches
    the common ids in linear time (see `id_index`); only ids it cannot hold, and ids it
    found wrong, come here, so a plain sort is enough."""
    import pyarrow.compute as pc

    if len(submitted) != len(sorted_expected):
        return None
    column = _as_arrow(submitted)
    order = pc.sort_indices(column).to_numpy()
    same = pc.all(pc.equal(column.take(order), _as_arrow(sorted_expected))).as_py()
    return order if same is not False else None


def _ids(
    frame: pd.DataFrame, key: AnswerKey, fmt: SubmissionFormat, warnings: list[str]
) -> pd.Series:
    """The submitted ids as they are matched. Integer ids are read as numbers, as pandas
    reads them, so spaces around them and float spellings name the same id; text ids are
    compared as written, as MLE-bench compares them (` abc` is not the id `abc`)."""
    ids = frame[fmt.id_column]
    if key.integer_ids:
        what = f"id(s) in column {fmt.id_column!r}"
        ids = ids.str.strip()
        normalise.refuse_inexact_integers(ids, what)
        ids = normalise.integer_text(ids, what, warnings)
    return ids


def validate(
    submission_path: Path, answers: pd.DataFrame, fmt: SubmissionFormat
) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    """Return (answers, predictions) aligned by id and typed, plus warnings; or raise."""
    return validate_against(submission_path, answer_key(answers, fmt), fmt)


def validate_against(
    submission_path: Path, key: AnswerKey, fmt: SubmissionFormat, rows: np.ndarray | None = None
) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    """`validate` with the answers' key already built. `rows` (a boolean mask over the key's
    rows): the only rows the metric reads. Every row is still checked, but only these are
    lined up and returned, in both frames (H&M scores a tenth of its customers: lining up
    the other nine tenths of their predictions was a sixth of a grade)."""
    import numpy as np
    import pandas as pd

    expected_ids = key.frame[fmt.id_column]
    check_shape(submission_path, 1 + len(fmt.columns), len(expected_ids))
    truth = key.frame
    if rows is not None:
        truth = key.frame[rows].reset_index(drop=True)
        rows = np.flatnonzero(rows)
    if key.ids is not None:
        clean = clean_predictions(submission_path, fmt, key.ids, truth[fmt.id_column], rows)
        if clean is not None:
            return truth, clean, []
    frame = read_as_text(submission_path)
    _check_columns(frame, fmt)
    warnings: list[str] = []
    extra = [c for c in frame.columns if c not in (fmt.id_column, *fmt.target_names)]
    if extra and not fmt.allow_extra_columns:
        raise InvalidSubmission(
            f"unexpected column(s) {examples(extra)}; the header must be exactly the id "
            "column and the target columns"
        )
    if extra:
        warnings.append(f"ignored extra column(s): {', '.join(extra)}")

    ids = _ids(frame, key, fmt, warnings)
    order = key.ids.match(_as_arrow(ids)) if key.ids is not None else None
    if order is None:
        order = _matching_order(ids, expected_ids)
    if order is None:
        _check_ids(ids, expected_ids)  # raises, naming what differs
        raise AssertionError("the ids differ, but no difference was found")
    typed = {c.name: _convert(frame, ids, c, warnings) for c in fmt.columns}
    if rows is not None:
        order = order[rows]
    predictions = pd.DataFrame(
        {fmt.id_column: truth[fmt.id_column], **{k: in_order(v, order) for k, v in typed.items()}}
    )
    return truth, predictions, warnings
