"""A run's figures as MLE-bench's leaderboard computes them: mean ± standard error over seeds.

Per competition, each figure is the mean over its seeds of the per-episode value (1/0 for a
rate) with the standard error of that mean (sample standard deviation, ddof=1, / sqrt(n);
none for a single seed).

Per split (Low = lite, Medium, High, All = the three; dev and demo on rows of their own) and
for the whole run, each counted seed first gets the mean over the split's competitions, and
the figure is the mean ± standard error of those per-seed values. Which seeds count is the
rule (MLE-bench's PR 104, "Unify aggregation method"):

- complete seeds (the default, the leaderboard's rule): a seed counts only if every
  competition of the row has a graded episode for it; the others are dropped, with reasons;
- pad incomplete: every seed the run asked for counts, and an episode that failed, is still
  running or never ran counts as 0 (the leaderboard marks such entries as padded).

Without the rule a run whose hard episodes crashed would read better than a complete one.

The normalised score of an episode is the default reward: (score - sample) / (gold - sample)
floored at 0, and 0 without a valid submission.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from mle_gym.analysis.cost import run_cost
from mle_gym.analysis.splits import scopes
from mle_gym.runs.run import Run

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

COMPLETE_SEEDS = "complete-seeds"
PAD_INCOMPLETE = "pad-incomplete"
RULES = {
    COMPLETE_SEEDS: "complete seeds only (MLE-bench's leaderboard rule): a seed counts for a "
    "row only if every competition of the row has a graded episode for it",
    PAD_INCOMPLETE: "incomplete seeds padded (--pad-incomplete): every seed asked for counts; "
    "failed, running and missing episodes count as 0",
}


@dataclass(frozen=True)
class Estimate:
    mean: float
    sem: float | None
    n: int

    def to_dict(self) -> dict[str, Any]:
        return {"mean": self.mean, "sem": self.sem, "n": self.n}


@dataclass(frozen=True)
class SeedAccount:
    """Which seeds a row counted as they were, padded, or dropped, and why: for each seed
    not complete, each competition without a graded episode and its state."""

    complete: tuple[int, ...]
    padded: dict[int, dict[str, str]]
    dropped: dict[int, dict[str, str]]

    def to_dict(self) -> dict[str, Any]:
        return {
            "complete": list(self.complete),
            "padded": {str(s): why for s, why in self.padded.items()},
            "dropped": {str(s): why for s, why in self.dropped.items()},
        }


@dataclass
class Row:
    """The figures of one competition, or of a split, All, or the whole run ("overall")."""

    name: str
    seeds: int
    figures: dict[str, Estimate] = field(default_factory=dict)
    #: The run's competitions in the row, and how many the split has (rows over splits).
    competitions: tuple[str, ...] = ()
    split_size: int | None = None
    account: SeedAccount | None = None
    #: Episodes of a competition row that are not graded, by state.
    not_graded: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "seeds": self.seeds,
            **{k: v.to_dict() for k, v in self.figures.items()},
        }
        if self.account is not None:
            data.update(
                competitions=list(self.competitions),
                split_size=self.split_size,
                seed_accounting=self.account.to_dict(),
            )
        else:
            data["not_graded"] = self.not_graded
        return data


@dataclass
class RunSummary:
    rule: str
    competitions: list[Row]
    splits: list[Row]
    episodes: dict[str, int]
    #: Model calls, tokens, cost and wall time per episode, competition and run.
    cost: dict[str, Any] = field(default_factory=dict)

    @property
    def overall(self) -> Row:
        return self.splits[-1]

    def to_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "rule_text": RULES[self.rule],
            "episodes": self.episodes,
            "competitions": {row.name: row.to_dict() for row in self.competitions},
            "splits": {row.name: row.to_dict() for row in self.splits[:-1]},
            "overall": self.overall.to_dict(),
            "cost": self.cost,
        }


def episode_values(report: dict[str, Any] | None) -> dict[str, float]:
    """One episode as numbers: 1/0 for each rate, and its normalised score (0 when it was
    not graded, or without a valid submission)."""
    report = report or {}
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


def competition_values(run: Run, competition: str, rule: str) -> dict[int, dict[str, float]]:
    """Seed -> values of one competition's counted episodes: the graded ones, or with
    `pad-incomplete` every seed asked for (0 where not graded)."""
    out = {}
    for seed in run.seeds:
        record = run.record(competition, seed)
        if record is not None and run.graded(record):
            out[seed] = episode_values(record.report)
        elif rule == PAD_INCOMPLETE:
            out[seed] = episode_values(None)
    return out


def seed_account(run: Run, members: tuple[str, ...], rule: str) -> SeedAccount:
    complete, incomplete = [], {}
    for seed in run.seeds:
        why = {c: run.state(c, seed) for c in members if run.state(c, seed) != "graded"}
        if why:
            incomplete[seed] = why
        else:
            complete.append(seed)
    if rule == PAD_INCOMPLETE:
        return SeedAccount(tuple(complete), incomplete, {})
    return SeedAccount(tuple(complete), {}, incomplete)


def counted_seeds(account: SeedAccount) -> list[int]:
    return sorted([*account.complete, *account.padded])


def aggregate(run: Run, rule: str = COMPLETE_SEEDS) -> RunSummary:
    if rule not in RULES:
        raise ValueError(f"unknown rule {rule!r}; one of {', '.join(RULES)}")
    values = {c: competition_values(run, c, rule) for c in run.competitions}
    rows = []
    for name in run.competitions:
        seeds = values[name]
        not_graded: dict[str, int] = {}
        for seed in run.seeds:
            state = run.state(name, seed)
            if state != "graded":
                not_graded[state] = not_graded.get(state, 0) + 1
        figures = (
            {key: estimate([v[key] for v in seeds.values()]) for key, _ in FIGURES} if seeds else {}
        )
        rows.append(Row(name, len(seeds), figures, not_graded=not_graded))

    split_rows = []
    for scope in scopes(run.competitions):
        account = seed_account(run, scope.competitions, rule)
        counted = counted_seeds(account)
        per_seed = [
            {
                key: sum(values[c][seed][key] for c in scope.competitions) / len(scope.competitions)
                for key, _ in FIGURES
            }
            for seed in counted
        ]
        figures = (
            {key: estimate([v[key] for v in per_seed]) for key, _ in FIGURES} if per_seed else {}
        )
        split_rows.append(
            Row(scope.name, len(counted), figures, scope.competitions, scope.split_size, account)
        )
    counts: dict[str, int] = {}
    for record in run.records:
        state = "done" if run.graded(record) else run.state(record.competition_id, record.seed)
        counts[state] = counts.get(state, 0) + 1
    asked = len(run.competitions) * len(run.seeds)
    episodes = {
        "done": counts.pop("done", 0),
        "failed": counts.pop("failed", 0),
        "running": counts.pop("running", 0),
        **counts,
        "missing": asked - len(run.records),
        "competitions": len(rows),
    }
    return RunSummary(rule, rows, split_rows, episodes, run_cost(run))
