"""Checks a submission file against the competition's format and the test ids.

Every rule failure raises `InvalidSubmission` with a message precise enough for an agent
to fix its file: which column, how many rows, and a few example ids.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from mle_gym.competitions.spec import Column, SubmissionFormat
from mle_gym.grading import normalise
from mle_gym.grading.errors import InvalidSubmission
from mle_gym.grading.shape import check_shape

if TYPE_CHECKING:
    import pandas as pd

_EXAMPLES = 3


def _examples(values: pd.Series | list) -> str:
    shown = [str(v) for v in list(values)[:_EXAMPLES]]
    more = len(values) - len(shown)
    return ", ".join(repr(v) for v in shown) + (f" and {more} more" if more > 0 else "")


def read_as_text(path: Path) -> pd.DataFrame:
    """Read a CSV keeping every cell as the exact text written, so no value is reinterpreted."""
    import pandas as pd

    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False, na_filter=False)
    except pd.errors.EmptyDataError:
        raise InvalidSubmission("the submission file is empty") from None
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError) as exc:
        raise InvalidSubmission(f"the submission is not a readable CSV file: {exc}") from None
    frame.columns = [str(c).strip() for c in frame.columns]
    repeated = frame.columns[frame.columns.duplicated()]
    if len(repeated):
        raise InvalidSubmission(
            f"column(s) {_examples(list(dict.fromkeys(repeated)))} appear more than once in "
            "the header; write each column once"
        )
    return frame


def _empty_cells(raw: pd.Series, ids: pd.Series, column: Column) -> None:
    empty = raw == ""
    if empty.any():
        raise InvalidSubmission(
            f"column {column.name!r} has {int(empty.sum())} empty or missing value(s), "
            f"e.g. for id(s) {_examples(ids[empty])}"
        )


def _numbers(raw: pd.Series, column: Column, warnings: list[str]) -> pd.Series:
    import numpy as np
    import pandas as pd

    values = pd.to_numeric(raw, errors="coerce")
    bad = values.isna() | ~np.isfinite(values.to_numpy(float))
    if bad.any():
        raise InvalidSubmission(
            f"column {column.name!r} must hold finite numbers; found {_examples(raw[bad])}"
        )
    outside = (values < 0) | (values > 1)
    if column.kind == "probability" and outside.any():
        raise InvalidSubmission(
            f"column {column.name!r} must hold probabilities in [0, 1]; "
            f"found {_examples(raw[outside])}"
        )
    if column.kind == "score" and outside.any():
        warnings.append(
            f"column {column.name!r}: {int(outside.sum())} value(s) outside [0, 1] (e.g. "
            f"{_examples(raw[outside])}) were scored as they are (the metric only ranks "
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
            f"{', '.join(labels)} (e.g. {_examples(raw[outside])}) were scored as they are, "
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
        f"column {column.name!r} must hold one of {_examples(list(labels))}"
        + (f" (or another {kind}class)" if column.open_labels else "")
        + f"; found {_examples(found)}"
    )


def _convert(frame: pd.DataFrame, ids: pd.Series, column: Column, warnings: list[str]) -> pd.Series:
    """One column typed by its kind; readings MLE-bench also accepts add to `warnings`."""
    # Text is compared exactly as written (MLE-bench does not strip it); other kinds are
    # parsed, so surrounding spaces carry no meaning there.
    if column.kind == "text":
        return frame[column.name]
    raw = frame[column.name].str.strip()
    _empty_cells(raw, ids, column)
    if column.kind == "bool":
        values = normalise.booleans(raw, column.name, warnings)
        if values is None:
            bad = ~raw.str.lower().isin(["true", "false"])
            raise InvalidSubmission(
                f"column {column.name!r} must hold True or False; found {_examples(raw[bad])}"
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
        raise InvalidSubmission(
            f"missing column(s) {_examples(missing)}; the header must start with "
            f"{','.join(expected[:12])}{'...' if len(expected) > 12 else ''} "
            f"(found {found or 'no columns'})"
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
            f"{int(duplicated.sum())} duplicate row(s): id(s) {_examples(duplicated.index)} "
            "appear more than once; write exactly one row per test id"
        )
    unknown = submitted[~submitted.isin(set(allowed.index))]
    if len(unknown):
        raise InvalidSubmission(
            f"{len(unknown)} row(s) have ids that are not in the test set: {_examples(unknown)}"
        )
    missing = allowed - counts.reindex(allowed.index, fill_value=0)
    absent = missing[missing > 0]
    if len(absent):
        raise InvalidSubmission(
            f"{int(absent.sum())} test id(s) have no row, e.g. {_examples(absent.index)}; "
            f"expected {len(expected)} rows, found {len(submitted)}"
        )


def _ids(
    frame: pd.DataFrame, expected: pd.Series, fmt: SubmissionFormat, warnings: list[str]
) -> pd.Series:
    ids = frame[fmt.id_column].str.strip()
    if normalise.all_canonical_integers(expected):
        ids = normalise.integer_text(ids, f"id(s) in column {fmt.id_column!r}", warnings)
    return ids


def validate(
    submission_path: Path, answers: pd.DataFrame, fmt: SubmissionFormat
) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    """Return (answers, predictions) aligned by id and typed, plus warnings; or raise."""
    import pandas as pd

    check_shape(submission_path, 1 + len(fmt.columns), len(answers))
    frame = read_as_text(submission_path)
    _check_columns(frame, fmt)
    warnings: list[str] = []
    extra = [c for c in frame.columns if c not in (fmt.id_column, *fmt.target_names)]
    if extra and not fmt.allow_extra_columns:
        raise InvalidSubmission(
            f"unexpected column(s) {_examples(extra)}; the header must be exactly the id "
            "column and the target columns"
        )
    if extra:
        warnings.append(f"ignored extra column(s): {', '.join(extra)}")

    expected_ids = answers[fmt.id_column].str.strip()
    ids = _ids(frame, expected_ids, fmt, warnings)
    _check_ids(ids, expected_ids)

    # Built in one go: inserting 100+ columns one by one fragments the frame.
    predictions = pd.DataFrame(
        {fmt.id_column: ids, **{c.name: _convert(frame, ids, c, warnings) for c in fmt.columns}}
    )
    # The answers are written canonically: whatever they would warn about is not news.
    truth = pd.DataFrame(
        {
            fmt.id_column: expected_ids,
            **{c.name: _convert(answers, expected_ids, c, []) for c in fmt.columns},
        }
    )
    predictions = predictions.sort_values(fmt.id_column, kind="stable").reset_index(drop=True)
    truth = truth.sort_values(fmt.id_column, kind="stable").reset_index(drop=True)
    return truth, predictions, warnings
