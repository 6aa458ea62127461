"""One shape for what a graded episode says: `GradeReport.summary()`, the `EpisodeResult`
built from it and read back from result.json, and the trainers' views derived from it."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from mle_gym.grading.outcome import outcome
from mle_gym.grading.report import SUMMARY_FIELDS, GradeReport, summarize
from mle_gym.integrations.episode import grade
from mle_gym.runs.layout import REPORT_FILE, RESULT_FILE
from mle_gym.runs.result import EpisodeResult, read_result, write_result

SILVER = GradeReport(
    competition_id="sklearn-digits",
    score=0.95,
    gold_threshold=0.99,
    silver_threshold=0.94,
    bronze_threshold=0.9,
    median_threshold=0.8,
    any_medal=True,
    gold_medal=False,
    silver_medal=True,
    bronze_medal=False,
    above_median=True,
    submission_exists=True,
    valid_submission=True,
    is_lower_better=False,
    sample_score=0.1,
    normalized_score=0.95,
    error=None,
)


def test_the_summary_is_the_reports_flat_grade() -> None:
    summary = SILVER.summary()
    assert tuple(summary) == SUMMARY_FIELDS
    assert summary["medal"] == "silver" and summary["score"] == 0.95
    assert summarize(SILVER.to_dict()) == summary  # a stored report says the same
    assert summarize(None) == dict.fromkeys(SUMMARY_FIELDS)
    assert replace(SILVER, silver_medal=False, any_medal=False).summary()["medal"] is None


def test_a_result_goes_through_result_json_unchanged(tmp_path: Path) -> None:
    result = EpisodeResult.from_report(
        SILVER,
        competition_id="sklearn-digits",
        seed=3,
        steps=4,
        terminated=True,
        total_reward=0.95,
        seconds=1.5,
        submission="submission.csv",
        details={"episode_error": None, "harness": {"exit_code": 0}},
    )
    write_result(tmp_path, SILVER.to_dict(), result)
    stored = json.loads((tmp_path / RESULT_FILE).read_text())
    assert stored["valid_submission"] is True and stored["harness"] == {"exit_code": 0}
    assert json.loads((tmp_path / REPORT_FILE).read_text())["silver_threshold"] == 0.94
    assert read_result(tmp_path) == result
    assert read_result(tmp_path / "missing") is None


def test_an_older_result_json_reads_with_its_medal(tmp_path: Path) -> None:
    """result.json written before the summary kept `medal` (and its other keys as today)."""
    old = {"competition_id": "c", "seed": 0, "steps": 2, "sandbox": {"python": "3.11"}}
    old |= {name: SILVER.summary()[name] for name in SUMMARY_FIELDS if name != "medal"}
    result = EpisodeResult.from_dict(old)
    assert result.medal == "silver" and result.valid and result.score == 0.95
    assert result.details == {"sandbox": {"python": "3.11"}}
    assert result.to_dict() == {**old, "medal": "silver", **_defaults_of(result)}


def _defaults_of(result: EpisodeResult) -> dict:
    return {"terminated": False, "truncated": False, "total_reward": 0.0, "seconds": 0.0,
            "submission": None}  # fmt: skip


def test_a_regrade_replaces_only_the_grade() -> None:
    result = EpisodeResult.from_report(SILVER, competition_id="c", seed=0, steps=7)
    invalid = replace(SILVER, valid_submission=False, score=None, error="bad rows").to_dict()
    regraded = result.regraded(invalid)
    assert not regraded.valid and regraded.error == "bad rows" and regraded.steps == 7


def test_trainers_views_derive_from_the_summary() -> None:
    """The env's and `evaluate`'s outcome and the adapters' grade name the same grade."""
    env_view = outcome(SILVER, "normalized")
    adapter_view = grade(0.95, SILVER.to_dict())
    for key in ("score", "valid", "any_medal", "medal", "above_median", "normalized_score"):
        assert env_view[key] == adapter_view[key], key
    assert env_view["medal"] == "silver" and adapter_view["silver_medal"] is True
    assert grade(0.0, None) == {
        "reward": 0.0, "score": None, "valid": False, "any_medal": False, "medal": None,
        "above_median": False, "normalized_score": None, "error": None,
        "gold_medal": False, "silver_medal": False, "bronze_medal": False,
    }  # fmt: skip
