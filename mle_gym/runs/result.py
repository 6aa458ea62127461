"""What one graded episode says, as result.json holds it: one `EpisodeResult`, whichever
runner (a policy, a harness) played the episode.

Its grade is `GradeReport.summary()` of the episode's report, flattened into result.json
beside how the episode went (steps, reward, time, the kept submission), so a progress
display or a report row reads one small file. The full report sits beside it in
report.json; result.json is written after it, and its being whole is what marks the episode
finished (`mle_gym.runs.store.graded`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from mle_gym.grading.report import SUMMARY_FIELDS, GradeReport, summarize
from mle_gym.runs.jsonfile import read_json, write_json
from mle_gym.runs.layout import REPORT_FILE, RESULT_FILE

#: How the episode went, whichever runner played it (result.json's other keys are the
#: grade's and the runner's own `details`).
EPISODE_FIELDS = (
    "competition_id",
    "seed",
    "steps",
    "terminated",
    "truncated",
    "total_reward",
    "seconds",
    "submission",
)


@dataclass(frozen=True)
class EpisodeResult:
    """One episode's result: how it went, its grade summary, and what its runner adds
    (`details`: a policy's snapshots, kept code, sandbox, integrity and error; a harness's
    exit code and model calls)."""

    competition_id: str
    seed: int
    grade: dict[str, Any]
    steps: int = 0
    terminated: bool = False
    truncated: bool = False
    total_reward: float = 0.0
    seconds: float = 0.0
    #: The kept submission's path relative to the episode's folder, if one was kept.
    submission: str | None = None
    details: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_report(
        cls, report: GradeReport | Mapping[str, Any] | None, **fields: Any
    ) -> EpisodeResult:
        """The result of an episode graded with `report` (a report or its stored dict)."""
        grade = report.summary() if isinstance(report, GradeReport) else summarize(report)
        return cls(grade=grade, **fields)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> EpisodeResult:
        """A result read back from result.json (one written before `medal` was kept gets it
        from the medal fields)."""
        known = {name: data[name] for name in EPISODE_FIELDS if name in data}
        details = {
            k: v for k, v in data.items() if k not in EPISODE_FIELDS and k not in SUMMARY_FIELDS
        }
        return cls(grade=summarize(data), details=details, **known)

    def to_dict(self) -> dict[str, Any]:
        """result.json's content: the episode's fields, the runner's details, the grade."""
        return {
            **{name: getattr(self, name) for name in EPISODE_FIELDS},
            **self.details,
            **self.grade,
        }

    def regraded(self, report: GradeReport | Mapping[str, Any]) -> EpisodeResult:
        """The same episode with the grade of a new report (a regrade)."""
        grade = report.summary() if isinstance(report, GradeReport) else summarize(report)
        return replace(self, grade=grade)

    @property
    def valid(self) -> bool:
        return bool(self.grade.get("valid_submission"))

    @property
    def score(self) -> float | None:
        return self.grade.get("score")

    @property
    def medal(self) -> str | None:
        return self.grade.get("medal")

    @property
    def error(self) -> str | None:
        return self.grade.get("error")


def write_result(directory: Path, report: Mapping[str, Any], result: EpisodeResult) -> None:
    """Write the episode's report, then its result (last: its being whole marks the
    episode finished)."""
    write_json(Path(directory) / REPORT_FILE, dict(report))
    write_json(Path(directory) / RESULT_FILE, result.to_dict())


def read_result(directory: Path) -> EpisodeResult | None:
    """The episode's result, or None when it has none (it never finished)."""
    data = read_json(Path(directory) / RESULT_FILE)
    return EpisodeResult.from_dict(data) if isinstance(data, dict) else None
