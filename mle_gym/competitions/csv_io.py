"""CSV reading exactly as MLE-bench does it, so prepared files match byte for byte."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

_PANDAS_MAJOR = int(pd.__version__.split(".")[0])


def read_csv(path: Path | str, **kwargs: Any) -> pd.DataFrame:
    """Read with round-trip float parsing (pandas 3 does it by default and deprecates the flag)."""
    if _PANDAS_MAJOR < 3:
        kwargs.setdefault("float_precision", "round_trip")
    return pd.read_csv(path, **kwargs)
