"""MLE-bench's grading-report format, in and out.

Out: a run's counted episodes as the run-level report `mlebench grade` writes (totals plus one
competition report each), so MLE-bench's `experiments/aggregate_grading_reports.py` gives the
run's own figures. Its script pairs reports by position, per competition, not by seed; so the
export lists the row's counted seeds only, seed by seed (every competition once per seed), and
under --pad-incomplete writes a no-submission report where an episode was not graded. Both of
its rules then see complete seeds and agree with ours.

In: `mle-gym grade --submissions FILE.jsonl`, MLE-bench's input (one JSON object a line with
`competition_id` and `submission_path`), graded here into the same format.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mle_gym.analysis.aggregate import RunSummary, counted_seeds
from mle_gym.competitions import get_competition
from mle_gym.grading import grade
from mle_gym.grading.bounded import grade_bounded
from mle_gym.runs.run import Run
from mle_gym.runs.store import EpisodeRecord

#: The fields of one competition's report, in MLE-bench's order (grade_helpers.py).
FLOAT_FIELDS = ("gold_threshold", "silver_threshold", "bronze_threshold", "median_threshold")
BOOL_FIELDS = (
    "any_medal",
    "gold_medal",
    "silver_medal",
    "bronze_medal",
    "above_median",
    "submission_exists",
    "valid_submission",
    "is_lower_better",
)
REPORT_FIELDS = (
    "competition_id",
    "score",
    *FLOAT_FIELDS,
    *BOOL_FIELDS,
    "created_at",
    "submission_path",
)


def competition_report(report: dict[str, Any], submission_path: str | None = None) -> dict:
    """One of our grading reports with MLE-bench's fields and JSON types only."""
    score = report.get("score")
    return {
        "competition_id": str(report["competition_id"]),
        "score": None if score is None else float(score),
        **{name: float(report[name]) for name in FLOAT_FIELDS},
        **{name: bool(report[name]) for name in BOOL_FIELDS},
        "created_at": str(report["created_at"]),
        "submission_path": str(
            submission_path if submission_path is not None else report.get("submission_path") or ""
        ),
    }


def run_report(reports: list[dict[str, Any]]) -> dict[str, Any]:
    """MLE-bench's run-level totals over `reports`, and the reports themselves."""

    def total(name: str) -> int:
        return int(sum(bool(r[name]) for r in reports))

    medals = total("gold_medal") + total("silver_medal") + total("bronze_medal")
    return {
        "total_runs": len(reports),
        "total_runs_with_submissions": total("submission_exists"),
        "total_valid_submissions": total("valid_submission"),
        "total_medals": medals,
        "total_gold_medals": total("gold_medal"),
        "total_silver_medals": total("silver_medal"),
        "total_bronze_medals": total("bronze_medal"),
        "total_above_median": total("above_median"),
        "competition_reports": reports,
    }


def counted_episodes(
    run: Run, summary: RunSummary, row_name: str = "overall"
) -> list[tuple[str, int, EpisodeRecord | None]]:
    """(competition, seed, record or None) of the summary's row `row_name`, seed by seed:
    the episodes a leaderboard entry of that row counts."""
    rows = {row.name: row for row in summary.splits}
    if row_name not in rows:
        raise ValueError(f"the run has no {row_name!r} row; it has {', '.join(rows)}")
    row = rows[row_name]
    assert row.account is not None
    return [
        (competition, seed, run.record(competition, seed))
        for seed in counted_seeds(row.account)
        for competition in sorted(row.competitions)
    ]


def export_run(run: Run, summary: RunSummary, row_name: str = "overall") -> dict[str, Any]:
    """The counted episodes of the summary's row `row_name`, seed by seed, in MLE-bench's
    run-level format."""
    reports = []
    for competition, seed, record in counted_episodes(run, summary, row_name):
        if record is not None and run.graded(record):
            assert record.report is not None
            reports.append(competition_report(record.report, _kept(run, competition, seed)))
        else:  # padded: the episode failed, is running, or never ran
            empty = grade(get_competition(competition), None, Path(), shown_path="")
            reports.append(competition_report(empty.to_dict()))
    return run_report(reports)


def _kept(run: Run, competition: str, seed: int) -> str | None:
    """Where the graded submission is kept in the run directory, if it was kept."""
    record = run.record(competition, seed)
    name = (record.result or {}).get("submission") if record else None
    if not name:
        return None
    return str((run.root / "episodes" / competition / f"seed-{seed}" / name).resolve())


def read_submissions(path: Path) -> list[tuple[str, str]]:
    """(competition_id, submission_path) of each line of an MLE-bench submissions file;
    blank lines and lines starting with # are skipped; a bad line is an error naming it."""
    entries = []
    for number, line in enumerate(Path(path).read_text().splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            entry = json.loads(line)
            entries.append((str(entry["competition_id"]), str(entry["submission_path"])))
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise ValueError(
                f"{path}:{number}: each line must be a JSON object with competition_id and "
                f"submission_path ({type(exc).__name__}: {exc})"
            ) from None
    if not entries:
        raise ValueError(f"{path} holds no submissions")
    return entries


def into_answers(entries: list[tuple[str, str]], answer_dirs: Iterable[Path]) -> list[str]:
    """The submission paths of `entries` that lie, links followed, inside one of
    `answer_dirs` (prepared competitions' private/ folders): graded, the answers would
    score as gold without a word, so the caller refuses them unless told otherwise."""
    folders = [Path(os.path.realpath(folder)) for folder in answer_dirs]
    return [
        path
        for _competition, path in entries
        if any(Path(os.path.realpath(path)).is_relative_to(folder) for folder in folders)
    ]


def private_dir(comp: Any) -> Path:
    """A prepared competition's answers, for grading submissions made elsewhere."""
    from mle_gym.data import require_prepared

    return require_prepared(comp.id, auto=False).private


def grade_submissions(entries: list[tuple[str, str]], private_dir_of: Any) -> dict[str, Any]:
    """Grade each (competition, path) as MLE-bench's `grade_jsonl` does: a path that is not a
    .csv file counts as no submission. Each grade runs bounded, as the env's (the files may be
    hostile). `private_dir_of(competition)` gives the answers."""
    reports = []
    for competition_id, submission_path in entries:
        comp = get_competition(competition_id)
        path = Path(submission_path)
        shown = path if path.suffix.lower() == ".csv" else None
        report = grade_bounded(comp.id, shown, private_dir_of(comp), shown_path=submission_path)
        reports.append(competition_report(report.to_dict()))
    return run_report(reports)


def report_file_name(now: datetime | None = None) -> str:
    """`<timestamp>_grading_report.json`, the name MLE-bench gives its report."""
    stamp = (now or datetime.now(UTC)).strftime("%Y-%m-%dT%H-%M-%S-%Z")
    return f"{stamp}_grading_report.json"
