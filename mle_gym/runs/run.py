"""A run directory as a reader sees it: the episodes asked for, and what became of each."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from mle_gym.runs.jsonfile import read_json
from mle_gym.runs.layout import BATCH_FILE
from mle_gym.runs.store import EpisodeRecord, RunStore

#: What an episode without a grading report is, besides "failed" and "running".
MISSING = "missing"


@dataclass(frozen=True)
class Run:
    """The competitions and seeds a run asked for (batch.json), and its episode records."""

    root: Path
    competitions: tuple[str, ...]
    seeds: tuple[int, ...]
    records: tuple[EpisodeRecord, ...]
    settings: dict[str, Any]

    def graded(self, record: EpisodeRecord) -> bool:
        return record.state == "done" and bool(record.report)

    def state(self, competition: str, seed: int) -> str:
        """`graded`, or why not: the episode's state (failed, running, ...) or "missing"."""
        record = self._by_key.get((competition, seed))
        if record is None:
            return MISSING
        if self.graded(record):
            return "graded"
        return "no report" if record.state == "done" else record.state

    def record(self, competition: str, seed: int) -> EpisodeRecord | None:
        return self._by_key.get((competition, seed))

    def episode_dir(self, record: EpisodeRecord) -> Path:
        """The folder holding `record`'s files."""
        return RunStore(self.root).episodes / record.key

    @cached_property
    def _by_key(self) -> dict[tuple[str, int], EpisodeRecord]:
        return {(r.competition_id, r.seed): r for r in self.records}


def read_run(root: Path) -> Run:
    """The run in `root`; the seeds and competitions of batch.json, plus any episode found."""
    store = RunStore(root)
    if not store.episodes.is_dir():
        raise FileNotFoundError(f"{root} is not a batch run directory (no episodes/)")
    records = tuple(store.records())
    batch = read_json(Path(root) / BATCH_FILE) or {}
    competitions = sorted(set(batch.get("competitions", ())) | {r.competition_id for r in records})
    seeds = sorted(set(batch.get("seeds", ())) | {r.seed for r in records})
    return Run(Path(root), tuple(competitions), tuple(seeds), records, batch.get("settings", {}))
