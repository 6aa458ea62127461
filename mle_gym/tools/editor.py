"""The file-editor tools (view, create, str_replace, insert), in the convention that
OpenHands and SWE-agent share, so their scaffolds map onto them directly."""

from __future__ import annotations

import shlex

from mle_gym.sandbox.base import Sandbox
from mle_gym.tools.files import FileToolError, exists, is_dir, read_text, write_text

_SNIPPET_CONTEXT = 4
_LISTING_LIMIT = 400


def _require_absolute(path: str) -> None:
    if not path.startswith("/"):
        raise FileToolError(f"path must be absolute (start with /), got {path!r}")


def _numbered(lines: list[str], first: int) -> str:
    return "\n".join(f"{n:6d}\t{line}" for n, line in enumerate(lines, start=first))


def _snippet(text: str, center_line: int, span: int) -> str:
    lines = (text[:-1] if text.endswith("\n") else text).split("\n")
    start = max(1, center_line - _SNIPPET_CONTEXT)
    end = min(len(lines), center_line + span + _SNIPPET_CONTEXT)
    return _numbered(lines[start - 1 : end], start)


def _capped(numbered: str, first: int, last: int, total: int, max_chars: int) -> str:
    """At most `max_chars` characters of whole lines, with how to read on (view_range)."""
    if len(numbered) <= max_chars:
        return numbered
    cut = numbered.rfind("\n", 0, max_chars)
    shown = numbered[: cut if cut > 0 else max_chars]
    upto = first + shown.count("\n")
    return (
        f"{shown}\n[... output truncated: showing lines {first}-{upto} of {total} "
        f"({len(numbered):,} characters in lines {first}-{last}); read on with "
        f"view_range [{upto + 1}, {min(last, upto + 400)}] or use bash (sed -n, grep) ...]"
    )


def view(
    sandbox: Sandbox, path: str, view_range: list[int] | None = None, max_chars: int = 20_000
) -> str:
    _require_absolute(path)
    if is_dir(sandbox, path):
        q = shlex.quote(path)
        result = sandbox.run(
            f"find {q} -maxdepth 2 -not -path '*/.*' | sort | head -n {_LISTING_LIMIT}",
            60,
            max_output_chars=40_000,
        )
        return f"Files and directories up to 2 levels deep in {path}:\n{result.output.rstrip()}"
    text = read_text(sandbox, path)
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    first, last = 1, len(lines)
    if view_range is not None:
        first, last = view_range
        if last == -1:
            last = len(lines)
        if not 1 <= first <= max(len(lines), 1) or last < first or last > len(lines):
            raise FileToolError(
                f"view_range {view_range} is outside the file's lines 1..{len(lines)} "
                "(use [start, -1] to read to the end)"
            )
    return _capped(_numbered(lines[first - 1 : last], first), first, last, len(lines), max_chars)


def create(sandbox: Sandbox, path: str, file_text: str) -> str:
    _require_absolute(path)
    if exists(sandbox, path):
        raise FileToolError(
            f"{path} already exists; `create` does not overwrite. Use str_replace or insert, "
            "or remove the file first with bash"
        )
    write_text(sandbox, path, file_text)
    return f"File created: {path} ({len(file_text):,} characters)"


def str_replace(sandbox: Sandbox, path: str, old_str: str, new_str: str = "") -> str:
    _require_absolute(path)
    text = read_text(sandbox, path)
    count = text.count(old_str) if old_str else 0
    if count == 0:
        raise FileToolError(f"old_str does not occur verbatim in {path}; nothing was changed")
    if count > 1:
        starts, pos = [], text.find(old_str)
        while pos != -1:
            starts.append(text.count("\n", 0, pos) + 1)
            pos = text.find(old_str, pos + 1)
        raise FileToolError(
            f"old_str occurs {count} times in {path} (lines {', '.join(map(str, starts))}); "
            "include more context so it occurs exactly once. Nothing was changed"
        )
    at_line = text.count("\n", 0, text.find(old_str)) + 1
    updated = text.replace(old_str, new_str, 1)
    write_text(sandbox, path, updated)
    return f"Edited {path}. The changed region now reads:\n" + _snippet(
        updated, at_line, new_str.count("\n")
    )


def insert(sandbox: Sandbox, path: str, insert_line: int, new_str: str) -> str:
    _require_absolute(path)
    text = read_text(sandbox, path)
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    if not 0 <= insert_line <= len(lines):
        raise FileToolError(
            f"insert_line {insert_line} is outside 0..{len(lines)} (0 inserts at the top)"
        )
    new_lines = new_str.split("\n")
    if new_str.endswith("\n"):
        new_lines.pop()
    updated_lines = lines[:insert_line] + new_lines + lines[insert_line:]
    updated = "\n".join(updated_lines) + ("\n" if text.endswith("\n") or not text else "")
    write_text(sandbox, path, updated)
    return f"Inserted {len(new_lines)} line(s) into {path} after line {insert_line}:\n" + _snippet(
        updated, insert_line + 1, len(new_lines) - 1
    )
