"""The grading report: MLE-bench's fields plus our normalised score and the error."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

MEDALS = ("gold", "silver", "bronze")
#: The flat fields of a grade that an episode's result, a trainer's log and a report row
#: show (`GradeReport.summary`); the thresholds and paths stay in the full report.
SUMMARY_FIELDS = (
    "score",
    "valid_submission",
    "above_median",
    "any_medal",
    "gold_medal",
    "silver_medal",
    "bronze_medal",
    "medal",
    "normalized_score",
    "error",
)


@dataclass(frozen=True)
class GradeReport:
    competition_id: str
    score: float | None
    gold_threshold: float
    silver_threshold: float
    bronze_threshold: float
    median_threshold: float
    any_medal: bool
    gold_medal: bool
    silver_medal: bool
    bronze_medal: bool
    above_median: bool
    submission_exists: bool
    valid_submission: bool
    is_lower_better: bool
    sample_score: float
    #: (score - sample) / (gold - sample); None when there is no valid score.
    normalized_score: float | None
    #: Why the submission could not be graded; None when it was.
    error: str | None
    submission_path: str | None = None
    warnings: list[str] = field(default_factory=list)
    created_at: str = field(default_factory=lambda: datetime.now(UTC).isoformat())

    @property
    def medal(self) -> str | None:
        return next((name for name in MEDALS if getattr(self, f"{name}_medal")), None)

    def to_dict(self) -> dict:
        return asdict(self)

    def summary(self) -> dict[str, Any]:
        """The flat grade (`SUMMARY_FIELDS`) that every record of an episode is built from."""
        return summarize(self.to_dict())


def summarize(report: Mapping[str, Any] | None) -> dict[str, Any]:
    """`GradeReport.summary` of a stored report (report.json, `info["report"]`); with no
    report, every field is None (an episode that was never graded)."""
    if not report:
        return dict.fromkeys(SUMMARY_FIELDS)
    medal = medal_name(report)
    return {
        **{name: report.get(name) for name in SUMMARY_FIELDS},
        "medal": None if medal == "none" else medal,
    }


def medal_name(report: Mapping[str, Any]) -> str:
    """The medal a stored report won, as a row shows it: gold, silver, bronze or none (the
    report keeps a boolean per medal, and `any_medal` cannot say which)."""
    return next((name for name in MEDALS if report.get(f"{name}_medal")), "none")
