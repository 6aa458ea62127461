"""The identity of the data an agent sees: one sha256 over every file of a competition's
public folder (its path, size and content), so that two hosts or two backends can tell
whether an episode's /home/data is the same, byte for byte, without comparing the files.

Hashing a large competition takes minutes, so the identity is kept beside the folder
(`.<name>.identity.json`) with the files' sizes and modification times it was computed from,
and computed again only when these changed; within a process, it is remembered too.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import uuid
from pathlib import Path

_remembered: dict[tuple[str, str], str] = {}
_lock = threading.Lock()


def data_identity(folder: Path) -> str:
    """The identity ("sha256:<hex>") of the files and symlinks under `folder` (no link
    followed)."""
    folder = Path(folder).resolve()
    listing = _listing(folder)
    stamp = hashlib.sha256(json.dumps(listing).encode()).hexdigest()
    key = (str(folder), stamp)
    with _lock:
        if key in _remembered:
            return _remembered[key]
    kept = folder.with_name(f".{folder.name}.identity.json")
    identity = _kept(kept, stamp)
    if identity is None:
        identity = _computed(folder, listing)
        _keep(kept, stamp, identity)
    with _lock:
        _remembered[key] = identity
    return identity


def _listing(folder: Path) -> list[list[object]]:
    """[relative path, kind, size, mtime_ns] of every entry, in path order."""
    found: list[list[object]] = []
    for top, dirs, files in os.walk(folder):
        dirs.sort()
        for name in sorted(files + [d for d in dirs if os.path.islink(os.path.join(top, d))]):
            path = os.path.join(top, name)
            info = os.lstat(path)
            kind = "link" if os.path.islink(path) else "file"
            found.append([os.path.relpath(path, folder), kind, info.st_size, info.st_mtime_ns])
    return found


def _computed(folder: Path, listing: list[list[object]]) -> str:
    digest = hashlib.sha256()
    for relative, kind, size, _ in listing:
        path = folder / str(relative)
        if kind == "link":
            content = hashlib.sha256(os.readlink(path).encode(errors="surrogateescape"))
        else:
            with open(path, "rb") as handle:
                content = hashlib.file_digest(handle, "sha256")
        digest.update(f"{relative}\0{kind}\0{size}\0{content.hexdigest()}\n".encode())
    return f"sha256:{digest.hexdigest()}"


def _kept(path: Path, stamp: str) -> str | None:
    try:
        record = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if isinstance(record, dict) and record.get("stamp") == stamp:
        identity = record.get("identity")
        return identity if isinstance(identity, str) else None
    return None


def _keep(path: Path, stamp: str, identity: str) -> None:
    """Written whole (a temporary file renamed); a folder that cannot be written to keeps
    nothing, and the identity is computed again next time."""
    temporary = path.with_name(f"{path.name}.{uuid.uuid4().hex}")
    try:
        temporary.write_text(json.dumps({"stamp": stamp, "identity": identity}))
        os.replace(temporary, path)
    except OSError:
        temporary.unlink(missing_ok=True)
