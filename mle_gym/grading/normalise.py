"""Reads values the way MLE-bench's grader reads them, where the meaning is unambiguous.

MLE-bench loads a submission with `pandas.read_csv`, which types each column as a whole:
`17.0` in an integer id column equals the id 17, `2.0` equals the grade 2, and a column of
`1`/`0` compares equal to True/False. We read cells as text (so nothing is reinterpreted
silently), then accept exactly these readings, and say in the report what was read so.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from mle_gym.grading.errors import InvalidSubmission

if TYPE_CHECKING:
    import pandas as pd

#: Integers as `str(int)` writes them; only such labels or ids are read from other spellings.
_CANONICAL_INTEGER = re.compile(r"-?(0|[1-9][0-9]*)")
#: Floats represent integers exactly up to 2**53; beyond that a float spelling is ambiguous.
_EXACT = 2**53


def _example(values: pd.Series) -> str:
    return repr(str(values.iloc[0]))


def parse_floats(raw: pd.Series) -> pd.Series:
    """`raw` read as float64, NaN where a cell is not a number (as `pd.to_numeric` with
    errors="coerce" reads it). pyarrow parses a column of well-formed numbers many times
    faster and refuses the whole column otherwise; then pandas reads it cell by cell."""
    import pandas as pd
    import pyarrow as pa
    import pyarrow.compute as pc

    try:
        column = pc.cast(pa.array(raw, type=pa.string(), from_pandas=True), pa.float64())
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
        return pd.to_numeric(raw, errors="coerce").astype(float)
    return pd.Series(column.to_numpy(zero_copy_only=False), index=raw.index, dtype=float)


def all_canonical_integers(values: pd.Series | tuple[str, ...]) -> bool:
    if isinstance(values, tuple):
        return len(values) > 0 and all(_CANONICAL_INTEGER.fullmatch(v) for v in values)
    return len(values) > 0 and bool(values.str.fullmatch(_CANONICAL_INTEGER.pattern).all())


def integral_spellings(raw: pd.Series) -> pd.Series:
    """Cells that are integral numbers written otherwise (`17.0`, `+17`, `1.7e1`, `017`),
    mapped to `str(int)`; other cells map to None."""
    import numpy as np
    import pandas as pd

    mapped = pd.Series(None, index=raw.index, dtype=object)
    # Only the cells not already canonical can change: parse just those (usually none).
    odd = raw[~raw.str.fullmatch(_CANONICAL_INTEGER.pattern)]
    if odd.empty:
        return mapped
    numbers = parse_floats(odd)
    finite = numbers.notna() & np.isfinite(numbers.to_numpy(float, na_value=np.nan))
    ok = finite & (numbers.abs() < _EXACT) & (numbers == numbers.round())
    mapped[ok[ok].index] = numbers[ok].astype("int64").astype(str)
    return mapped


def refuse_inexact_integers(raw: pd.Series, what: str) -> None:
    """Refuse integral numbers written as floats at or beyond 2**53 (`1000216489776445753.0`):
    such a float stands for up to hundreds of different integers, so it names no one id
    (MLE-bench's pandas reads the column as floats and pairs rows by a sort of them)."""
    import numpy as np

    odd = raw[~raw.str.fullmatch(_CANONICAL_INTEGER.pattern)]
    if odd.empty:
        return
    numbers = parse_floats(odd)
    values = numbers.to_numpy(float, na_value=np.nan)
    inexact = np.isfinite(values) & (np.abs(values) >= _EXACT) & (values == np.round(values))
    if inexact.any():
        raise InvalidSubmission(
            f"{int(inexact.sum())} {what} are written as floats beyond 2**53 (e.g. "
            f"{_example(odd[inexact])}), which cannot name one integer exactly; write them as "
            "integers"
        )


def integer_text(raw: pd.Series, what: str, warnings: list[str]) -> pd.Series:
    """`raw` with integral numbers written as floats (or with a sign or leading zeros)
    replaced by their plain integer text; a warning names what was read so."""
    mapped = integral_spellings(raw)
    changed = mapped.notna()
    if not changed.any():
        return raw
    padded = raw[changed].str.fullmatch(r"0+\d+")
    spelling = "with leading zeros" if padded.all() else "otherwise than as plain integers"
    warnings.append(
        f"{int(changed.sum())} {what} written {spelling} (e.g. {_example(raw[changed])}) were "
        "read as the integers they equal, as MLE-bench reads them"
    )
    return raw.where(~changed, mapped)


def booleans(raw: pd.Series, column: str, warnings: list[str]) -> pd.Series | None:
    """The column as MLE-bench's `read_csv` types it, where that has a meaning for a
    True/False target: booleans when every cell is a boolean as pandas reads one (true or
    false in any case, nothing around it); for a whole column of numbers equal to 1 and 0,
    those read as True and False (pandas types it as numbers, spaces ignored, and
    1 == True). When some cell is a boolean pandas does not read (` False`, `True `) or
    the column mixes words and 1/0, pandas types the whole column as text, so no cell
    equals True or False: the text is returned as written, every row is scored wrong as
    MLE-bench scores it, and a warning says why; with at most two distinct cells,
    scikit-learn refuses the comparison there, so the file is invalid here too. None for
    any other column: the caller says what is wrong.

    `raw` holds the cells as written, surrounding spaces included."""
    lowered = raw.str.lower()
    words = lowered.isin(["true", "false"])
    if words.all():
        return lowered == "true"
    numbers = parse_floats(raw.str.strip())
    binary = numbers.isin([0, 1])
    if binary.all():
        warnings.append(
            f"column {column!r} holds 1/0 rather than True/False; read as True/False, as "
            "MLE-bench reads them"
        )
        return numbers == 1
    meaningful = lowered.str.strip().isin(["true", "false"]) | binary
    if meaningful.all():
        odd = raw[~words & ~binary] if (~words & ~binary).any() else raw[binary]
        if raw.nunique() <= 2:
            # scikit-learn then takes both columns for binary labels and refuses to
            # compare text with booleans: MLE-bench's submission is invalid.
            raise InvalidSubmission(
                f"column {column!r} holds {_example(odd)}, which is not a boolean as pandas "
                "reads it, so MLE-bench reads the whole column as text and refuses it; write "
                "every cell as True or False, with no spaces"
            )
        warnings.append(
            f"column {column!r}: {int((~words).sum())} cell(s) (e.g. {_example(odd)}) are not "
            "booleans as pandas reads them, so MLE-bench reads the whole column as text and "
            "no cell equals True or False: every row was scored as a wrong prediction, as "
            "MLE-bench scores it. Write every cell as True or False, with no spaces"
        )
        return raw
    return None
