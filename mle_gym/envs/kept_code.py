"""Keeping an episode's /home/code on the host, bounded, so the work behind a score can be
read, re-run and audited (plagiarism, rule checks).

The listing is the sandbox's own (`Sandbox.list_files`: mle_gym's code walks the folder, not
the agent's shell, so a shadowed `find` cannot hide a file), and the files are then copied
with the sandbox's file API (`Sandbox.copy_files`: paths resolved inside the sandbox, never
through a link out; in docker all in one exec).
Every decision is taken on the listed size before a byte is read: files up to
`max_file_bytes` are copied until `max_bytes` in total; bigger ones (model weights, data
copies) are listed with their size, and hashed only up to `max_hash_file_bytes` each and
`max_hash_bytes` in all (so sparse terabyte files cost one stat each). Keeping stops taking
files after `max_seconds`; what is left is listed with the reason.
"""

from __future__ import annotations

import hashlib
import json
import posixpath
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mle_gym.runs.layout import CODE_INDEX as INDEX_FILE
from mle_gym.sandbox.base import Sandbox
from mle_gym.tools import FileToolError, copy_out

#: Documented defaults (docs/batch.md, "Kept code").
DEFAULT_MAX_BYTES = 32 * 1024**2
DEFAULT_MAX_FILE_BYTES = 1024**2
DEFAULT_MAX_FILES = 2000
DEFAULT_MAX_HASHED = 50
DEFAULT_MAX_HASH_FILE_BYTES = 64 * 1024**2
DEFAULT_MAX_HASH_BYTES = 256 * 1024**2
DEFAULT_MAX_SECONDS = 120.0


@dataclass(frozen=True)
class CodeBounds:
    max_bytes: int = DEFAULT_MAX_BYTES
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    max_files: int = DEFAULT_MAX_FILES
    max_hashed: int = DEFAULT_MAX_HASHED
    max_hash_file_bytes: int = DEFAULT_MAX_HASH_FILE_BYTES
    max_hash_bytes: int = DEFAULT_MAX_HASH_BYTES
    max_seconds: float = DEFAULT_MAX_SECONDS


def keep_code(
    sandbox: Sandbox, root: str, dest: Path, bounds: CodeBounds = CodeBounds()
) -> dict[str, Any]:
    """Copy `root` (the sandbox's code folder) into `dest` within `bounds`; write and return
    the index: every listed file's path, bytes, sha256 and whether it was copied (or why not)."""
    deadline = time.monotonic() + bounds.max_seconds
    dest.mkdir(parents=True, exist_ok=True)
    listed, truncated = sandbox.list_files(root, bounds.max_files)
    files = _entries(listed)
    chosen, total = [], 0
    for entry in files:
        size = entry["bytes"]
        if size > bounds.max_file_bytes:
            entry["reason"] = f"over {bounds.max_file_bytes:,} bytes: listed, not copied"
        elif total + size > bounds.max_bytes:
            entry["reason"] = f"past the {bounds.max_bytes:,}-byte total: listed, not copied"
        else:
            chosen.append(entry)
            total += size
    names = [entry["path"] for entry in chosen]
    missed = sandbox.copy_files(
        root, names, dest, bounds.max_file_bytes, bounds.max_bytes, deadline
    )
    for entry in chosen:
        target = dest / entry["path"]
        if entry["path"] in missed:
            entry["reason"] = missed[entry["path"]]
        else:
            entry.update(kept=True, bytes=target.stat().st_size, sha256=_sha256(target))
    _hash_big_files(sandbox, root, dest, files, bounds, deadline)
    index = {
        "root": root,
        "files": files,
        "kept_bytes": sum(entry["bytes"] for entry in chosen if entry["kept"]),
        "listing_truncated": truncated,
        "bounds": vars(bounds),
    }
    (dest.parent / INDEX_FILE).write_text(json.dumps(index, indent=2))
    return index


def _entries(listed: list[tuple[str, int]]) -> list[dict[str, Any]]:
    """The listing as index entries in path order; a name that would leave the folder is
    dropped (the backends never give one; a path is only ever joined below `dest`)."""
    entries = {}
    for name, size in listed:
        relative = posixpath.normpath(name)
        if relative.startswith(("/", "..")) or relative == ".":
            continue
        entries[relative] = {"path": relative, "bytes": size, "sha256": None, "kept": False}
    return [entries[name] for name in sorted(entries)]


def _hash_big_files(
    sandbox: Sandbox,
    root: str,
    dest: Path,
    files: list[dict[str, Any]],
    bounds: CodeBounds,
    deadline: float,
) -> None:
    """sha256 of files not copied, streamed out through the file API into a scratch file
    beside `dest`, within the hashing bounds; chosen by listed size, so a file over them
    (a sparse 7 GiB one) is never read."""
    budget, count = bounds.max_hash_bytes, 0
    for entry in files:
        if entry["kept"]:
            continue
        size = entry["bytes"]
        if size > bounds.max_hash_file_bytes:
            entry["reason"] += f"; over {bounds.max_hash_file_bytes:,} bytes: not hashed"
            continue
        if size > budget or count >= bounds.max_hashed or time.monotonic() > deadline:
            entry["reason"] += "; past the hashing bounds: not hashed"
            continue
        with tempfile.TemporaryDirectory(dir=dest.parent, prefix=".hash-") as scratch:
            copy = Path(scratch) / "file"
            try:
                if copy_out(sandbox, f"{root}/{entry['path']}", copy, size):
                    entry["sha256"] = _sha256(copy)
            except (FileToolError, UnicodeError):
                pass  # it changed since the listing: left without a hash
        budget -= size
        count += 1


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()
