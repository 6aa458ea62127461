"""Compares prepared files with MLE-bench's md5 sums."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from mle_gym.competitions.spec import Checksums


def md5_of(path: Path) -> str:
    digest = hashlib.md5()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@dataclass(frozen=True)
class Mismatch:
    """A prepared file whose md5 differs from MLE-bench's (actual None: file missing)."""

    file: str
    expected: str
    actual: str | None

    def __str__(self) -> str:
        found = "missing" if self.actual is None else f"md5 {self.actual}"
        return f"{self.file}: expected md5 {self.expected}, {found}"


def verify(public: Path, private: Path, expected: Checksums) -> list[Mismatch]:
    """Every file named in `expected` that is missing or differs."""
    mismatches = []
    for side, folder, sums in (
        ("public", public, expected.public),
        ("private", private, expected.private),
    ):
        for name, md5 in sorted(sums.items()):
            path = folder / name
            actual = md5_of(path) if path.is_file() else None
            if actual != md5:
                mismatches.append(Mismatch(f"{side}/{name}", md5, actual))
    return mismatches
