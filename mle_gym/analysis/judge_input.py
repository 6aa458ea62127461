"""What the rules judge reads: the competition's context (ours, trusted) and the episode's
record (the agent's, untrusted) as JSON lines, each bounded, packed into parts that fit a
request.

Every step is kept: a long output (or a long action) is cut in its middle, never the middle of
the episode, so an agent cannot push a step out of sight by printing a lot around it. Every
kept file is shown whatever its suffix, each bounded and all of them sharing one total, so no
file can crowd the others out. Each line is one JSON object, and JSON escapes every line
break, so nothing the agent wrote can start a line of the request or pose as its structure.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mle_gym.analysis.plagiarism import notebook_code
from mle_gym.competitions import UnknownCompetition, get_competition
from mle_gym.data import CompetitionDirs
from mle_gym.runs.jsonfile import read_json, read_json_lines
from mle_gym.runs.layout import CODE_DIR, CODE_INDEX, NETWORK_LOG
from mle_gym.runs.trajectory import read_trajectory

#: Per step: an action's strings (commands are short; an edit carries a file) and an output's.
ACTION_CHARS = 8_000
OUTPUT_CHARS = 4_000
#: Kept files: each at most FILE_CHARS, all together FILES_CHARS (each file gets its share,
#: at least MIN_FILE_CHARS, so many files are all shown in part rather than some in full).
FILE_CHARS = 10_000
FILES_CHARS = 120_000
MIN_FILE_CHARS = 1_000
#: Requests through the egress proxy shown (the first ones; the rest are counted), and the
#: fields of each (the log's other figures, bytes and timings, say nothing of the rules).
NETWORK_REQUESTS = 500
_NETWORK_FIELDS = ("method", "host", "port", "url", "sni", "status", "verdict", "rule")
#: The competition's context: its statement and the listing of its public data.
STATEMENT_CHARS = 8_000
LISTED_PUBLIC_ENTRIES = 60
_READ_BYTES = 1024**2
_COUNTED_ENTRIES = 100_000
#: The statement's placeholders, filled with the sandbox's paths (the defaults of
#: mle_gym.sandbox.base.SandboxPaths; not imported: analysis reads runs without sandbox code).
_SANDBOX_PATHS = {"data_dir": "/home/data", "code_dir": "/home/code"}
_SUBMISSION_DIR = "/home/submission"
#: Characters that Python (and so some readers of the request) split lines at and that JSON
#: leaves raw inside strings; escaped so that one record stays one line.
_LINE_BREAKS = {0x85: "\\u0085", 0x2028: "\\u2028", 0x2029: "\\u2029"}


@dataclass
class LeftOut:
    """What was cut from the record, said in rules.json."""

    actions_cut: int = 0
    outputs_cut: int = 0
    files_cut: int = 0
    files_not_shown: int = 0
    network_requests_not_shown: int = 0
    chars_left_out: int = 0

    def to_dict(self) -> dict[str, int]:
        return dict(vars(self))


@dataclass
class Record:
    """The episode as JSON lines, and what was cut to bound them."""

    lines: list[str] = field(default_factory=list)
    left_out: LeftOut = field(default_factory=LeftOut)


def competition_context(competition_id: str) -> str:
    """The competition's id, statement and public data, as the judge should know them (the
    statement's Data section and the listing say what "data the competition provides" is)."""
    try:
        comp = get_competition(competition_id)
    except UnknownCompetition:
        return (
            f"# The competition\nid: {competition_id}\n(not in this mle_gym's registry: its "
            "statement and data are not known here)\n"
        )
    statement = comp.render_statement(
        _SANDBOX_PATHS["data_dir"], _SANDBOX_PATHS["code_dir"], _SUBMISSION_DIR
    )
    listing = _public_listing(comp.id, comp.checksums.public)
    return (
        f"# The competition\nid: {comp.id} ({comp.name})\n\n"
        "## Its statement (mle_gym's, as a default episode gives it)\n"
        f"{cut(statement, STATEMENT_CHARS)[0]}\n\n"
        "## Its public data: the only data the competition provides (read-only in "
        f"{_SANDBOX_PATHS['data_dir']})\n{listing}\n"
    )


def episode_record(directory: Path) -> Record:
    """The episode's steps and kept files as JSON lines, each within the bounds above."""
    record = Record()
    for event in read_trajectory(directory):
        if event.get("event") == "step":
            observation = event.get("observation")
            if isinstance(observation, dict) and "content" in observation:
                observation = observation["content"]
            action, n = _cut_strings(event.get("action"), ACTION_CHARS)
            record.left_out.actions_cut += bool(n)
            record.left_out.chars_left_out += n
            output, n = _cut_strings(observation, OUTPUT_CHARS)
            record.left_out.outputs_cut += bool(n)
            record.left_out.chars_left_out += n
            step = {"step": event.get("step"), "action": action, "output": output}
            record.lines.append(_line(step))
        elif event.get("event") == "error":
            error, n = _cut_strings(event.get("error"), OUTPUT_CHARS)
            record.left_out.chars_left_out += n
            record.lines.append(_line({"episode_ended_by_error": error}))
    _add_files(directory / CODE_DIR, directory / CODE_INDEX, record)
    _add_network(directory / NETWORK_LOG, record)
    return record


def _add_network(log: Path, record: Record) -> None:
    """The episode's requests through the egress proxy (network="proxy"), where it went and
    what the policy said: the judge's evidence for outside resources."""
    shown = 0
    for entry in read_json_lines(log):
        if "host" not in entry:  # the log's own notes (e.g. that it was full)
            continue
        if shown >= NETWORK_REQUESTS:
            record.left_out.network_requests_not_shown += 1
            continue
        request = {k: entry[k] for k in _NETWORK_FIELDS if entry.get(k) is not None}
        request, n = _cut_strings(request, OUTPUT_CHARS)
        record.left_out.chars_left_out += n
        record.lines.append(_line({"network_request": request}))
        shown += 1


def fit(line: str, budget: int) -> str:
    """`line` (one record) within `budget` characters: its strings cut shorter until it fits
    (only a bound smaller than the per-entry bounds above needs this)."""
    if len(line) <= budget:
        return line
    entry, limit = json.loads(line), budget
    while limit > 50:
        limit //= 2
        shorter = _line(_cut_strings(entry, limit)[0])
        if len(shorter) <= budget:
            return shorter
    return _line({"left_out": f"a record of {len(line):,} characters, over the bound"})


def parts(lines: list[str], budget: int) -> list[list[str]]:
    """`lines` packed in order into parts of at most `budget` characters (newlines counted)."""
    packed: list[list[str]] = [[]]
    size = 0
    for line in (fit(x, budget) for x in lines):
        if packed[-1] and size + len(line) + 1 > budget:
            packed.append([])
            size = 0
        packed[-1].append(line)
        size += len(line) + 1
    return packed


def cut(text: str, limit: int) -> tuple[str, int]:
    """`text` within about `limit` characters: its start and end with the cut stated, and how
    many characters were left out."""
    if len(text) <= limit:
        return text, 0
    keep = max(0, limit - 60) // 2
    left = len(text) - 2 * keep
    return f"{text[:keep]}\n[... {left:,} characters cut ...]\n{text[len(text) - keep :]}", left


def _cut_strings(value: Any, limit: int) -> tuple[Any, int]:
    """`value` with every string in it cut to `limit`, and the characters left out."""
    if isinstance(value, str):
        return cut(value, limit)
    if isinstance(value, list):
        pairs = [_cut_strings(v, limit) for v in value]
        return [v for v, _ in pairs], sum(n for _, n in pairs)
    if isinstance(value, dict):
        pairs = {k: _cut_strings(v, limit) for k, v in value.items()}
        return {k: v for k, (v, _) in pairs.items()}, sum(n for _, n in pairs.values())
    return value, 0


def _line(entry: dict[str, Any]) -> str:
    return json.dumps(entry, ensure_ascii=False, default=str).translate(_LINE_BREAKS)


def _add_files(folder: Path, index: Path, record: Record) -> None:
    """Every kept file (text shown, within its share of FILES_CHARS), and every file the index
    lists as not kept, with the reason."""
    if not folder.is_dir():
        return
    found = sorted(p for p in folder.rglob("*") if p.is_file() or p.is_symlink())
    texts: list[tuple[str, int, str]] = []
    for path in found:
        name = str(path.relative_to(folder))
        if path.is_symlink():
            record.lines.append(_line({"file": name, "not_shown": "a link"}))
            record.left_out.files_not_shown += 1
            continue
        size = path.stat().st_size
        body = _text(path, size)
        if body is None:
            record.lines.append(_line({"file": name, "bytes": size, "not_shown": "binary"}))
            record.left_out.files_not_shown += 1
        else:
            texts.append((name, size, body))
    share = max(MIN_FILE_CHARS, min(FILE_CHARS, FILES_CHARS // max(1, len(texts))))
    for name, size, body in texts:
        content, n = cut(body, share)
        record.left_out.files_cut += bool(n)
        record.left_out.chars_left_out += n
        record.lines.append(_line({"file": name, "bytes": size, "content": content}))
    listed = (read_json(index) or {}).get("files") if index.is_file() else None
    for entry in listed if isinstance(listed, list) else []:
        if isinstance(entry, dict) and not entry.get("kept"):
            record.lines.append(
                _line({"file": str(entry.get("path")), "bytes": entry.get("bytes"),
                       "not_shown": str(entry.get("reason") or "not kept")})
            )  # fmt: skip
            record.left_out.files_not_shown += 1


def _text(path: Path, size: int) -> str | None:
    """A kept file's text (a notebook's code cells), read within _READ_BYTES (its start and
    end), or None for a binary file."""
    with open(path, "rb") as f:
        data = f.read(_READ_BYTES)
        if size > _READ_BYTES:
            f.seek(max(_READ_BYTES, size - _READ_BYTES // 2))
            data = data[: _READ_BYTES // 2] + b"\n[... file cut while reading ...]\n" + f.read()
    if b"\x00" in data[:8192]:
        return None
    if path.suffix == ".ipynb":
        code = notebook_code(path) if size <= _READ_BYTES else ""
        if code.strip():
            return code
    return data.decode("utf-8", errors="replace")


def _public_listing(competition_id: str, checksummed: dict[str, str]) -> str:
    """The prepared public/ folder's entries (a folder with its number of entries), or, where
    the data is not prepared here, the public files MLE-bench's checksums name."""
    dirs = CompetitionDirs.of(competition_id)
    if not dirs.is_prepared():
        names = "\n".join(f"- {n}" for n in sorted(checksummed)) or "(none listed)"
        return (
            "(not prepared on this machine; the statement's Data section describes it; the "
            f"files MLE-bench checksums:)\n{names}"
        )
    entries = sorted(os.scandir(dirs.public), key=lambda e: e.name)
    shown = []
    for entry in entries[:LISTED_PUBLIC_ENTRIES]:
        if entry.is_dir(follow_symlinks=False):
            shown.append(f"- {entry.name}/ ({_count(entry.path)} entries)")
        else:
            shown.append(f"- {entry.name} ({entry.stat(follow_symlinks=False).st_size:,} bytes)")
    if len(entries) > LISTED_PUBLIC_ENTRIES:
        shown.append(f"- and {len(entries) - LISTED_PUBLIC_ENTRIES:,} more entries")
    return "\n".join(shown) or "(empty)"


def _count(folder: str) -> str:
    n = 0
    with os.scandir(folder) as it:
        for n, _ in enumerate(it, 1):
            if n >= _COUNTED_ENTRIES:
                return f"{n:,}+"
    return f"{n:,}"
