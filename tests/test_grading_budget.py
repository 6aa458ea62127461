"""One episode's host grading has one CPU budget: validations, the final grade and the
snapshots graded afterwards draw from it; a grade with nothing left is refused with the
reason, never run, and validations cannot spend the final grade's share."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

import mle_gym
from mle_gym.envs import CompetitionEnv
from mle_gym.grading import bounded
from mle_gym.grading.metrics import METRICS

SUBMISSION = "/home/submission/submission.csv"
#: CPU seconds each expensive check burns; the budget below leaves room for one.
BURN = 1.3


@pytest.fixture
def digits_env_home(digits_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MLE_GYM_HOME", str(digits_home))
    return digits_home


def _burner(log: Path, seconds: float | None, then):
    """A stand-in for a costly parse: appends to `log` (the grading child is a fork, so the
    file sees every run), burns `seconds` of CPU (None: until killed), then does `then`."""

    def burn(*args, **kwargs):
        with open(log, "a") as handle:
            handle.write("ran\n")
        start = time.process_time()
        while seconds is None or time.process_time() - start < seconds:
            pass
        return then(*args, **kwargs)

    return burn


def test_validations_final_grade_and_snapshots_share_one_budget(
    digits_env_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    checks, grades = tmp_path / "checks", tmp_path / "grades"
    monkeypatch.setattr(
        bounded, "check_submission", _burner(checks, BURN, bounded.check_submission)
    )
    # 4 CPU seconds in all; checks leave half of it (2 s) to the final grade
    env = CompetitionEnv("sklearn-digits", backend="local", max_steps=20, grading_cpu_budget=4)
    try:
        env.reset(seed=0)
        env.step(f"cp /home/data/sample_submission.csv {SUBMISSION}")
        first, *_ = env.step({"tool": "validate"})
        assert first == "The submission is valid."
        for _ in range(3):  # the checks' share is spent: refused, not run
            refused, *_ = env.step({"tool": "validate"})
            words = "The submission was not checked: this episode's host grading budget of 4"
            assert refused.startswith(words + " CPU seconds is spent"), refused
            assert "kept for the final grade" in refused
        assert checks.read_text() == "ran\n"
        env.step(f"echo 'id,label' > {SUBMISSION}")
        env.step({"tool": "validate"})  # refused, but it looks: a second snapshot
        env.step(f"cp /home/data/sample_submission.csv {SUBMISSION}")
        *_, terminated, _, info = env.step({"tool": "submit"})
        # the final grade still runs, on the share the checks left it
        assert terminated and info["report"]["valid_submission"], info["report"]["error"]
        integrity = info["integrity"]
        assert integrity["validations"] == 5 and integrity["grading_budget"]["refused"] == 4
        assert integrity["hit_limit"] and "host grading budget spent" in str(
            integrity["limit_notes"]
        )
        spent = info["snapshots"]["grading_budget"]["spent"]
        assert BURN <= spent < 4

        # the snapshots, graded after the episode, get what is left: a grade that would
        # take more is cut at the rest, and the ones after it are not run
        accuracy = METRICS["accuracy"]
        monkeypatch.setitem(METRICS._all(), "accuracy", _burner(grades, None, accuracy))
        graded = mle_gym.evaluate_snapshots("sklearn-digits", info["snapshots"])
        assert len(graded) >= 2 and not any(g["valid"] for g in graded)
        assert "the rest of this episode's host grading budget" in graded[0]["error"]
        for later in graded[1:]:
            assert "host grading budget of 4 CPU seconds is spent" in later["error"]
        assert grades.read_text() == "ran\n"
    finally:
        env.close()


def test_a_check_that_would_run_forever_is_cut_at_the_checks_share(
    digits_env_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    checks = tmp_path / "checks"
    monkeypatch.setattr(
        bounded, "check_submission", _burner(checks, None, bounded.check_submission)
    )
    env = CompetitionEnv("sklearn-digits", backend="local", max_steps=20, grading_cpu_budget=4)
    try:
        env.reset(seed=0)
        env.step(f"cp /home/data/sample_submission.csv {SUBMISSION}")
        cut, *_ = env.step({"tool": "validate"})
        assert "used more than 2 s of CPU time" in cut and "grading budget" in cut, cut
        *_, info = env.step({"tool": "submit"})
        assert info["report"]["valid_submission"], info["report"]["error"]
        assert 2 <= info["integrity"]["grading_budget"]["spent"] < 4
    finally:
        env.close()


def test_a_budget_must_be_positive() -> None:
    with pytest.raises(ValueError, match="must be a positive number"):
        CompetitionEnv("sklearn-digits", backend="local", grading_cpu_budget=0)
