"""Hostile submission shapes are invalid with a reason, never an exception, and files far
beyond the competition's shape are refused before pandas reads them (issue 9, items 5, 8)."""

from __future__ import annotations

import time
from pathlib import Path

import pandas as pd
import pytest

from mle_gym.competitions import get_competition
from mle_gym.grading import InvalidSubmission, check_submission, grade
from mle_gym.grading.validation import validate

COMP = get_competition("spaceship-titanic")
ROWS = 50


@pytest.fixture
def private(tmp_path: Path) -> Path:
    folder = tmp_path / "private"
    folder.mkdir()
    _answers().to_csv(folder / "test.csv", index=False)
    return folder


def _answers() -> pd.DataFrame:
    ids = [f"{i:04d}_01" for i in range(ROWS)]
    return pd.DataFrame({"PassengerId": ids, "Transported": ["True", "False"] * (ROWS // 2)})


def _file(tmp_path: Path, text: str | bytes) -> Path:
    path = tmp_path / "submission.csv"
    if isinstance(text, str):
        path.write_text(text)
    else:
        path.write_bytes(text)
    return path


def _rows() -> str:
    return "".join(f"{i:04d}_01,True,True\n" for i in range(ROWS))


def test_a_name_written_twice_is_invalid_not_an_exception(private, tmp_path):
    path = _file(tmp_path, "PassengerId,Transported,Transported\n" + _rows())
    report = grade(COMP, path, private)
    assert not report.valid_submission and report.score is None
    assert "'Transported' appears more than once" in report.error
    assert "appears more than once" in check_submission(COMP, path, private)


@pytest.mark.parametrize(
    "header, extra",
    [("PassengerId,Transported,Transported ", "Transported "),
     ("PassengerId, Transported,Transported", " Transported")],
)  # fmt: skip
def test_names_differing_by_spaces_are_two_columns_as_in_pandas(header, extra, private, tmp_path):
    """MLE-bench's read_csv keeps the spaces: the plain name is the target (every row says
    True, the answers alternate: 0.5), the padded one an extra column."""
    report = grade(COMP, _file(tmp_path, header + "\n" + _rows()), private)
    assert report.valid_submission and report.score == 0.5, report.error
    assert report.warnings == [f"ignored extra column(s): {extra}"]


@pytest.fixture
def no_pandas_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test if pandas is asked to parse the submission."""

    def refuse(*_args, **_kwargs):
        raise AssertionError("pandas.read_csv was called on a file the shape check refuses")

    monkeypatch.setattr(pd, "read_csv", refuse)


def _refused(path: Path) -> str:
    answers = _answers()
    started = time.monotonic()
    with pytest.raises(InvalidSubmission) as caught:
        validate(path, answers, COMP.submission)
    assert time.monotonic() - started < 2.0
    return str(caught.value)


def test_thirty_thousand_repeated_columns_are_refused_cheaply(tmp_path, no_pandas_parsing):
    header = "PassengerId," + ",".join(["Transported"] * 30_000)
    reason = _refused(_file(tmp_path, header + "\n"))
    assert "header line is longer than" in reason and "expected 2 column(s)" in reason


def test_too_many_columns_are_counted_before_parsing(tmp_path, no_pandas_parsing):
    header = "PassengerId," + ",".join(f"c{i}" for i in range(3000))
    reason = _refused(_file(tmp_path, header + "\n"))
    assert "the header has 3001 columns; expected 2" in reason


def test_a_hundred_thousand_empty_column_names_are_refused(tmp_path, no_pandas_parsing):
    reason = _refused(_file(tmp_path, "PassengerId,Transported" + "," * 100_000 + "\n"))
    assert "header" in reason and "expected 2" in reason


def test_a_header_without_end_is_refused_after_a_bounded_read(tmp_path, no_pandas_parsing):
    reason = _refused(_file(tmp_path, b"x" * 5_000_000))
    assert "the header line is longer than" in reason


def test_many_short_rows_are_refused_before_parsing(tmp_path, no_pandas_parsing):
    body = "0000_01,True\n" * (3 * ROWS + 2000)
    reason = _refused(_file(tmp_path, "PassengerId,Transported\n" + body))
    assert f"expected {ROWS} rows" in reason and "more than" in reason


def test_a_file_of_the_right_shape_still_parses(tmp_path, private):
    body = "".join(f"{i:04d}_01,True\n" for i in range(ROWS))
    report = grade(COMP, _file(tmp_path, "PassengerId,Transported\n" + body), private)
    assert report.valid_submission and report.score == 0.5


def test_a_few_extra_columns_are_not_refused_by_the_shape_check(tmp_path, private):
    header = "PassengerId,Transported," + ",".join(f"note{i}" for i in range(10))
    body = "".join(f"{i:04d}_01,True" + ",x" * 10 + "\n" for i in range(ROWS))
    report = grade(COMP, _file(tmp_path, header + "\n" + body), private)
    assert report.valid_submission, report.error


def test_rows_with_long_multi_line_cells_are_counted_as_records(tmp_path):
    """A sample that keeps each question's body (many lines in one quoted cell) has far
    more lines than rows: it is still the right shape."""
    from mle_gym.grading.shape import check_line_count

    path = tmp_path / "submission.csv"
    body = "\n".join(f"line {i}" for i in range(20))
    path.write_text("Id,Tags,Body\n" + "".join(f'{i},python,"{body}"\n' for i in range(100)))
    check_line_count(path, expected_rows=100)  # 2,001 lines, 100 records: accepted
    path.write_text("Id,Tags\n" + "".join(f"{i},x\n" for i in range(2000)))
    with pytest.raises(InvalidSubmission, match="more than 1300 rows"):
        check_line_count(path, expected_rows=100)


@pytest.fixture
def no_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the grade if any CSV parser is handed the submission (the grading child is a
    fork of this process, so it inherits the patches)."""
    from mle_gym.grading import clean_submission, validation

    def refuse(*_args, **_kwargs):
        raise AssertionError("a CSV parser was called on a file the shape check refuses")

    monkeypatch.setattr(pd, "read_csv", refuse)
    monkeypatch.setattr(clean_submission, "read_table", refuse)
    monkeypatch.setattr(validation, "read_as_text", refuse)


@pytest.mark.parametrize("header_end", [b"\r", b"\r\n", b"\n"])
def test_millions_of_cr_ended_rows_are_refused_unread_by_the_host_grader(
    header_end, private, tmp_path, no_parsing
):
    """pandas and pyarrow end a row at a bare CR too: 4.8M CR-ended rows (~60 MiB, under
    the 64 MiB copy cap) are refused by the row guard in the bounded grading child, before
    any parser runs, whatever ends the header."""
    from mle_gym.grading.bounded import grade_bounded

    path = _file(tmp_path, b"PassengerId,Transported" + header_end + b"0000_01,True\r" * 4_800_000)
    assert path.stat().st_size > 59 * 1024**2
    report = grade_bounded(COMP.id, path, private)
    assert not report.valid_submission
    assert f"more than {3 * ROWS + 1000} rows" in report.error, report.error


@pytest.mark.parametrize("ending", [b"\r", b"\r\n", b"\n"])
def test_every_line_ending_counts_once(ending, tmp_path, monkeypatch):
    """Lines are counted as pandas ends rows, each ending once (a CRLF split across two
    read chunks too): the most lines allowed pass on the count alone, one more does not."""
    from mle_gym.grading import shape

    monkeypatch.setattr(shape, "_records_over", lambda _path, _most: True)
    most = shape.ROW_FACTOR * ROWS + shape.ROW_SLACK
    first = b"x" * (shape._CHUNK - 1) + ending  # a CRLF here spans the first two chunks
    shape.check_line_count(_file(tmp_path, first + b"1,x" + ending * (most - 1)), ROWS)
    with pytest.raises(InvalidSubmission, match=f"more than {most} rows"):
        shape.check_line_count(_file(tmp_path, first + b"1,x" + ending * most), ROWS)
