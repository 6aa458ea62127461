"""Submission snapshots: kept as the file changes, never graded before the episode ends,
graded afterwards by `mle_gym.evaluate_snapshots`, and bounded whatever the agent writes."""

from __future__ import annotations

import io
import resource
from pathlib import Path

import pandas as pd
import pytest

import mle_gym
from mle_gym.envs import CompetitionEnv
from mle_gym.grading.metrics import METRICS

SUBMISSION = "/home/submission/submission.csv"


@pytest.fixture
def digits_env_home(digits_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MLE_GYM_HOME", str(digits_home))
    return digits_home


@pytest.fixture
def metric_calls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every run of the accuracy metric appends a line to the returned file. Grading runs in
    a forked child, which inherits the wrapped metric, so the file sees each grade."""
    log = tmp_path / "metric-calls"
    log.touch()
    original = METRICS["accuracy"]

    def counted(*args, **kwargs):
        with open(log, "a") as handle:
            handle.write("graded\n")
        return original(*args, **kwargs)

    monkeypatch.setitem(METRICS._all(), "accuracy", counted)
    return log


def _submissions(home: Path) -> tuple[str, str, str]:
    """Three different submissions: the sample (all 0), half right, all right."""
    answers = pd.read_csv(home / "sklearn-digits" / "private" / "test.csv")
    zeros = answers.assign(label=0)
    half = answers.copy()
    half.loc[half.index[::2], "label"] = (half.loc[half.index[::2], "label"] + 1) % 10
    return tuple(frame.to_csv(index=False) for frame in (zeros, half, answers))


def _accuracy(text: str, home: Path) -> float:
    answers = pd.read_csv(home / "sklearn-digits" / "private" / "test.csv")
    given = pd.read_csv(io.StringIO(text))
    return round(float((given["label"].to_numpy() == answers["label"].to_numpy()).mean()), 5)


def test_three_submissions_are_kept_and_graded_only_after_the_episode(
    digits_env_home: Path, metric_calls: Path, backend: str
) -> None:
    first, second, third = _submissions(digits_env_home)
    env = CompetitionEnv("sklearn-digits", backend=backend, step_timeout=30, max_steps=30)
    try:
        env.reset(seed=0)
        seen = []
        for action in (
            {"tool": "create", "path": "/home/code/1.csv", "file_text": first},
            {"tool": "create", "path": "/home/code/2.csv", "file_text": second},
            {"tool": "create", "path": "/home/code/3.csv", "file_text": third},
            f"cp /home/code/1.csv {SUBMISSION}",
            {"tool": "validate"},
            "sleep 1",
            f"cp /home/code/2.csv {SUBMISSION}",
            {"tool": "validate"},
            "sleep 1",
            f"cp /home/code/3.csv {SUBMISSION}",
            {"tool": "validate"},
            f"cp {SUBMISSION} /tmp/same && cp /tmp/same {SUBMISSION}",  # same content again
        ):
            observation, reward, terminated, truncated, info = env.step(action)
            seen.append((observation, reward, info))
            assert not (terminated or truncated)
        # nothing graded, so no score anywhere: not in the observations, rewards or infos
        assert metric_calls.read_text() == ""
        assert all(r == 0.0 and "report" not in i and "snapshots" not in i for _, r, i in seen)
        assert seen[4][0] == seen[7][0] == seen[10][0] == "The submission is valid."
        *_, terminated, _, info = env.step({"tool": "submit"})
        assert terminated
        assert metric_calls.read_text() == "graded\n"  # the final submission, once
        kept = info["snapshots"]["kept"]
        # each kept after its step, or at the validate that follows when looks are spaced
        assert len(kept) == 3
        assert all(s["step"] in (k, k + 1) for s, k in zip(kept, (4, 7, 10), strict=True))
        assert kept[0]["elapsed"] < kept[1]["elapsed"] - 1 < kept[2]["elapsed"] - 2
        assert [s["final"] for s in kept] == [False, False, True]
        assert [s["bytes"] for s in kept] == [len(t.encode()) for t in (first, second, third)]
        integrity = info["integrity"]
        assert integrity["validations"] == 3 and integrity["grades_before_end"] == 0
        assert not integrity["score_exposed_during_episode"] and not integrity["network"]
        assert integrity["last_submission_write_step"] == kept[-1]["step"]
        assert not integrity["hit_limit"] and integrity["submission_snapshots"] == 3

        graded = mle_gym.evaluate_snapshots("sklearn-digits", info["snapshots"])
        assert metric_calls.read_text().count("graded") == 4
        expected = [_accuracy(t, digits_env_home) for t in (first, second, third)]
        assert [g["score"] for g in graded] == expected
        assert graded[-1]["score"] == info["report"]["score"] == 1.0
        assert graded[0]["valid"] and not graded[0]["any_medal"] and graded[2]["any_medal"]
    finally:
        env.close()


def test_snapshots_off_keeps_nothing(digits_env_home: Path) -> None:
    env = CompetitionEnv("sklearn-digits", backend="local", snapshots=False, step_timeout=30)
    try:
        env.reset(seed=0)
        env.step(f"cp /home/data/sample_submission.csv {SUBMISSION}")
        *_, info = env.step({"tool": "submit"})
        assert "snapshots" not in info and info["report"]["valid_submission"]
    finally:
        env.close()


@pytest.mark.parametrize("bad", [{"max_count": 0}, {"max_bytes": "1"}, {"other": 1}, "yes"])
def test_bad_snapshot_bounds_are_refused(digits_env_home: Path, bad: object) -> None:
    with pytest.raises(ValueError, match="snapshots"):
        CompetitionEnv("sklearn-digits", backend="local", snapshots=bad)


MIB = 1024**2


def _disk_use(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def test_a_rewrite_loop_and_huge_submissions_stay_within_the_bounds(
    digits_env_home: Path, backend: str
) -> None:
    """Hostile: a background loop rewrites the submission all the time, then the agent
    writes 40 MiB submissions, each different, and one over the copy cap. The kept copies
    stay within their count and bytes (the newest always kept), nothing else piles up on
    the host, and the host process never holds a whole file in memory."""
    bounds = {"max_count": 4, "max_bytes": 100 * MIB}
    env = CompetitionEnv(
        "sklearn-digits", backend=backend, step_timeout=60, max_steps=60, snapshots=bounds
    )
    try:
        env.reset(seed=0)
        env.step(
            "nohup sh -c 'i=0; while true; do i=$((i+1)); echo $i > "
            f"{SUBMISSION}.tmp; mv {SUBMISSION}.tmp {SUBMISSION}; done' >/dev/null 2>&1 & "
            "echo $! > /tmp/loop.pid"
        )
        env.step(f"while [ ! -s {SUBMISSION} ]; do sleep 0.01; done")
        for _ in range(12):
            env.step("sleep 0.05")  # the loop rewrites meanwhile
            env.step({"tool": "validate"})  # a validate always looks
        folder = env.episode._snapshots.directory
        assert 1 <= len(env.episode._snapshots.kept) <= 4 and env.episode._snapshots.thinned >= 8
        env.step("kill $(cat /tmp/loop.pid); sleep 0.2")
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        for i in range(6):
            # 40 MiB, different each time (the first line says which)
            env.step(f"(echo {i}; head -c {40 * MIB} /dev/zero | tr '\\0' 'x') > {SUBMISSION}")
            env.step({"tool": "validate"})
            assert _disk_use(folder) <= bounds["max_bytes"] + 64 * 1024  # + the index
        kept = env.episode._snapshots.kept
        assert len(kept) <= 4 and sum(s.bytes for s in kept) <= bounds["max_bytes"]
        assert kept[-1].bytes > 40 * MIB and kept[-1].step >= env.episode.steps - 1  # the newest
        grew = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - before
        assert grew < 32 * MIB, f"the host grew by {grew:,} bytes while snapshotting"
        # over the copy cap (64 MiB for this competition): refused, nothing kept of it
        env.step(f"head -c {80 * MIB} /dev/zero > {SUBMISSION}")
        assert _disk_use(folder) <= bounds["max_bytes"] + 64 * 1024
        assert not list(folder.glob(".incoming*"))
        *_, info = env.step({"tool": "submit"})
        assert not info["report"]["valid_submission"]
        assert len(info["snapshots"]["kept"]) <= 4
    finally:
        env.close()


def test_the_batch_worker_keeps_and_grades_the_snapshots_after_the_episode(
    local_batch: Path,
) -> None:
    import json

    for directory in sorted((local_batch / "episodes" / "sklearn-digits").glob("seed-*")):
        graded = json.loads((directory / "snapshots.json").read_text())
        report = json.loads((directory / "report.json").read_text())
        result = json.loads((directory / "result.json").read_text())
        assert graded and result["snapshots"] == len(graded)
        integrity = result["integrity"]
        assert integrity["task_variant"] == "default" and integrity["grades_before_end"] == 0
        assert integrity["last_submission_write_step"] == graded[-1]["step"]
        assert graded[-1]["final"] and graded[-1]["score"] == report["score"]
        for entry in graded:
            kept = directory / entry["path"]
            assert kept.is_file() and entry["bytes"] == kept.stat().st_size
        code = json.loads((directory / "code.json").read_text())
        assert result["code"]["files"] == len(code["files"]) and (directory / "code").is_dir()
        assert all((directory / "code" / f["path"]).is_file() for f in code["files"] if f["kept"])
        index = json.loads((directory / "snapshots" / "snapshots.json").read_text())
        assert [e["file"] for e in index["kept"]] == [Path(g["path"]).name for g in graded]


def test_the_integrity_record_says_when_a_limit_was_hit(digits_env_home: Path) -> None:
    env = CompetitionEnv("sklearn-digits", backend="local", step_timeout=1, max_steps=2)
    try:
        env.reset(seed=0)
        env.step("sleep 5")
        *_, truncated, info = env.step("true")
        integrity = info["integrity"]
        assert truncated and integrity["hit_limit"] and integrity["step_timeouts"] == 1
        assert integrity["last_submission_write_step"] is None and integrity["validations"] == 0
    finally:
        env.close()
