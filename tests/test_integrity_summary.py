"""The run-level summary of the episodes' integrity records."""

from __future__ import annotations

from mle_gym.analysis.integrity import integrity_summary
from mle_gym.batch.store import EpisodeRecord


def _record(seed: int, integrity: dict | None, state: str = "done") -> EpisodeRecord:
    result = {"integrity": integrity} if integrity is not None else {}
    return EpisodeRecord("sklearn-digits", seed, state, 1, {}, result, None)


def test_the_summary_counts_what_each_record_says() -> None:
    clean = {
        "validations": 2,
        "score_exposed_during_episode": False,
        "network": False,
        "hit_limit": False,
        "last_submission_write_step": 5,
        "task_variant": "default",
    }
    summary = integrity_summary([
        _record(0, clean),
        _record(1, {**clean, "validations": 7, "network": True, "hit_limit": True}),
        _record(2, {**clean, "score_exposed_during_episode": True,
                    "last_submission_write_step": None, "task_variant": "lite-hints"}),
        _record(3, None),
        _record(4, clean, state="failed"),
    ])  # fmt: skip
    assert summary == {
        "episodes": 4,
        "without_record": 1,
        "score_exposed": ["sklearn-digits/seed-2"],
        "validations": {"total": 11, "mean": 11 / 3, "max": 7},
        "network": 1,
        "hit_limit": 1,
        "no_submission_written": 1,
        "task_variants": {"default": 2, "lite-hints": 1},
    }
