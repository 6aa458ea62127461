"""MLE-bench's published figures, as data, and where mle_gym's task deliberately differs.

published_results.csv holds the paper's Table 2 (any-medal %, mean ± SEM over seeds, per
split) and MLE-bench's leaderboard at two of its commits (783b15a, kept as history, and
507f92e, the latest), each row with its source URL and date, the time budget in hours, whether
incomplete seeds were padded, whether the agent saw test-set feedback, and its section: the
main table, or the additional submissions that 507f92e sets apart for having seen test-set
feedback. task_differences.csv lists the competitions whose public files differ
from MLE-bench's on purpose (answer leaks fixed, files added; docs/fidelity.md has the full
rows), so that a medal there is not compared blindly.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
#: Our row name -> the published column prefix.
COLUMNS = {"Low": "low", "Medium": "medium", "High": "high", "All": "all"}
#: The leaderboard versions carried (MLE-bench's commit), newest first.
LEADERBOARDS = ("507f92e", "783b15a")
LATEST = LEADERBOARDS[0]
PAPER = "paper-table-2"
#: What MLE-bench says of its additional submissions, in our words.
ADDITIONAL_NOTE = (
    "additional submissions: MLE-bench lists these apart from its main table because the "
    "agent saw signals derived from the test set during its rollouts"
)
#: Leaderboard version -> a note on its state when that version is shown.
STATE_NOTES = {
    "507f92e": "MLE-bench paused new leaderboard submissions on 2026-04-24 (commit 507f92e): "
    "this is its last published board",
    "783b15a": "leaderboard 783b15a is an older board kept as history; 507f92e is the latest",
}


@dataclass(frozen=True)
class PublishedRow:
    table: str
    agent: str
    llm: str
    #: Row name (Low, Medium, High, All) -> (any-medal %, its SEM in points).
    any_medal: dict[str, tuple[float, float]]
    hours: float
    padded: bool
    test_feedback: bool
    date: str
    source: str
    section: str = "main"

    def to_dict(self) -> dict[str, Any]:
        return {
            "table": self.table,
            "agent": self.agent,
            "llm": self.llm,
            "any_medal": {k: {"mean": m, "sem": s} for k, (m, s) in self.any_medal.items()},
            "hours": self.hours,
            "padded": self.padded,
            "test_feedback": self.test_feedback,
            "date": self.date,
            "source": self.source,
            "section": self.section,
        }


def published_rows(path: Path = HERE / "published_results.csv") -> list[PublishedRow]:
    with open(path, newline="") as handle:
        return [
            PublishedRow(
                table=r["table"],
                agent=r["agent"],
                llm=r["llm"],
                any_medal={
                    name: (float(r[col]), float(r[f"{col}_sem"])) for name, col in COLUMNS.items()
                },
                hours=float(r["hours"]),
                padded=r["padded"] == "yes",
                test_feedback=r["test_feedback"] == "yes",
                date=r["date"],
                source=r["source"],
                section=r["section"],
            )
            for r in csv.DictReader(handle)
        ]


def board_rows(leaderboard: str = LATEST) -> list[PublishedRow]:
    """The paper's rows and one leaderboard version's, as they are compared with a run."""
    if leaderboard not in LEADERBOARDS:
        raise ValueError(
            f"no published leaderboard {leaderboard!r}: choose one of {', '.join(LEADERBOARDS)}"
        )
    wanted = {PAPER, f"leaderboard-{leaderboard}"}
    return [r for r in published_rows() if r.table in wanted]


def task_differences(path: Path = HERE / "task_differences.csv") -> dict[str, dict[str, str]]:
    """Competition id -> {kind, difference, source} where our task differs on purpose."""
    with open(path, newline="") as handle:
        return {r["competition_id"]: r for r in csv.DictReader(handle)}


def run_hours(run: Any) -> float | None:
    """The run's wall-clock budget per episode in hours: the time limit (seconds) its last
    invocation recorded, else the one its settings name; None when neither says."""
    from mle_gym.analysis.provenance import last_invocation

    recorded = (last_invocation(run) or {}).get("env", {})
    limit = recorded.get("time_limit", (run.settings.get("env_kwargs") or {}).get("time_limit"))
    return None if limit is None else float(limit) / 3600


def comparable(rows: list[PublishedRow], hours: float | None) -> tuple[list[PublishedRow], str]:
    """The rows with the run's time budget, and a note; all rows when none has it."""
    if hours is not None:
        same = [r for r in rows if abs(r.hours - hours) < 1e-9]
        if same:
            return same, f"published rows with the run's budget of {hours:g} h per episode"
        return rows, (
            f"no published row has the run's budget of {hours:g} h per episode: every row "
            "shown, none directly comparable"
        )
    return rows, "the run has no time limit: every published row shown, none directly comparable"


def compare_published(run: Any, summary: Any, leaderboard: str = LATEST) -> dict[str, Any]:
    """The run's any-medal rate per MLE-bench row beside the published rows of its time
    budget (the paper's and one leaderboard version's; additional submissions apart), with
    notes on what makes a row not comparable: part of a split only, padded seeds,
    competitions whose task differs on purpose."""
    hours = run_hours(run)
    rows, note = comparable(board_rows(leaderboard), hours)
    notes = [note, STATE_NOTES[leaderboard]]
    ours = {}
    for row in summary.splits:
        if row.name not in COLUMNS:
            continue
        figure = row.figures.get("any_medal")
        ours[row.name] = {
            "mean": None if figure is None else 100 * figure.mean,
            "sem": None if figure is None or figure.sem is None else 100 * figure.sem,
            "seeds": row.seeds,
            "competitions": len(row.competitions),
            "split_size": row.split_size,
        }
        if len(row.competitions) < (row.split_size or 0):
            notes.append(
                f"{row.name}: the run has {len(row.competitions)} of the split's "
                f"{row.split_size} competitions, so its figure is not the published one's"
            )
    if not ours:
        notes.append("the run has no competition of MLE-bench's Low/Medium/High splits")
    differences = task_differences()
    flagged = {c: differences[c] for c in run.competitions if c in differences}
    for competition, why in flagged.items():
        notes.append(f"{competition}: {why['kind']}: {why['difference']} ({why['source']})")
    return {
        "hours": hours,
        "rule": summary.rule,
        "run": ours,
        "leaderboard": leaderboard,
        "published": [r.to_dict() for r in rows if r.section == "main"],
        "additional": [r.to_dict() for r in rows if r.section != "main"],
        "additional_note": ADDITIONAL_NOTE,
        "task_differences": flagged,
        "notes": notes,
    }
