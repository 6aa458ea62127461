"""Submissions that probe how a grader reads a file, built from a prepared fixture.

The same probes are graded by MLE-bench's own grader (`tests/mlebench_verdicts.py`, which
writes the committed table `tests/mlebench_verdicts.csv`) and by ours
(`tests/test_mlebench_verdicts.py`, which compares the two). Each probe changes one thing
about the perfect submission (the answers in the submission's columns) or, where the
answers are not in that shape, about the competition's sample submission.
"""

from __future__ import annotations

import csv
import io
import random
from pathlib import Path

#: Probe names, in the table's order.
PROBES = (
    "sample",
    "perfect",
    "shuffled",
    "ids_padded",
    "header_padded",
    "crlf",
    "bom",
    "scientific",
    "inf",
    "nan_cell",
)


def _rows(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text, newline="")))


def _text(rows: list[list[str]], newline: str = "\n") -> str:
    out = io.StringIO(newline="")
    csv.writer(out, lineterminator=newline).writerows(rows)
    return out.getvalue()


def _perfect(
    private: Path, answers_file: str, columns: list[str], sample: list[list[str]]
) -> list[list[str]] | None:
    """The answers' id and target columns, when the answers file holds them all for the
    sample's ids, with a value wherever the sample has one (some answer files also hold
    unscored rows, or only some of the ids a submission lists)."""
    path = private / answers_file
    if path.suffix != ".csv" or not path.is_file():
        return None
    rows = _rows(path.read_text(encoding="utf-8"))
    if not rows or not set(columns) <= set(rows[0]) or not set(columns) <= set(sample[0]):
        return None
    where = [rows[0].index(c) for c in columns]
    perfect = [[row[i] for i in where] for row in rows if len(row) == len(rows[0])]
    at = [sample[0].index(c) for c in columns]
    expected = [[row[i] for i in at] for row in sample[1:]]
    if sorted(r[0] for r in perfect[1:]) != sorted(r[0] for r in expected):
        return None
    if _has_empty(perfect[1:]) and not _has_empty(expected):
        return None
    return perfect


def _has_empty(rows: list[list[str]]) -> bool:
    return any(not cell for row in rows for cell in row)


def _scientific(cell: str) -> str | None:
    try:
        value = float(cell)
    except ValueError:
        return None
    return f"{value:.17e}" if value == value and abs(value) != float("inf") else None


def make_probes(
    public: Path, private: Path, sample_file: str, answers_file: str, columns: list[str]
) -> dict[str, bytes]:
    """name -> file bytes; `columns` are the id column then the target columns. A probe
    that does not apply (no perfect file, no number to write otherwise) is left out."""
    sample = _rows((public / sample_file).read_text(encoding="utf-8"))
    perfect = _perfect(private, answers_file, columns, sample)
    base = perfect or sample
    header, body = base[0], base[1:]
    probes = {"sample": _text(sample)}
    if perfect:
        probes["perfect"] = _text(perfect)
    shuffled = body[:]
    random.Random(0).shuffle(shuffled)
    probes["shuffled"] = _text([header, *shuffled])
    id_at = header.index(columns[0])
    target_at = header.index(columns[1]) if len(columns) > 1 else id_at
    padded = [row[:] for row in body]
    padded[0][id_at] = " " + padded[0][id_at]
    probes["ids_padded"] = _text([header, *padded])
    probes["header_padded"] = _text([[" " + header[0], *header[1:]], *body])
    probes["crlf"] = _text(base, "\r\n")
    probes["bom"] = "\ufeff" + _text(base)
    written = _scientific(body[0][target_at])
    if written is not None:
        probes["scientific"] = _text([header, [*body[0][:target_at], written,
                                               *body[0][target_at + 1:]], *body[1:]])  # fmt: skip
    for name, cell in (("inf", "inf"), ("nan_cell", "nan")):
        changed = [row[:] for row in body]
        changed[0][target_at] = cell
        probes[name] = _text([header, *changed])
    return {name: text.encode("utf-8") for name, text in probes.items()}
