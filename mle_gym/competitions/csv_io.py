"""CSV reading exactly as MLE-bench does it, so prepared files match byte for byte."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd


def read_csv(path: Path | str, **kwargs: Any) -> pd.DataFrame:
    """Read with round-trip float parsing (pandas 3 does it by default and deprecates the flag).

    pandas is imported here, not at module import: catalog modules import this one when the
    package registers its envs, and that must stay cheap.
    """
    import pandas as pd

    if int(pd.__version__.split(".")[0]) < 3:
        kwargs.setdefault("float_precision", "round_trip")
    return pd.read_csv(path, **kwargs)
