"""A run's report as one library call: `build_report` reads run directories and computes
every figure `mle-gym report` shows into a `RunReport`; `report_render` turns that into a
table, JSON, CSV, HTML or MLE-bench's format.

The CLI only turns its options into this call and picks a renderer, so a library user (a
notebook, a sweep script) gets the same figures without it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from mle_gym.analysis.aggregate import COMPLETE_SEEDS, RunSummary, aggregate
from mle_gym.analysis.compare_runs import Column
from mle_gym.analysis.integrity import check_one_variant, run_integrity
from mle_gym.analysis.over_time import Point
from mle_gym.analysis.provenance import provenance_summary
from mle_gym.analysis.published import LATEST
from mle_gym.runs.run import Run, read_run
from mle_gym.runs.store import EpisodeRecord


@dataclass(frozen=True)
class RunReport:
    """What `mle-gym report` shows: each run's MLE-bench summary (several only side by
    side), and for the first run its provenance and integrity, then the figures asked for
    (None when not asked)."""

    #: Each run with its summary, in the order named.
    columns: tuple[Column, ...]
    #: Who ran the first run, how, and with which models (`provenance_summary`).
    provenance: dict[str, Any]
    #: Its integrity records: task variants, audits, warnings (`run_integrity`).
    integrity: dict[str, Any]
    #: The published leaderboard version compared against (HTML compares by default).
    leaderboard: str = LATEST
    #: pass@k and best-of-k per competition and split (`passk.pass_table`).
    pass_at_k: dict[str, Any] | None = None
    #: Any-medal rates beside MLE-bench's published rows (`published.compare_published`).
    published: dict[str, Any] | None = None
    #: The same agent run by MLE-bench's harness, graded by both sides (`parity.parity`).
    mlebench_parity: dict[str, Any] | None = None
    #: Score over time per split row (`over_time.over_time`).
    points: tuple[Point, ...] | None = None
    #: One row per episode (state, score, medal).
    episode_rows: tuple[dict[str, Any], ...] | None = None
    #: What a regrade just changed, when the report follows one (`regrade.regrade_run`).
    regrade: dict[str, Any] | None = None

    @property
    def run(self) -> Run:
        return self.columns[0].run

    @property
    def summary(self) -> RunSummary:
        return self.columns[0].summary

    @property
    def side_by_side(self) -> bool:
        return len(self.columns) > 1


def build_report(
    run_dirs: str | os.PathLike | Sequence[str | os.PathLike],
    *,
    rule: str = COMPLETE_SEEDS,
    at: float | None = None,
    pass_k: Sequence[int] | None = None,
    published: bool = False,
    leaderboard: str = LATEST,
    mlebench_run: str | os.PathLike | None = None,
    over_time: bool = False,
    times: Sequence[float] | None = None,
    episodes: bool = False,
) -> RunReport:
    """The report of one run, or of several side by side (their summaries only).

    `rule`: MLE-bench's complete-seeds rule, or padding (`aggregate.RULES`). `at`: every
    figure as if each episode had stopped after that many seconds. `pass_k`: the k of
    pass@k. `published`: compare with the `leaderboard` version of MLE-bench's published
    rows. `mlebench_run`: a parity run made by MLE-bench's harness (its run group folder or
    submissions JSONL). `over_time`: score over time at `times` (seconds; default 1, 2, 4,
    8, 12 and 24 h within the run's budget), up to `at`. `episodes`: one row per episode.
    """
    roots = (
        [Path(run_dirs)] if isinstance(run_dirs, str | os.PathLike) else [Path(p) for p in run_dirs]
    )
    if not roots:
        raise ValueError("name at least one run directory")
    if len(roots) > 1:
        asked = {  # the options that read one run
            "at": at is not None,
            "pass_k": bool(pass_k),
            "published": published,
            "mlebench_run": mlebench_run is not None,
            "over_time": over_time,
            "episodes": episodes,
        }
        given = [name for name, value in asked.items() if value]
        if given:
            raise ValueError(f"{', '.join(given)}: read one run; name one run directory for it")
        runs = [read_run(root) for root in roots]
        check_one_variant(runs)
        columns = tuple(Column(run, aggregate(run, rule)) for run in runs)
        first = columns[0].run
        return RunReport(columns, provenance_summary(first), run_integrity(first), leaderboard)
    run = read_run(roots[0])
    check_one_variant([run], published)
    if at is not None:
        from mle_gym.analysis.over_time import records_at

        run = replace(run, records=tuple(records_at(run.records, run.root, at)))
    summary = aggregate(run, rule)
    report = RunReport(
        (Column(run, summary),), provenance_summary(run), run_integrity(run), leaderboard
    )
    if pass_k:
        from mle_gym.analysis.passk import pass_table

        report = replace(report, pass_at_k=pass_table(run, summary, list(pass_k)))
    if mlebench_run is not None:
        from mle_gym.analysis.mlebench_format import private_dir
        from mle_gym.analysis.parity import parity, read_mlebench_run

        theirs = read_mlebench_run(Path(mlebench_run))
        report = replace(report, mlebench_parity=parity(run, theirs, private_dir))
    if published:
        from mle_gym.analysis.published import compare_published

        report = replace(report, published=compare_published(run, summary, leaderboard))
    if over_time:
        report = replace(report, points=_points(run, rule, times, at))
    if episodes:
        report = replace(report, episode_rows=tuple(map(episode_row, run.records)))
    return report


def _points(
    run: Run, rule: str, times: Sequence[float] | None, at: float | None
) -> tuple[Point, ...]:
    from mle_gym.analysis.over_time import over_time, run_budget, time_points

    chosen = time_points(times, run_budget(run.root))
    if at is not None:  # the run already stopped then
        chosen = [t for t in chosen if t <= at]
    return tuple(over_time(run, chosen, rule))


def episode_row(record: EpisodeRecord) -> dict[str, Any]:
    """One episode as the report's JSON lists it: its state and grade."""
    grade = record.grade
    keys = ("score", "valid_submission", "above_median", "any_medal", "normalized_score")
    return {
        "competition_id": record.competition_id,
        "seed": record.seed,
        "state": record.state,
        "attempt": record.attempt,
        **{key: grade[key] for key in keys},
        "medal": (grade["medal"] or "none") if record.report else None,
        "error": record.error or grade["error"],
    }


def write_run_report(run_dir: str | os.PathLike) -> RunReport:
    """Build the run's default report and keep it in the run as report.json (what
    `mle-gym report --json` prints) and report.csv; a batch does this when it ends."""
    from mle_gym.analysis.render import write_report_files

    report = build_report(run_dir)
    extras = {"provenance": report.provenance, "integrity": report.integrity}
    write_report_files(report.summary, Path(run_dir), extras)
    return report
