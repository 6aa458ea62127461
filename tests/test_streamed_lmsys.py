"""lmsys-chatbot-arena's streamed prepare writes the bytes of its in-memory reference.

Its raw table is text whose quoted cells may hold line breaks, so `streamed_split` tells rows
apart by the quotes around them. The generated table carries what pandas reads or writes in
its own way: multi-line cells (with CRLF too), doubled quotes, commas, empty cells, a whole
cell `null` (read as missing), text that looks like a number, non-ASCII text, JSON lists
with escapes, and a first chunk whose `model_b` is all empty (read as floats there, as text
by the whole read), so that every chunk must be read with the whole read's types.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from mle_gym.competitions import get_competition, streamed_split
from mle_gym.competitions.catalog import lmsys_chatbot_arena
from mle_gym.competitions.prepare_progress import reporting_to
from mle_gym.competitions.streamed_split import (
    NotStreamable,
    Output,
    count_rows,
    holdout_order,
    split_csv,
)
from tests.test_streamed_split import _split_both_ways

MODELS = ["gpt-4-0613", "claude-2.1", "llama-2-70b-chat", "42", "mistral, medium"]
PIECES = [
    "Hello",
    'say "hi"',
    "a, b, c",
    "two\nlines",
    "crlf\r\nend",
    "café ☕ 日本語",
    "0123",
    "1e5",
    "null",
    "",
    "\\n literally",
    "```python\nprint('x')\n```",
]
#: Rows per chunk and per bucket: far smaller than the table, prime to cross each other.
CHUNK_ROWS, BUCKET_ROWS = 97, 151


def _cell(rng: np.random.Generator) -> str | None:
    """A prompt or response: a JSON list (escaped or with raw line breaks) or an odd cell."""
    turns = ["  ".join(rng.choice(PIECES, rng.integers(1, 4))) for _ in range(rng.integers(1, 3))]
    kind = rng.integers(0, 10)
    if kind == 0:
        return None  # an empty cell
    if kind == 1:
        return "null"  # the whole cell: pandas reads it as missing
    if kind == 2:
        return str(rng.integers(0, 1000))  # text that looks like a number
    if kind < 6:
        return json.dumps([*turns[:-1], None if kind == 3 else turns[-1]])  # escaped, [null]
    return "[" + ",".join(f'"{turn}"' for turn in turns) + "]"  # raw line breaks and quotes


def chat_table(rows: int, seed: int = 0) -> pd.DataFrame:
    """Kaggle's train.csv columns with the cells above."""
    rng = np.random.default_rng(seed)
    verdicts = np.eye(3, dtype=int)[rng.choice(3, rows)]
    model_b = rng.choice(MODELS, rows).astype(object)
    model_b[: CHUNK_ROWS + 10] = None
    return pd.DataFrame(
        {
            "id": 30192 + 7919 * np.arange(rows),
            "model_a": rng.choice(MODELS, rows),
            "model_b": model_b,
            "prompt": [_cell(rng) for _ in range(rows)],
            "response_a": [_cell(rng) for _ in range(rows)],
            "response_b": [_cell(rng) for _ in range(rows)],
            "winner_model_a": verdicts[:, 0],
            "winner_model_b": verdicts[:, 1],
            "winner_tie": verdicts[:, 2],
        }
    )


def write_raw(raw: Path, rows: int, seed: int = 0) -> None:
    raw.mkdir(parents=True, exist_ok=True)
    chat_table(rows, seed).to_csv(raw / "train.csv", index=False)


def _run(prepare, raw: Path, out: Path) -> dict[str, bytes]:
    for name in ("public", "private"):
        (out / name).mkdir(parents=True)
    prepare(raw, out / "public", out / "private")
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def _no_fallback(*_args: object) -> None:
    raise AssertionError("the streamed path fell back to the in-memory one")


def test_streamed_prepare_writes_the_bytes_of_the_in_memory_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(streamed_split, "CHUNK_ROWS", CHUNK_ROWS)
    monkeypatch.setattr(streamed_split, "BUCKET_ROWS", BUCKET_ROWS)
    monkeypatch.setattr("mle_gym.competitions.prepare_progress.REPORT_EVERY", 0.0)
    rows = 3_000
    raw = tmp_path / "raw"
    write_raw(raw, rows)
    text = (raw / "train.csv").read_bytes()
    assert text.count(b"\n") > rows + 500 and b"\r\n" in text  # many rows span lines

    reference = _run(lmsys_chatbot_arena.prepare_in_memory, raw, tmp_path / "reference")
    said: list[str] = []
    with monkeypatch.context() as patched, reporting_to(said.append):
        patched.setattr(lmsys_chatbot_arena, "prepare_in_memory", _no_fallback)
        streamed = _run(get_competition("lmsys-chatbot-arena").prepare, raw, tmp_path / "streamed")

    assert sorted(reference) == [
        "private/answers.csv",
        "public/sample_submission.csv",
        "public/test.csv",
        "public/train.csv",
    ]
    assert sorted(streamed) == sorted(reference)
    for name, content in reference.items():
        assert streamed[name] == content, name
    answers = pd.read_csv(tmp_path / "streamed" / "private" / "answers.csv")
    assert len(answers) == rows // 10 and answers["model_b"].notna().any()
    assert any(line.startswith(f"reading train.csv: {rows:,} of {rows:,} rows") for line in said)
    assert any(line.startswith("writing answers.csv: 300 of 300 rows") for line in said)


def test_rows_are_counted_by_quotes_not_by_line_breaks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(streamed_split, "COUNT_BLOCK", 4_099)  # blocks end inside quotes too
    source = tmp_path / "train.csv"
    chat_table(1_000, seed=3).to_csv(source, index=False)
    assert count_rows(source) == len(pd.read_csv(source)) == 1_000
    assert source.read_bytes().count(b"\n") > 1_100


def test_a_quote_inside_an_unquoted_raw_cell_is_recounted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # pandas reads `say "hi` as text (a quote opens quoting only at a cell's start), while
    # counting by quotes takes it for the start of a quoted cell: the pass is redone.
    monkeypatch.setattr(streamed_split, "CHUNK_ROWS", CHUNK_ROWS)
    source = tmp_path / "raw.csv"
    body = [f'{n},"two\nlines {n}"' for n in range(1_500)] + ['1500,say "hi']
    body += [f"{n},plain {n}" for n in range(1_501, 3_000)]
    source.write_text("\n".join(["id,text", *body]) + "\n")
    assert count_rows(source) != 3_000
    streamed, expected = _split_both_ways(source, tmp_path)
    assert streamed == expected


def test_line_breaks_written_without_quotes_cannot_be_streamed(tmp_path: Path) -> None:
    source = tmp_path / "raw.csv"
    pd.DataFrame({"id": range(50), "text": ["two\nlines"] * 50}).to_csv(source, index=False)
    unquoted = {"quoting": csv.QUOTE_NONE, "escapechar": "\\"}
    with pytest.raises(NotStreamable, match="line break outside quotes"):
        split_csv(
            source,
            lambda rows: holdout_order(rows, 0.1),
            [[Output(tmp_path / "train.csv", write=unquoted)], [Output(tmp_path / "test.csv")]],
        )
