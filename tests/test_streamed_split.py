"""Streamed prepare (mle_gym.competitions.streamed_split): the bytes of the in-memory path.

Each covered competition is prepared from its generated raw set twice, streamed (chunks and
buckets far smaller than the table, so rows cross many of both) and by its in-memory
reference (`prepare_in_memory`, MLE-bench's way); every file must match byte for byte. The
streamed run may not fall back to the reference: that is made to fail during it.
"""

from __future__ import annotations

import importlib
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.model_selection import train_test_split

from mle_gym.competitions import get_competition, streamed_split
from mle_gym.competitions.group_holdout import split_groups
from mle_gym.competitions.prepare_progress import reporting_to
from mle_gym.competitions.streamed_split import (
    NotStreamable,
    Output,
    group_holdout_order,
    holdout_order,
    split_csv,
)
from tests.fixtures.raw import generator_for

#: Each covered competition, with rows per chunk and per bucket that split its generated
#: table into many of both (a few thousand formatting calls at most).
COVERED = {
    "new-york-city-taxi-fare-prediction": (997, 1_500),
    "tabular-playground-series-dec-2021": (997, 1_500),
    "tabular-playground-series-may-2022": (9_973, 20_011),
    "ventilator-pressure-prediction": (997, 1_500),
    "champs-scalar-coupling": (997, 1_500),
    "text-normalization-challenge-english-language": (37, 50),
    "text-normalization-challenge-russian-language": (37, 50),
}
#: Where the in-memory reference is not the module's `prepare_in_memory`: the language.
LANGUAGES = {
    "text-normalization-challenge-english-language": "en",
    "text-normalization-challenge-russian-language": "ru",
}


@pytest.fixture
def small_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Chunks and buckets of a few hundred rows: every fixture spans many of each."""
    monkeypatch.setattr(streamed_split, "CHUNK_ROWS", 997)
    monkeypatch.setattr(streamed_split, "BUCKET_ROWS", 1_500)


def _files(folder: Path) -> dict[str, object]:
    """Each file's bytes; for a zip, its members' (a zip also stores the time of writing)."""
    files: dict[str, object] = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        if path.suffix == ".zip":
            with zipfile.ZipFile(path) as archive:
                files[str(path.relative_to(folder))] = [
                    (i.filename, i.compress_type, archive.read(i)) for i in archive.infolist()
                ]
        else:
            files[str(path.relative_to(folder))] = path.read_bytes()
    return files


def _run(prepare, raw: Path, out: Path) -> dict[str, object]:
    for name in ("public", "private"):
        (out / name).mkdir(parents=True)
    prepare(raw, out / "public", out / "private")
    return _files(out)


@pytest.mark.parametrize("competition_id", COVERED)
def test_streamed_prepare_writes_the_bytes_of_the_in_memory_one(
    competition_id: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chunk, bucket = COVERED[competition_id]
    monkeypatch.setattr(streamed_split, "CHUNK_ROWS", chunk)
    monkeypatch.setattr(streamed_split, "BUCKET_ROWS", bucket)
    comp = get_competition(competition_id)
    module = importlib.import_module(comp.prepare.__module__)
    raw = tmp_path / "raw"
    raw.mkdir()
    generator_for(comp).make_raw(raw)

    language = LANGUAGES.get(competition_id)
    if language is None:
        reference = _run(module.prepare_in_memory, raw, tmp_path / "reference")
    else:
        reference = _run(module.prepare_in_memory_for(language), raw, tmp_path / "reference")
    with monkeypatch.context() as patched:
        fallback = "prepare_in_memory" if language is None else "_prepare_in_memory"
        patched.setattr(module, fallback, _no_fallback)
        streamed = _run(comp.prepare, raw, tmp_path / "streamed")

    assert sorted(streamed) == sorted(reference)
    for name, text in reference.items():
        assert streamed[name] == text, name
    assert len(reference) >= 4


def _no_fallback(*_args: object) -> None:
    raise AssertionError("the streamed path fell back to the in-memory one")


@pytest.mark.parametrize(
    ("rows", "test_size"), [(1, 0.5), (10, 0.1), (12_345, 0.1), (20_000, 9_914)]
)
def test_holdout_order_is_train_test_splits_order(rows: int, test_size: float) -> None:
    if rows == 1:
        with pytest.raises(ValueError):  # as train_test_split refuses it
            holdout_order(rows, test_size)
        return
    train, test = train_test_split(np.arange(rows), test_size=test_size, random_state=0)
    order = holdout_order(rows, test_size)
    for number, expected in enumerate((train, test)):
        mine = np.flatnonzero(order.part == number)
        assert np.array_equal(mine[np.argsort(order.rank[mine])], expected)


def test_group_holdout_order_is_split_groups_order() -> None:
    rng = np.random.default_rng(5)
    keys = rng.choice(np.array([f"m{n:04d}" for n in range(300)]), 5_000)
    frame = pd.DataFrame({"key": keys, "row": np.arange(len(keys))})
    order = group_holdout_order(keys)
    for number, part in enumerate(split_groups(frame, "key")):
        mine = np.flatnonzero(order.part == number)
        assert np.array_equal(mine[np.argsort(order.rank[mine])], part["row"].to_numpy())


def _split_both_ways(source: Path, tmp_path: Path) -> tuple[list[bytes], list[bytes]]:
    """(streamed, in-memory) bytes of a 10% holdout of `source`, train then test."""
    streamed = [tmp_path / "train.csv", tmp_path / "test.csv"]
    split_csv(
        source,
        lambda rows: holdout_order(rows, 0.1),
        [[Output(streamed[0])], [Output(streamed[1])]],
    )
    parts = train_test_split(pd.read_csv(source), test_size=0.1, random_state=0)
    return [p.read_bytes() for p in streamed], [p.to_csv(index=False).encode() for p in parts]


def test_a_column_whose_type_changes_between_chunks_is_read_as_the_whole_file_reads_it(
    tmp_path: Path, small_blocks: None
) -> None:
    # The first chunk's prices are whole (integers to pandas), later ones are not; the first
    # chunk's names are all missing (floats to pandas), later ones are text.
    rows = 3_000
    source = tmp_path / "raw.csv"
    price = np.where(np.arange(rows) < 997, np.arange(rows) % 7, np.arange(rows) / 8)
    name = np.where(np.arange(rows) < 997, None, np.char.add("n", np.arange(rows).astype(str)))
    pd.DataFrame({"id": np.arange(rows), "price": price, "name": name}).to_csv(source, index=False)
    text = source.read_text().replace(".0,", ",", 997)  # "3.0" written "3" in the first chunk
    source.write_text(text)

    streamed, expected = _split_both_ways(source, tmp_path)
    assert streamed == expected


def test_blank_lines_miscounted_are_recounted(tmp_path: Path, small_blocks: None) -> None:
    source = tmp_path / "raw.csv"
    lines = ["a,b"] + [f"{n},{n / 3}" for n in range(2_500)]
    source.write_text("\n".join(lines[:1000]) + "\n\n\n" + "\n".join(lines[1000:]) + "\n")
    streamed, expected = _split_both_ways(source, tmp_path)
    assert streamed == expected


@pytest.mark.parametrize(
    ("cells", "reason"),
    [
        (["7", "x"], "read as"),  # numbers in one chunk, text in another
    ],
)
def test_what_cannot_be_streamed_says_why(
    tmp_path: Path, small_blocks: None, cells: list[str], reason: str
) -> None:
    source = tmp_path / "raw.csv"
    body = [f"{n},{cells[0]}" for n in range(1_500)] + [f"{n},{cells[1]}" for n in range(1_500)]
    source.write_text("\n".join(["id,value", *body]) + "\n")
    said: list[str] = []
    with reporting_to(said.append), pytest.raises(NotStreamable, match=reason):
        split_csv(
            source,
            lambda rows: holdout_order(rows, 0.1),
            [[Output(tmp_path / "train.csv")], [Output(tmp_path / "test.csv")]],
        )
    assert [line for line in said if "cannot be split in chunks" in line and reason in line]


def test_progress_reports_rows_read_rows_written_and_bytes(
    tmp_path: Path, small_blocks: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("mle_gym.competitions.prepare_progress.REPORT_EVERY", 0.0)
    source = tmp_path / "raw.csv"
    pd.DataFrame({"id": range(5_000), "x": np.arange(5_000) / 3}).to_csv(source, index=False)
    lines: list[str] = []
    with reporting_to(lines.append):
        split_csv(
            source,
            lambda rows: holdout_order(rows, 0.1),
            [[Output(tmp_path / "train.csv")], [Output(tmp_path / "test.csv")]],
        )
    size = source.stat().st_size
    assert any(line.startswith("reading raw.csv: 5,000 of 5,000 rows") for line in lines)
    assert any(f"{size / 1000:,.1f} KB" in line for line in lines if "reading" in line)
    written = [line for line in lines if line.startswith("writing train.csv: 4,500 of 4,500 rows")]
    train_size = (tmp_path / "train.csv").stat().st_size
    header = len("id,x\n")
    assert written and f"{(train_size - header) / 1000:,.1f} KB" in written[-1]
    assert any(line.startswith("writing test.csv: 500 of 500 rows") for line in lines)
