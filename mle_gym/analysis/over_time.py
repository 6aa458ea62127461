"""Score over time: a run read as if each episode had stopped at an earlier elapsed time.

MLE-bench's scaling figure grades hourly snapshots of one long run; RD-Agent re-scores a run
as if it stopped at N hours. Each batch episode keeps its submission snapshots graded after
the episode (`snapshots.json`: elapsed seconds and report of each); at time t an episode
counts with the report of its last snapshot at or before t, and with no valid submission if
it had none yet. An episode without snapshots.json (a run from before snapshots) counts
with its final report at every time: the figures say how many did (`unknown_times`).

Pure functions over the run directory's records; the CLI (`report --over-time`, `--at`)
and the HTML report only render what they return.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from mle_gym.analysis.aggregate import COMPLETE_SEEDS, aggregate
from mle_gym.analysis.render import shown_splits
from mle_gym.runs.jsonfile import read_json
from mle_gym.runs.layout import GRADED_SNAPSHOTS_FILE
from mle_gym.runs.run import Run
from mle_gym.runs.store import EpisodeRecord

DEFAULT_HOURS = (1.0, 2.0, 4.0, 8.0, 12.0, 24.0)
#: The env's default wall-clock budget, for runs whose settings do not name one.
DEFAULT_BUDGET = 24 * 3600.0
_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "": 3600.0}
#: The figures over time, as MLE-bench's scaling figure shows them.
OVER_TIME_FIGURES = ("any_medal", "normalized_score")


def parse_duration(text: str) -> float:
    """Seconds in `12h`, `90m`, `3600s` or `1.5` (hours, MLE-bench's unit)."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smh]?)\s*", text.lower())
    if match is None:
        raise ValueError(f"not a duration: {text!r} (write e.g. 12h, 90m, 3600s)")
    seconds = float(match.group(1)) * _UNITS[match.group(2)]
    if seconds <= 0:
        raise ValueError(f"a duration must be positive, got {text!r}")
    return seconds


def time_points(seconds: Sequence[float] | None, budget: float) -> list[float]:
    """The times to report: those given (default 1, 2, 4, 8, 12, 24 h) up to the budget,
    and the budget itself when the defaults pass it."""
    wanted = sorted(set(seconds or [h * 3600.0 for h in DEFAULT_HOURS]))
    kept = [t for t in wanted if t <= budget]
    if seconds is None and (not kept or kept[-1] < budget):
        kept.append(budget)
    return kept


def run_budget(root: Path) -> float:
    """The run's wall-clock budget per episode, from batch.json's env settings."""
    batch = read_json(Path(root) / "batch.json") or {}
    env_kwargs = (batch.get("settings") or {}).get("env_kwargs") or {}
    return float(env_kwargs.get("time_limit") or DEFAULT_BUDGET)


def report_at(graded: Sequence[dict[str, Any]], seconds: float) -> dict[str, Any]:
    """The report an episode had at `seconds`: its last snapshot's at or before then."""
    before = [s for s in graded if s["elapsed"] <= seconds]
    if before:
        return dict(before[-1]["report"])
    return {
        "valid_submission": False,
        "submission_exists": False,
        "any_medal": False,
        "gold_medal": False,
        "silver_medal": False,
        "bronze_medal": False,
        "above_median": False,
        "score": None,
        "normalized_score": None,
        "error": f"no submission by {seconds:g} s",
    }


def records_at(records: Iterable[EpisodeRecord], root: Path, seconds: float) -> list[EpisodeRecord]:
    """The run's records as if every episode had stopped at `seconds` (`report --at`);
    episodes not graded stay as they are."""
    timed = []
    for record in records:
        graded = _graded_snapshots(root, record)
        if record.state == "done" and record.report and graded is not None:
            record = replace(record, report=report_at(graded, seconds))
        timed.append(record)
    return timed


@dataclass(frozen=True)
class Point:
    """One scope (a split, or "all") at one time: each figure's mean ± sem over seeds."""

    seconds: float
    scope: str
    seeds: int
    episodes: int
    figures: dict[str, tuple[float, float | None]]
    unknown_times: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "seconds": self.seconds,
            "hours": self.seconds / 3600.0,
            "scope": self.scope,
            "seeds": self.seeds,
            "episodes": self.episodes,
            **{k: {"mean": m, "sem": s} for k, (m, s) in self.figures.items()},
            "unknown_times": self.unknown_times,
        }


def over_time(run: Run, times: Sequence[float], rule: str = COMPLETE_SEEDS) -> list[Point]:
    """Per time and per row of the report (each split of the run, and overall where it
    differs), the any-medal rate and the mean normalised score as if every episode had
    stopped then: the report's own aggregation (`aggregate`: its seed rule, per-seed means
    over the row's competitions, mean ± standard error over seeds) of `records_at`."""
    done = [r for r in run.records if r.state == "done" and r.report]
    unknown = sum(_graded_snapshots(run.root, r) is None for r in done)
    points = []
    for seconds in times:
        timed = replace(run, records=tuple(records_at(run.records, run.root, seconds)))
        for row in shown_splits(aggregate(timed, rule)):
            figures = {
                key: (row.figures[key].mean, row.figures[key].sem)
                if key in row.figures
                else (math.nan, None)
                for key in OVER_TIME_FIGURES
            }
            episodes = len(row.competitions) * row.seeds
            points.append(Point(seconds, row.name, row.seeds, episodes, figures, unknown))
    return points


def _graded_snapshots(root: Path, record: EpisodeRecord) -> list[dict[str, Any]] | None:
    path = Path(root) / "episodes" / record.competition_id / f"seed-{record.seed}"
    graded = path / GRADED_SNAPSHOTS_FILE
    if not graded.is_file():
        return None
    entries = json.loads(graded.read_text())
    return sorted(entries, key=lambda s: s["elapsed"])
