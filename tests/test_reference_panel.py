"""The demo competition's thresholds are reproducible from its reference panel."""

from __future__ import annotations

from pathlib import Path

import pytest

from mle_gym.competitions import get_competition
from mle_gym.data import prepare
from mle_gym.grading.grader import score_submission
from mle_gym.grading.medals import thresholds_from_leaderboard
from mle_gym.grading.reference_panel import panel_scores

DEMO = get_competition("sklearn-digits")


def test_panel_recomputes_the_shipped_figures(tmp_path: Path) -> None:
    result = prepare(DEMO, root=tmp_path)
    assert result.checked and not result.mismatches
    scores = panel_scores(DEMO, result.dirs.public, result.dirs.private)
    assert len(scores) == DEMO.num_teams == 22
    assert list(scores.values()) == sorted(scores.values(), reverse=True)
    assert thresholds_from_leaderboard(list(scores.values())) == DEMO.thresholds
    sample, _ = score_submission(
        DEMO, result.dirs.public / "sample_submission.csv", result.dirs.private
    )
    assert sample == pytest.approx(DEMO.sample_score)
