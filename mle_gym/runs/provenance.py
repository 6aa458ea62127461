"""Provenance records of a run, as files: one entry per invocation in the run's
provenance.json (a resume may run on another machine or version), and one record per
episode in its folder. What goes into them is collected by the batch that runs the
episodes (mle_gym.batch.provenance); analysis reads them here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mle_gym.runs.jsonfile import read_json, write_json
from mle_gym.runs.layout import PROVENANCE_FILE


def add_invocation(root: Path, entry: dict[str, Any]) -> None:
    """Append one invocation's record to the run's provenance.json."""
    path = Path(root) / PROVENANCE_FILE
    kept = read_json(path) or {"invocations": []}
    kept["invocations"].append(entry)
    write_json(path, kept)


def read_invocations(root: Path) -> list[dict[str, Any]]:
    """Every invocation's record, oldest first (none for a run without provenance)."""
    return (read_json(Path(root) / PROVENANCE_FILE) or {}).get("invocations", [])


def write_episode_provenance(directory: Path, record: dict[str, Any]) -> None:
    write_json(Path(directory) / PROVENANCE_FILE, record)


def read_episode_provenance(directory: Path) -> dict[str, Any] | None:
    """An episode's record, or None when it has none (a run made before they were kept)."""
    return read_json(Path(directory) / PROVENANCE_FILE)
