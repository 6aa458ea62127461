"""A parity run: the same agent under MLE-bench's own harness and under mle_gym, side by side.

Three columns per competition, as adapters to other harnesses publish their parity: MLE-bench's
grade of its own run (the `*grading_report*.json` its `mlebench grade` wrote), mle_gym's grade
of its own run, and mle_gym's grade of MLE-bench's submissions (the same files its own grade
read, so where the two graders disagree it shows here and nowhere else). Each column gives
the any-medal rate and the mean score over valid submissions, with standard errors over the
episodes, and how many episodes it has.

MLE-bench's run is read as its `run_agent.py` leaves a run group: `metadata.json` naming the
runs, each run a `<competition>_<id>/` folder with `submission/submission.csv`; or as the
JSONL that its `experiments/make_submission.py` writes from that, with the grading report
beside it.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mle_gym.analysis.aggregate import estimate
from mle_gym.analysis.mlebench_format import grade_submissions, read_submissions
from mle_gym.runs.run import Run

#: The columns, in the order printed.
COLUMNS = (
    ("mlebench_own", "MLE-bench grades its run"),
    ("mle_gym_own", "mle_gym grades its run"),
    ("mle_gym_theirs", "mle_gym grades MLE-bench's run"),
)
#: Two graders agree on a score within this (floating-point noise of the same metric).
SCORE_TOLERANCE = 1e-9


@dataclass(frozen=True)
class MLEBenchRun:
    """What MLE-bench's harness left: its submissions and, when present, its own grades."""

    source: Path
    submissions: list[tuple[str, str]]
    reports: list[dict[str, Any]] | None


def _submissions_of_run_group(folder: Path) -> list[tuple[str, str]]:
    metadata = folder / "metadata.json"
    if metadata.is_file():
        names = list(json.loads(metadata.read_text()).get("runs", []))
    else:
        names = sorted(p.name for p in folder.iterdir() if p.is_dir() and "_" in p.name)
    if not names:
        raise ValueError(
            f"{folder} holds no MLE-bench runs: expected metadata.json or <competition>_<id>/ "
            "folders, as MLE-bench's run_agent.py writes a run group"
        )
    return [
        (name.split("_")[0], str((folder / name / "submission" / "submission.csv").resolve()))
        for name in names
    ]


def _newest_report(folder: Path) -> list[dict[str, Any]] | None:
    reports = sorted(folder.glob("*grading_report*.json"))
    if not reports:
        return None
    return list(json.loads(reports[-1].read_text())["competition_reports"])


def read_mlebench_run(path: Path) -> MLEBenchRun:
    """MLE-bench's run group folder, or its submissions JSONL (its grading report beside)."""
    path = Path(path)
    if path.is_dir():
        return MLEBenchRun(path, _submissions_of_run_group(path), _newest_report(path))
    if path.is_file():
        return MLEBenchRun(path, read_submissions(path), _newest_report(path.parent))
    raise FileNotFoundError(f"no MLE-bench run at {path}: give its run group folder or JSONL")


def _figures(reports: list[dict[str, Any]]) -> dict[str, Any]:
    medals = [float(bool(r.get("any_medal"))) for r in reports]
    scores = [
        float(r["score"])
        for r in reports
        if r.get("valid_submission")
        and r.get("score") is not None
        and math.isfinite(float(r["score"]))
    ]
    return {
        "episodes": len(reports),
        "valid": sum(bool(r.get("valid_submission")) for r in reports),
        "any_medal": estimate(medals).to_dict() if medals else None,
        "score": estimate(scores).to_dict() if scores else None,
    }


def _by_competition(reports: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    grouped: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for report in reports:
        grouped[str(report["competition_id"])].append(report)
    return grouped


def _agreement(theirs: list[dict[str, Any]], ours: list[dict[str, Any]]) -> dict[str, Any]:
    """The same files graded by both graders, paired by path: how many agree on validity,
    medals and score, and which do not."""
    mine = {str(r["submission_path"]): r for r in ours}
    fields = ("valid_submission", "gold_medal", "silver_medal", "bronze_medal", "above_median")
    paired, differing = 0, []
    for report in theirs:
        other = mine.get(str(report.get("submission_path")))
        if other is None:
            continue
        paired += 1
        a, b = report.get("score"), other.get("score")
        same_score = (a is None and b is None) or (
            a is not None and b is not None and abs(float(a) - float(b)) <= SCORE_TOLERANCE
        )
        if not same_score or any(bool(report.get(f)) != bool(other.get(f)) for f in fields):
            differing.append(
                {"submission_path": report.get("submission_path"), "mlebench": a, "mle_gym": b}
            )
    return {"paired": paired, "agree": paired - len(differing), "differing": differing}


def parity(run: Run, theirs: MLEBenchRun, private_dir_of: Any) -> dict[str, Any]:
    """The three columns per competition and over all, and the graders' agreement on
    MLE-bench's own submissions."""
    own = [r.report for r in run.records if run.graded(r) and r.report]
    regraded = grade_submissions(theirs.submissions, private_dir_of)["competition_reports"]
    columns = {
        "mlebench_own": theirs.reports or [],
        "mle_gym_own": own,
        "mle_gym_theirs": regraded,
    }
    grouped = {name: _by_competition(reports) for name, reports in columns.items()}
    competitions = sorted({c for g in grouped.values() for c in g})
    return {
        "source": str(theirs.source),
        "mlebench_report_found": theirs.reports is not None,
        "competitions": {
            c: {name: _figures(grouped[name].get(c, [])) for name in columns} for c in competitions
        },
        "all": {name: _figures(reports) for name, reports in columns.items()},
        "agreement": _agreement(theirs.reports or [], regraded),
    }
