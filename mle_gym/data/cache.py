"""Where prepared competitions live: `$MLE_GYM_HOME/<id>/{raw,public,private}`."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

MARKER = "prepared.json"


class NotPrepared(RuntimeError):
    """The competition's data is not in the cache yet; the message says how to prepare it."""


def cache_root() -> Path:
    """`MLE_GYM_HOME`, or `~/.cache/mle-gym`."""
    configured = os.environ.get("MLE_GYM_HOME")
    return Path(configured).expanduser() if configured else Path.home() / ".cache" / "mle-gym"


@dataclass(frozen=True)
class CompetitionDirs:
    """The cache directories of one competition."""

    root: Path

    @classmethod
    def of(cls, competition_id: str, root: Path | None = None) -> CompetitionDirs:
        return cls((root or cache_root()) / competition_id)

    @property
    def raw(self) -> Path:
        return self.root / "raw"

    @property
    def public(self) -> Path:
        return self.root / "public"

    @property
    def private(self) -> Path:
        return self.root / "private"

    @property
    def download(self) -> Path:
        """Where a Kaggle download lands (and resumes) until it is unpacked into raw/."""
        return self.root / "download"

    @property
    def marker(self) -> Path:
        return self.root / MARKER

    def is_prepared(self) -> bool:
        """True only once a preparation finished: the marker is written last."""
        return self.marker.is_file() and self.public.is_dir() and self.private.is_dir()

    def preparation_record(self) -> dict:
        return json.loads(self.marker.read_text()) if self.marker.is_file() else {}
