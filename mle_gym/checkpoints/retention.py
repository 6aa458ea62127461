"""Which checkpoints of a store to keep: the newest few, and the file contents they need.

A store that takes a checkpoint every few steps of a day-long episode would otherwise grow
with every content the agent ever wrote. `prune` keeps the newest `keep` intact checkpoints,
removes the others and any folder a killed capture left half written, then removes every blob
no kept manifest names (anywhere in it, under a `sha256` key: the workspace's files, the logs,
and what a caller's meta stored beside them, such as an episode's submission snapshots).

A store pruned here has one writer: the process that takes its checkpoints, which prunes
after each capture, never during one.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mle_gym.checkpoints.store import BLOBS, CheckpointError, CheckpointStore, read_manifest


def intact(store: CheckpointStore) -> list[tuple[Path, dict[str, Any]]]:
    """Every checkpoint folder of `store` whose manifest checks out, oldest first (by the
    time it was taken), with its manifest."""
    found = []
    if not store.root.is_dir():
        return found
    for folder in store.root.iterdir():
        if folder.name == BLOBS or folder.is_symlink() or not folder.is_dir():
            continue
        try:
            manifest = read_manifest(folder)
        except CheckpointError:
            continue
        found.append((folder, manifest))
    return sorted(found, key=lambda item: (_created(item[1]), item[0].name))


def newest(store: CheckpointStore) -> Path | None:
    """The newest intact checkpoint of `store`, or None."""
    found = intact(store)
    return found[-1][0] if found else None


def prune(store: CheckpointStore, keep: int) -> list[Path]:
    """Keep the newest `keep` (at least 1) intact checkpoints and the blobs they name;
    remove the rest: older checkpoints, broken folders, scratch files, unnamed blobs.
    The folders removed."""
    found = intact(store)
    kept = found[-max(1, keep) :]
    keep_names = {folder.name for folder, _ in kept}
    removed = []
    for entry in store.root.iterdir():
        if entry.name == BLOBS or entry.name in keep_names:
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
            removed.append(entry)
        else:  # a scratch file a killed capture left behind
            entry.unlink()
    live = {digest for _, manifest in kept for digest in _digests(manifest)}
    if store.blobs.is_dir():
        for blob in store.blobs.glob("*/*"):
            if blob.name not in live:
                blob.unlink()
        for shard in store.blobs.iterdir():
            if shard.is_dir() and not any(shard.iterdir()):
                shard.rmdir()
    return removed


def _created(manifest: dict[str, Any]) -> float:
    created = manifest.get("created")
    return float(created) if isinstance(created, int | float) else 0.0


def _digests(value: Any) -> Iterator[str]:
    """Every string under a `sha256` key, at any depth of a manifest."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "sha256" and isinstance(item, str):
                yield item
            else:
                yield from _digests(item)
    elif isinstance(value, list):
        for item in value:
            yield from _digests(item)
