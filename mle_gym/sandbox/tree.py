"""A workspace as a list of entries (files, folders, symlinks), listed out of a running
sandbox and written into a fresh one by mle_gym's own code, never by the agent's shell.

`TreeEntry.path` is relative to the place listed (normalised, never absolute, never `..`);
`mode` is the permission bits as found (set-uid, set-gid and sticky included, so a caller
can see and drop them); a symlink carries its target as text and is never followed.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

#: The kinds a listing gives; "other" is a FIFO, socket or device (never written back).
KINDS = ("file", "dir", "symlink", "other")


@dataclass(frozen=True)
class TreeEntry:
    path: str
    kind: str
    mode: int
    size: int = 0
    target: str | None = None
    #: A file's content hash, where a caller keeps one (a checkpoint); listings leave it out.
    sha256: str | None = None


def clean_relative(path: str) -> str | None:
    """`path` as a normalised relative path below its place, or None when it is not one
    (absolute, empty, `.`, or leading out with `..`)."""
    if not path or path.startswith("/") or "\0" in path:
        return None
    normal = posixpath.normpath(path)
    if normal == "." or normal == ".." or normal.startswith("../") or normal != path:
        return None
    return normal
