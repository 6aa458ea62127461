"""Score over time and `--at`: figures from graded snapshots, checked against hand-computed
ones, on a run directory written by hand and on a real episode's snapshots."""

from __future__ import annotations

import io
import json
import math
from pathlib import Path

import pytest

import mle_gym
from mle_gym.analysis.over_time import (
    over_time,
    parse_duration,
    records_at,
    run_budget,
    time_points,
)
from mle_gym.cli import main
from mle_gym.envs import CompetitionEnv
from mle_gym.runs.run import read_run
from mle_gym.runs.store import RunStore

H = 3600.0


def _report(norm: float | None, medal: bool = False) -> dict:
    return {
        "valid_submission": norm is not None,
        "normalized_score": norm,
        "any_medal": medal,
        "score": norm,
    }


def _episode(root: Path, seed: int, snapshots: list[tuple[float, dict]]) -> None:
    directory = root / "episodes" / "sklearn-digits" / f"seed-{seed}"
    directory.mkdir(parents=True)
    (directory / "status.json").write_text(json.dumps({"state": "done", "attempt": 1}))
    (directory / "report.json").write_text(json.dumps(snapshots[-1][1]))
    graded = [{"elapsed": t, "step": i, "report": r} for i, (t, r) in enumerate(snapshots)]
    (directory / "snapshots.json").write_text(json.dumps(graded))


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    """Two seeds, 12 h budget. seed 0: 0.2 at 0.5 h, 0.5 at 1.5 h, 1.2 with a medal at
    8.3 h. seed 1: an invalid file at ~1.9 h, 0.4 at ~5.6 h."""
    root = tmp_path / "run"
    settings = {"policy": "scripted", "policy_options": {}, "env_kwargs": {"time_limit": 12 * H}}
    root.mkdir()
    (root / "batch.json").write_text(
        json.dumps({"settings": settings, "competitions": ["sklearn-digits"], "seeds": [0, 1]})
    )
    _episode(root, 0, [(1800, _report(0.2)), (5400, _report(0.5)), (30000, _report(1.2, True))])
    _episode(root, 1, [(7000, _report(None)), (20000, _report(0.4))])
    return root


def _close(a: float | None, b: float | None) -> bool:
    return (a is None and b is None) or (a is not None and b is not None and math.isclose(a, b))


def test_figures_over_time_match_hand_computed_ones(run_dir: Path) -> None:
    times = time_points(None, run_budget(run_dir))
    assert times == [1 * H, 2 * H, 4 * H, 8 * H, 12 * H]  # 24 h is past the budget
    points = over_time(read_run(run_dir), times)
    assert [p.scope for p in points] == ["demo"] * 5 and all(p.seeds == 2 for p in points)
    # per time: (normalised mean, sem), (any-medal mean, sem), by hand from the fixture
    expected = [
        ((0.1, 0.1), (0.0, 0.0)),  # seed 0: 0.2; seed 1: nothing yet -> 0
        ((0.25, 0.25), (0.0, 0.0)),  # 0.5; invalid -> 0
        ((0.25, 0.25), (0.0, 0.0)),
        ((0.45, 0.05), (0.0, 0.0)),  # 0.5; 0.4
        ((0.8, 0.4), (0.5, 0.5)),  # 1.2 with a medal; 0.4
    ]
    for point, (norm, medal) in zip(points, expected, strict=True):
        assert all(map(_close, point.figures["normalized_score"], norm)), point
        assert all(map(_close, point.figures["any_medal"], medal)), point


def test_report_at_gives_the_whole_report_as_of_then(
    run_dir: Path, capsys: pytest.CaptureFixture
) -> None:
    at = {(r.competition_id, r.seed): r.report for r in records_at(
        RunStore(run_dir).records(), run_dir, 2 * H)}  # fmt: skip
    assert at[("sklearn-digits", 0)]["normalized_score"] == 0.5
    assert not at[("sklearn-digits", 1)]["valid_submission"]
    assert main(["report", str(run_dir), "--at", "2h", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    figures = summary["competitions"]["sklearn-digits"]
    assert math.isclose(figures["normalized_score"]["mean"], 0.25)
    assert math.isclose(figures["valid_submission"]["mean"], 0.5)
    assert main(["report", str(run_dir), "--over-time", "--times", "1h,8h", "--json"]) == 0
    points = json.loads(capsys.readouterr().out)
    assert [p["hours"] for p in points] == [1.0, 8.0]
    assert math.isclose(points[1]["normalized_score"]["mean"], 0.45)


@pytest.mark.parametrize(
    ("text", "seconds"), [("12h", 12 * H), ("90m", 5400), ("30s", 30), ("1.5", 1.5 * H)]
)
def test_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "0h", "12d", "-1h", "h"])
def test_bad_durations_are_refused(text: str) -> None:
    with pytest.raises(ValueError, match="duration"):
        parse_duration(text)


def test_a_real_episode_with_three_submissions_over_time(
    digits_home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """An episode writes the sample, then a half-right and an all-right file, a second or
    more apart; its snapshots graded after the episode give the figures at times between."""
    import pandas as pd

    monkeypatch.setenv("MLE_GYM_HOME", str(digits_home))
    answers = pd.read_csv(digits_home / "sklearn-digits" / "private" / "test.csv")
    half = answers.copy()
    half.loc[half.index[::2], "label"] = (half.loc[half.index[::2], "label"] + 1) % 10
    texts = [f.to_csv(index=False) for f in (answers.assign(label=0), half, answers)]
    env = CompetitionEnv("sklearn-digits", backend="local", step_timeout=30)
    try:
        env.reset(seed=0)
        for i, text in enumerate(texts):
            env.step({"tool": "create", "path": f"/home/code/{i}.csv", "file_text": text})
        for i in range(3):
            env.step(f"sleep 1; cp /home/code/{i}.csv /home/submission/submission.csv")
            env.step({"tool": "validate"})
        *_, info = env.step({"tool": "submit"})
        graded = mle_gym.evaluate_snapshots("sklearn-digits", info["snapshots"])
    finally:
        env.close()
    assert len(graded) == 3
    root = tmp_path / "run"
    _episode(root, 0, [(g["elapsed"], g["report"]) for g in graded])
    elapsed = [g["elapsed"] for g in graded]
    times = [elapsed[0] / 2, (elapsed[0] + elapsed[1]) / 2, (elapsed[1] + elapsed[2]) / 2, 99]
    points = over_time(read_run(root), times)
    # by hand: accuracy of each file, then (accuracy - sample) / (gold - sample)
    report = info["report"]
    sample, gold = report["sample_score"], report["gold_threshold"]
    labels = [pd.read_csv(io.StringIO(t))["label"] for t in texts]
    accuracy = [round(float((given == answers["label"]).mean()), 5) for given in labels]
    norm = [max(0.0, (a - sample) / (gold - sample)) for a in accuracy]
    assert [p.figures["normalized_score"][0] for p in points] == pytest.approx(
        [0.0, norm[0], norm[1], norm[2]]
    )
    assert [p.figures["any_medal"][0] for p in points] == [0.0, 0.0, 0.0, 1.0]
