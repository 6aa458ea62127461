"""A run's checkpoints on disk: file contents stored once each, named by their sha256
(`blobs/ab/abcd...`), and one folder per checkpoint holding its manifest and the manifest's
own sha256.

A checkpoint is read back as untrusted input: the manifest's checksum must match, every
entry must be a plain file, folder or symlink with permission bits only (no set-uid,
set-gid or sticky bit), at a clean relative path not below a symlink or file of the same
checkpoint, within the bounds; every blob it names must be a regular file of this store
with one link only, of the listed size and sha256. Anything else is refused with
`CheckpointError`, before a byte is written anywhere.
"""

from __future__ import annotations

import hashlib
import json
import os
import posixpath
import re
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mle_gym.sandbox.tree import TreeEntry, clean_relative
from mle_gym.sandbox.workspace import DEFAULT_FILES

FORMAT = "mle-gym-checkpoint/1"
MANIFEST = "manifest.json"
CHECKSUM = "manifest.sha256"
BLOBS = "blobs"
_SHA256 = re.compile(r"[0-9a-f]{64}")
_KINDS = ("file", "dir", "symlink")


class CheckpointError(ValueError):
    """A checkpoint that cannot be restored: damaged, edited, or outside the bounds."""


@dataclass(frozen=True)
class CheckpointBounds:
    """What one checkpoint may hold, in all its places together: bytes, bytes in one file,
    and entries (files, folders, symlinks). The defaults follow the workspace's own bounds
    (docker's 8 GiB and a million files a place)."""

    max_bytes: int = 8 * 1024**3
    max_file_bytes: int = 8 * 1024**3
    max_entries: int = DEFAULT_FILES


DEFAULT_BOUNDS = CheckpointBounds()


class CheckpointStore:
    """The checkpoints of one run, under `root`."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.blobs = self.root / BLOBS

    def add_blob(self, path: Path) -> tuple[str, int]:
        """Move the scratch file `path` (inside `root`) into the store under its sha256,
        or drop it when that content is already there; (sha256, bytes)."""
        digest, size = file_sha256(path)
        target = self.blob_path(digest)
        if target.exists():
            path.unlink()
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            path.chmod(0o444)
            os.replace(path, target)
        return digest, size

    def add_bytes(self, data: bytes) -> tuple[str, int]:
        """`data` stored under its sha256, written only when that content is not there yet
        (a new file beside its final name, read-only from its creation, then renamed);
        (sha256, bytes)."""
        digest = hashlib.sha256(data).hexdigest()
        target = self.blob_path(digest)
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            scratch = target.with_name(f".{digest}.{secrets.token_hex(4)}")
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
            try:
                with os.fdopen(os.open(scratch, flags, 0o444), "wb") as out:
                    out.write(data)
                os.replace(scratch, target)
            except BaseException:
                scratch.unlink(missing_ok=True)
                raise
        return digest, len(data)

    def blob_path(self, digest: str) -> Path:
        return self.blobs / digest[:2] / digest

    def write(self, name: str, manifest: dict[str, Any]) -> Path:
        """The checkpoint folder `name` with `manifest` and its checksum."""
        folder = self.root / name
        folder.mkdir(parents=True)
        data = json.dumps(manifest, sort_keys=True, separators=(",", ":")).encode()
        (folder / MANIFEST).write_bytes(data)
        (folder / CHECKSUM).write_text(hashlib.sha256(data).hexdigest() + "\n")
        return folder


def file_sha256(path: Path) -> tuple[str, int]:
    """(sha256, bytes) of a file."""
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest(), os.fstat(handle.fileno()).st_size


@dataclass(frozen=True)
class Checkpoint:
    """A checkpoint that passed every check: its places' entries, logs and shell state."""

    folder: Path
    store: CheckpointStore
    manifest: dict[str, Any]
    places: dict[str, list[TreeEntry]]
    logs: list[TreeEntry]


def read_manifest(folder: Path) -> dict[str, Any]:
    """The manifest of the checkpoint in `folder`, checked against its checksum and format
    only (its entries and blobs are `load`'s to check); `CheckpointError` when it is not one."""
    folder = Path(folder)
    try:
        data = (folder / MANIFEST).read_bytes()
        recorded = (folder / CHECKSUM).read_text().strip()
    except OSError as exc:
        raise CheckpointError(f"{folder} is not a checkpoint: {exc.strerror or exc}") from None
    if hashlib.sha256(data).hexdigest() != recorded:
        raise CheckpointError(
            f"{folder}: the manifest does not match its checksum (damaged or edited)"
        )
    try:
        manifest = json.loads(data)
    except ValueError as exc:
        raise CheckpointError(f"{folder}: the manifest is not JSON: {exc}") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise CheckpointError(f"{folder}: not a checkpoint of format {FORMAT}")
    return manifest


def load(folder: Path, bounds: CheckpointBounds = DEFAULT_BOUNDS) -> Checkpoint:
    """Read and check the checkpoint in `folder` (its store is the folder's parent) and the
    blobs it names; `CheckpointError` saying what is wrong."""
    folder = Path(folder)
    manifest = read_manifest(folder)
    places_data = manifest.get("places")
    if not isinstance(places_data, dict):
        raise CheckpointError(f"{folder}: the manifest lists no places")
    places = {}
    for place, entries in places_data.items():
        if not isinstance(place, str) or posixpath.normpath(place) != place or place[:1] != "/":
            raise CheckpointError(f"{folder}: {place!r} is not a clean absolute place")
        places[place] = _entries(entries, place)
    logs = _entries(manifest.get("logs", []), "logs")
    if any(e.kind != "file" or "/" in e.path for e in logs):
        raise CheckpointError(f"{folder}: the logs may hold only files directly in their folder")
    every = [e for entries in places.values() for e in entries] + logs
    _check_bounds(every, bounds)
    store = CheckpointStore(folder.parent)
    checked: dict[str, int] = {}
    for entry in every:
        if entry.kind != "file":
            continue
        digest = entry.sha256 or ""
        if digest not in checked:
            _check_blob(store, entry)
            checked[digest] = entry.size
        elif checked[digest] != entry.size:
            raise CheckpointError(f"{entry.path}: its size does not match its content's")
    return Checkpoint(folder, store, manifest, places, logs)


def _entries(data: object, place: str) -> list[TreeEntry]:
    if not isinstance(data, list):
        raise CheckpointError(f"{place}: the entries are not a list")
    entries, kinds = [], {}
    for item in data:
        entry = _entry(item, place)
        if entry.path in kinds:
            raise CheckpointError(f"{place}/{entry.path} is listed twice")
        kinds[entry.path] = entry.kind
        entries.append(entry)
    for entry in entries:
        parent = posixpath.dirname(entry.path)
        while parent:
            if kinds.get(parent, "dir") != "dir":
                raise CheckpointError(
                    f"{place}/{entry.path} lies below {place}/{parent}, a {kinds[parent]}: "
                    "a restore never goes through a link or a file"
                )
            parent = posixpath.dirname(parent)
    return entries


def _entry(item: object, place: str) -> TreeEntry:
    if not isinstance(item, dict):
        raise CheckpointError(f"{place}: an entry is not an object")
    path, kind, mode = item.get("path"), item.get("type"), item.get("mode")
    shown = f"{place}/{path}"
    if not isinstance(path, str) or clean_relative(path) is None:
        raise CheckpointError(f"{place}: {path!r} is not a clean relative path")
    if kind not in _KINDS:
        raise CheckpointError(
            f"{shown} is a {kind!r}: a checkpoint holds only files, folders and symlinks "
            "(no devices, FIFOs, sockets or hard links)"
        )
    if not isinstance(mode, int) or isinstance(mode, bool) or not 0 <= mode <= 0o7777:
        raise CheckpointError(f"{shown} has no valid permission bits: {mode!r}")
    if mode & (stat.S_ISUID | stat.S_ISGID | stat.S_ISVTX):
        raise CheckpointError(
            f"{shown} has mode {mode:o}: set-uid, set-gid and sticky bits are refused"
        )
    if kind == "symlink":
        target = item.get("target")
        if not isinstance(target, str) or not target or "\0" in target:
            raise CheckpointError(f"{shown} is a symlink without a valid target")
        return TreeEntry(path, kind, mode, 0, target)
    if kind == "dir":
        return TreeEntry(path, kind, mode)
    size, digest = item.get("size"), item.get("sha256")
    if not isinstance(size, int) or isinstance(size, bool) or size < 0:
        raise CheckpointError(f"{shown} has no valid size")
    if not isinstance(digest, str) or not _SHA256.fullmatch(digest):
        raise CheckpointError(f"{shown} has no valid sha256")
    return TreeEntry(path, kind, mode, size, sha256=digest)


def _check_bounds(entries: list[TreeEntry], bounds: CheckpointBounds) -> None:
    if len(entries) > bounds.max_entries:
        raise CheckpointError(
            f"the checkpoint holds {len(entries):,} entries, "
            f"over the bound of {bounds.max_entries:,}"
        )
    total = 0
    for entry in entries:
        if entry.size > bounds.max_file_bytes:
            raise CheckpointError(
                f"{entry.path} is {entry.size:,} bytes, over the bound of "
                f"{bounds.max_file_bytes:,} a file"
            )
        total += entry.size
    if total > bounds.max_bytes:
        raise CheckpointError(
            f"the checkpoint holds {total:,} bytes, over the bound of {bounds.max_bytes:,}"
        )


def checked_blob(store: CheckpointStore, digest: str, size: int, shown: str) -> Path:
    """The blob of content `digest` of `size` bytes, checked as a file entry's is (what a
    caller keeps beside the workspace: an episode's snapshots); `shown` names it in errors."""
    if not isinstance(digest, str) or not _SHA256.fullmatch(digest):
        raise CheckpointError(f"{shown} has no valid sha256")
    if not isinstance(size, int) or isinstance(size, bool) or size < 0:
        raise CheckpointError(f"{shown} has no valid size")
    _check_blob(store, TreeEntry(shown, "file", 0o444, size, sha256=digest))
    return store.blob_path(digest)


def _check_blob(store: CheckpointStore, entry: TreeEntry) -> None:
    """The blob of a file entry: a regular file of one link, not reached through a symlink,
    of the listed size and content."""
    digest = entry.sha256 or ""
    path = store.blob_path(digest)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError as exc:
        raise CheckpointError(
            f"the content of {entry.path} ({digest[:12]}...) is missing or not a plain file: "
            f"{exc.strerror}"
        ) from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1:
            raise CheckpointError(
                f"the content of {entry.path} ({path}) is not a file of its own "
                f"({info.st_nlink} links): refused"
            )
        if info.st_size != entry.size:
            raise CheckpointError(
                f"the content of {entry.path} is {info.st_size:,} bytes, the manifest says "
                f"{entry.size:,} (damaged or edited)"
            )
        hashed = hashlib.file_digest(handle, "sha256")
    if hashed.hexdigest() != digest:
        raise CheckpointError(
            f"the content of {entry.path} does not match its sha256 (damaged or edited)"
        )
