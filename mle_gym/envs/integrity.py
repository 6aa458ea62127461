"""What an episode's result must show to be trusted: the integrity record.

MLE-bench's users ask for machine-checkable evidence that no test signal reached an agent
(openai/mle-bench issues 124 and 138). The env counts what would carry such a signal as it
happens (validations asked for, grades made before the end) and what bounded the agent
(limits hit), and hands the record over in the final `info["integrity"]`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: Distinct limit notes kept per episode (an agent can hit the same limit every step).
MAX_NOTES = 20


@dataclass
class IntegrityLog:
    network: bool | str
    #: Validity checks asked for: the validate tool and MLE-bench's /validate.
    validations: int = 0
    #: Of those, checks that ran the metric to decide validity (MLE-bench's /validate with
    #: mlebench_validation="metric", as its own server does); the score went nowhere.
    metric_runs_for_validity: int = 0
    #: Grades (metric runs) made before the episode's final grade whose score could reach
    #: the agent or its policy: 0 unless something graded mid-episode.
    grades_before_end: int = 0
    #: Grades on a development variant's answers during the episode (its validate and dense
    #: reward): feedback from the public training data, never from the test set.
    dev_grades: int = 0
    step_timeouts: int = 0
    limit_notes: list[str] = field(default_factory=list)

    def note_limits(self, timed_out: bool, notes: list[str]) -> None:
        self.step_timeouts += int(timed_out)
        for note in notes:
            if note not in self.limit_notes and len(self.limit_notes) < MAX_NOTES:
                self.limit_notes.append(note)

    def record(
        self,
        data_variant: str,
        snapshots: dict[str, Any] | None,
        grading_budget: dict[str, Any],
        egress: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """The record for the final `info`; `data_variant` the data the episode ran on
        ("test" or "dev", see `EnvConfig.data`), `snapshots` is the final snapshot index,
        `grading_budget` the episode's host grading budget (`GradingBudget.to_dict`), and
        `egress` the proxy's summary where the network went through one."""
        kept = (snapshots or {}).get("kept") or []
        notes = list(self.limit_notes)
        if grading_budget.get("refused"):
            notes.append(f"host grading budget spent: {grading_budget['refused']} grade(s) not run")
        return {
            "data_variant": data_variant,
            "validations": self.validations,
            "metric_runs_for_validity": self.metric_runs_for_validity,
            "grades_before_end": self.grades_before_end,
            "score_exposed_during_episode": self.grades_before_end > 0,
            "dev_grades": self.dev_grades,
            "grading_budget": dict(grading_budget),
            "network": self.network,
            # the step after which the graded content was last found written
            "last_submission_write_step": kept[-1]["step"] if kept else None,
            "submission_snapshots": len(kept),
            "hit_limit": bool(self.step_timeouts or notes),
            "step_timeouts": self.step_timeouts,
            "limit_notes": notes,
            **({"network_use": _network_use(egress)} if egress is not None else {}),
        }


def _network_use(egress: dict[str, Any]) -> dict[str, Any]:
    """The proxy's figures an integrity record discloses (the log stays where it is)."""
    keys = ("policy", "requests", "denied", "distinct_hosts", "hosts", "bytes_received")
    return {key: egress[key] for key in keys if key in egress}
