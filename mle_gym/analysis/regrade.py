"""Grading a run's kept submissions again with the installed grader (after a grader fix).

Each graded episode whose submission was kept is graded anew, in a bounded child process as
the env grades (the files are the agent's: hostile input); its old report is kept beside
the new one as report.before-<time>.json, and the run gets regrade-<time>.json listing every
verdict that changed. Episodes without a kept submission (none was made, or it was not a
file) and episodes never graded are left as they are, and counted.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mle_gym.competitions import get_competition
from mle_gym.data import require_prepared
from mle_gym.grading.bounded import grade_bounded
from mle_gym.runs.jsonfile import read_json, write_json
from mle_gym.runs.layout import REPORT_FILE, RESULT_FILE
from mle_gym.runs.result import read_result, write_result
from mle_gym.runs.run import Run
from mle_gym.runs.store import RunStore

#: The verdict's fields compared old against new.
VERDICT = (
    "valid_submission",
    "score",
    "above_median",
    "bronze_medal",
    "silver_medal",
    "gold_medal",
    "any_medal",
    "normalized_score",
    "error",
)


def regrade_run(run: Run) -> dict[str, Any]:
    """Regrade every kept submission of `run` (holding its lock, so no run writes at the
    same time); returns what changed and what was left alone."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    changed, unchanged, skipped = [], 0, {}
    with RunStore(run.root).locked():
        for record in run.records:
            key = record.key
            directory = run.episode_dir(record)
            kept = _kept_submission(directory)
            if not run.graded(record):
                skipped[key] = f"not graded ({run.state(record.competition_id, record.seed)})"
                continue
            if kept is None:
                skipped[key] = "no kept submission"
                continue
            old = record.report or {}
            comp = get_competition(record.competition_id)
            dirs = require_prepared(comp.id, auto=False)
            shown = old.get("submission_path")
            new = grade_bounded(comp.id, kept, dirs.private, shown_path=shown).to_dict()
            diff = {
                name: {"before": old.get(name), "after": new.get(name)}
                for name in VERDICT
                if old.get(name) != new.get(name)
            }
            if not diff:
                unchanged += 1
                continue
            write_json(directory / f"report.before-{stamp}.json", old)
            _update_result(directory, new)
            changed.append({"episode": key, "changes": diff})
    summary = {
        "regraded_at": stamp,
        "changed": changed,
        "unchanged": unchanged,
        "skipped": skipped,
    }
    write_json(run.root / f"regrade-{stamp}.json", summary)
    return summary


def _kept_submission(directory: Path) -> Path | None:
    name = (read_json(directory / RESULT_FILE) or {}).get("submission")
    path = directory / name if name else None
    return path if path is not None and path.is_file() else None


def _update_result(directory: Path, report: dict[str, Any]) -> None:
    """Write the new report; result.json holds its summary (for progress displays), kept
    in step."""
    result = read_result(directory)
    if result is None:
        write_json(directory / REPORT_FILE, report)
    else:
        write_result(directory, report, result.regraded(report))
