"""Reads a submission (or answers) CSV as exact text, a file it cannot read being an
invalid submission with the reason (the reader itself is `mle_gym.formats.csv_text`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from mle_gym.formats import csv_text
from mle_gym.grading.errors import InvalidSubmission

if TYPE_CHECKING:
    import pandas as pd


def read_as_text(path: Path) -> pd.DataFrame:
    """`formats.csv_text.read_as_text`, with an unreadable file an InvalidSubmission."""
    try:
        return csv_text.read_as_text(path)
    except csv_text.UnreadableCsv as exc:
        raise InvalidSubmission(f"the submission file {exc.reason}") from None
