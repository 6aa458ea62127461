"""A run's figures as MLE-bench reports them: rates and scores, mean ± standard error over seeds.

Per competition, each figure is the mean over its seeds of the per-episode value (1/0 for a
rate) with the standard error of that mean (sample standard deviation / sqrt(n); none for a
single seed). Overall, each seed first gets the mean over the competitions it has an episode
of, and the figure is the mean ± standard error of those per-seed values, as in MLE-bench's
paper (e.g. "any medal: 16.9 ± 1.1 %" over seeds).

The normalised score of an episode is the default reward: (score - sample) / (gold - sample)
floored at 0, and 0 without a valid submission. Only graded ("done") episodes count, those
ended by an error of their policy or env among them (graded on the submission present then);
failed episodes (the infrastructure broke before the agent had a step, the worker was
killed, or the run was stopped) are counted apart and are run again by the next `mle-gym run`.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from mle_gym.batch.store import EpisodeRecord

#: (key, label) of each figure, in report order.
FIGURES = (
    ("valid_submission", "valid submission"),
    ("above_median", "above median"),
    ("bronze_medal", "bronze"),
    ("silver_medal", "silver"),
    ("gold_medal", "gold"),
    ("any_medal", "any medal"),
    ("normalized_score", "normalised score"),
)
RATES = tuple(key for key, _ in FIGURES if key != "normalized_score")


@dataclass(frozen=True)
class Estimate:
    mean: float
    sem: float | None
    n: int

    def to_dict(self) -> dict[str, Any]:
        return {"mean": self.mean, "sem": self.sem, "n": self.n}


@dataclass
class Row:
    """The figures of one competition, or of the whole run ("overall")."""

    name: str
    seeds: int
    figures: dict[str, Estimate] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"seeds": self.seeds, **{k: v.to_dict() for k, v in self.figures.items()}}


@dataclass
class RunSummary:
    competitions: list[Row]
    overall: Row
    episodes: dict[str, int]

    def to_dict(self) -> dict[str, Any]:
        return {
            "episodes": self.episodes,
            "competitions": {row.name: row.to_dict() for row in self.competitions},
            "overall": self.overall.to_dict(),
        }


def episode_values(report: dict[str, Any]) -> dict[str, float]:
    """One graded episode as numbers: 1/0 for each rate, and its normalised score."""
    values = {key: float(bool(report.get(key))) for key in RATES}
    score = report.get("normalized_score")
    values["normalized_score"] = (
        max(0.0, score) if report.get("valid_submission") and score is not None else 0.0
    )
    return values


def estimate(values: list[float]) -> Estimate:
    n = len(values)
    mean = sum(values) / n
    if n < 2:
        return Estimate(mean, None, n)
    variance = sum((v - mean) ** 2 for v in values) / (n - 1)
    return Estimate(mean, math.sqrt(variance / n), n)


def aggregate(records: Iterable[EpisodeRecord]) -> RunSummary:
    records = list(records)
    counts = defaultdict(int)
    for record in records:
        counts[record.state] += 1
    graded = [r for r in records if r.state == "done" and r.report]
    by_competition: dict[str, dict[int, dict[str, float]]] = defaultdict(dict)
    for record in graded:
        by_competition[record.competition_id][record.seed] = episode_values(record.report)

    rows = []
    for name, seeds in sorted(by_competition.items()):
        rows.append(
            Row(
                name,
                len(seeds),
                {key: estimate([values[key] for values in seeds.values()]) for key, _ in FIGURES},
            )
        )

    by_seed: dict[int, list[dict[str, float]]] = defaultdict(list)
    for seeds in by_competition.values():
        for seed, values in seeds.items():
            by_seed[seed].append(values)
    overall = Row("overall", len(by_seed))
    if by_seed:
        overall.figures = {
            key: estimate(
                [
                    sum(v[key] for v in episodes) / len(episodes)
                    for _, episodes in sorted(by_seed.items())
                ]
            )
            for key, _ in FIGURES
        }
    episodes = {
        "done": counts["done"],
        "failed": counts["failed"],
        "running": counts["running"],
        "competitions": len(rows),
    }
    return RunSummary(rows, overall, episodes)
