"""The chunked key readers of `streamed_split`: the split and filters champs-scalar-coupling
draws from them must be the ones its whole-column reads give, whatever the chunking."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from mle_gym.competitions import streamed_split
from mle_gym.competitions.streamed_split import NotStreamable, column_codes, column_isin


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(streamed_split, "CHUNK_ROWS", 97)


def _keys(tmp_path: Path) -> tuple[Path, np.ndarray]:
    """A CSV whose keys recur across chunks, first seen out of sorted order, some numeric-
    looking, one non-ASCII."""
    rng = np.random.default_rng(3)
    names = np.array([f"m{n:03d}" for n in range(150)] + ["10", "9", "é"], dtype=object)
    keys = rng.choice(names, 2_000)
    path = tmp_path / "table.csv"
    pd.DataFrame({"key": keys, "x": np.arange(len(keys))}).to_csv(path, index=False)
    return path, pd.read_csv(path)["key"].to_numpy(dtype=object)


def test_codes_are_np_uniques_inverse(tmp_path: Path, small_chunks: None) -> None:
    path, keys = _keys(tmp_path)
    codes, distinct = column_codes(path, "key")
    expected_distinct, expected_codes = np.unique(keys, return_inverse=True)
    assert list(distinct) == list(expected_distinct)
    assert np.array_equal(codes, expected_codes)


def test_isin_is_pandas_isin_on_the_whole_column(tmp_path: Path, small_chunks: None) -> None:
    path, keys = _keys(tmp_path)
    wanted = np.array(["m001", "10", "é", "absent"], dtype=object)
    assert np.array_equal(column_isin(path, "key", wanted), pd.Series(keys).isin(wanted))


def test_a_missing_key_is_not_streamable(tmp_path: Path, small_chunks: None) -> None:
    path = tmp_path / "table.csv"
    pd.DataFrame({"key": ["a"] * 300 + [None] + ["b"] * 10}).to_csv(path, index=False)
    with pytest.raises(NotStreamable, match="without a key"):
        column_codes(path, "key")
