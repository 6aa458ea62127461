"""Copies of the submission file as it changes during an episode, graded only after it ends.

Score over time (MLE-bench's scaling figure, "what if the run had stopped at 12 h") needs the
submission as it stood at earlier times. The env offers the file after every step and at every
validate; a copy is kept when its content differs from the last kept one (sha256), with the
step and the elapsed episode time. Nothing here grades: no score exists before the episode
ends, so none can reach the agent or its policy (`mle_gym.evaluate_snapshots` grades them
afterwards).

Cost: a look at an unchanged file is one stat (its stamp: inode, size, times); only a
changed file is copied and hashed. Where a stat is dear (docker: one exec, ~0.1 s on a busy
host), looks after steps are spaced so that they take at most `MAX_OVERHEAD` of the episode's
time; a validate and the end of the episode always look.

Bounds, because the agent decides how often and how big the file is: each copy is capped
like the graded submission (`submission_cap`), and the kept copies at `max_count` files and
`max_bytes` in total. Past a bound, intermediate copies are thinned where they lie closest
in time to the next one (oldest first among equals), so a long run keeps its early history
and a tight rewrite loop collapses to a few copies; the newest copy is always kept.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from mle_gym.runs.layout import SNAPSHOT_INDEX as INDEX_FILE
from mle_gym.sandbox.base import Sandbox
from mle_gym.tools import FileToolError, copy_out

#: Documented defaults (docs/security.md, "Submission snapshots").
DEFAULT_MAX_COUNT = 64
DEFAULT_MAX_BYTES = 256 * 1024**2
#: The share of episode time that looks after steps may take.
MAX_OVERHEAD = 0.05
_CHUNK = 1 << 20


@dataclass(frozen=True)
class Snapshot:
    """One kept copy: its file name in the snapshot folder, when and what it was."""

    file: str
    step: int
    elapsed: float
    sha256: str
    bytes: int
    final: bool = False


class SnapshotKeeper:
    """The snapshots of one episode, in `directory` on the host."""

    def __init__(
        self,
        directory: Path,
        *,
        suffix: str = ".csv",
        max_count: int = DEFAULT_MAX_COUNT,
        max_bytes: int = DEFAULT_MAX_BYTES,
    ) -> None:
        if max_count < 1 or max_bytes < 1:
            raise ValueError("snapshot bounds must be positive")
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.suffix = suffix
        self.max_count = max_count
        self.max_bytes = max_bytes
        self.kept: list[Snapshot] = []
        self.thinned = 0
        self._stamp: str | None = None
        self._made = 0
        self._look_cost = 0.0
        self._looked_at: float | None = None

    def offer(
        self, sandbox: Sandbox, path: str, cap: int, step: int, elapsed: float, *, force: bool
    ) -> None:
        """Keep the file at `path` in the sandbox if it changed since the last look. A file
        unchanged by its stamp costs one stat; one that cannot be copied (absent, special,
        over `cap`) is left to the final grading, which reports why. Without `force`, the
        look is skipped while looks would take more than MAX_OVERHEAD of the time."""
        now = time.monotonic()
        spacing = self._look_cost / MAX_OVERHEAD
        if not force and self._looked_at is not None and now - self._looked_at < spacing:
            return
        try:
            self._look(sandbox, path, cap, step, elapsed)
        finally:
            self._looked_at = time.monotonic()
            self._look_cost = self._looked_at - now

    def _look(self, sandbox: Sandbox, path: str, cap: int, step: int, elapsed: float) -> None:
        info = sandbox.stat_file(path)
        if info is None or info.kind != "file":
            self._stamp = None
            return
        if info.stamp is not None and info.stamp == self._stamp:
            return
        incoming = self.directory / f".incoming{self.suffix}"
        try:
            copied = copy_out(sandbox, path, incoming, cap)
        except FileToolError:
            copied = False
        if not copied:
            incoming.unlink(missing_ok=True)
            return
        self._stamp = info.stamp
        self.offer_file(incoming, step, elapsed, move=True)

    def offer_file(
        self, source: Path, step: int, elapsed: float, *, move: bool = False, final: bool = False
    ) -> None:
        """Keep a host copy of the submission (the graded file, with `final`) if its content
        is new; the file is moved in with `move`, else copied."""
        digest, size = _sha256(source)
        last = self.kept[-1] if self.kept else None
        if last is not None and last.sha256 == digest:
            if move:
                source.unlink(missing_ok=True)
            if final and not last.final:
                self.kept[-1] = Snapshot(**{**asdict(last), "final": True})
                self._write_index()
            return
        self._made += 1
        name = f"snapshot-{self._made:04d}{self.suffix}"
        target = self.directory / name
        if move:
            os.replace(source, target)
        else:
            _copy(source, target)
        self.kept.append(Snapshot(name, step, round(elapsed, 3), digest, size, final))
        self._thin()
        self._write_index()

    def to_dict(self) -> dict[str, Any]:
        """What the final `info` and the run directory carry."""
        return {
            "dir": str(self.directory),
            "kept": [asdict(s) for s in self.kept],
            "thinned": self.thinned,
            "max_count": self.max_count,
            "max_bytes": self.max_bytes,
        }

    @property
    def made(self) -> int:
        """Copies made so far (kept or thinned): the next copy's number follows it."""
        return self._made

    def adopt(
        self, kept: list[Snapshot], thinned: int, made: int, content: Callable[[Snapshot], Path]
    ) -> None:
        """Take over an earlier segment's copies (a resumed episode's): each copied in from
        `content(snapshot)`, a host file already checked against its sha256."""
        for snapshot in kept:
            if Path(snapshot.file).name != snapshot.file or snapshot.file.startswith("."):
                raise ValueError(f"not a snapshot's file name: {snapshot.file!r}")
            _copy(content(snapshot), self.directory / snapshot.file)
        self.kept = list(kept)
        self.thinned = thinned
        self._made = max(made, len(kept))
        self._write_index()

    def _thin(self) -> None:
        while len(self.kept) > 1 and (
            len(self.kept) > self.max_count or sum(s.bytes for s in self.kept) > self.max_bytes
        ):
            gaps = [
                (self.kept[i + 1].elapsed - self.kept[i].elapsed, i)
                for i in range(len(self.kept) - 1)
            ]
            _, index = min(gaps)
            dropped = self.kept.pop(index)
            (self.directory / dropped.file).unlink(missing_ok=True)
            self.thinned += 1

    def _write_index(self) -> None:
        tmp = self.directory / f".{INDEX_FILE}.tmp"
        tmp.write_text(json.dumps(self.to_dict(), indent=2))
        os.replace(tmp, self.directory / INDEX_FILE)


def elapsed_since(started: float | None) -> float:
    """Seconds of episode time since `started` (a `time.monotonic()` reading)."""
    return 0.0 if started is None else time.monotonic() - started


def _sha256(path: Path) -> tuple[str, int]:
    digest, size = hashlib.sha256(), 0
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
            size += len(chunk)
    return digest.hexdigest(), size


def _copy(source: Path, target: Path) -> None:
    with open(source, "rb") as src, open(target, "wb") as dst:
        while chunk := src.read(_CHUNK):
            dst.write(chunk)
