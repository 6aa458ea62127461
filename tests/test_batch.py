"""The batch runner: many (competition, seed) episodes, run directories, resume, reports."""

from __future__ import annotations

import csv
import io
import json
import math
import signal
import subprocess
from pathlib import Path

import numpy as np
import pytest

from mle_gym.analysis.aggregate import FIGURES, aggregate
from mle_gym.competitions import get_competition
from mle_gym.grading import grade
from mle_gym.runs.run import Run
from mle_gym.runs.store import EpisodeRecord
from tests.batch_support import (
    EPISODE,
    SEEDS,
    _has_steps,
    _status,
    _wait_for,
    batch_args,
    mle_gym,
    mle_gym_env,
)
from tests.conftest import require_bwrap


def recompute(run_dir: Path) -> dict[str, dict[str, tuple[float, float | None]]]:
    """MLE-bench's figures straight from the per-episode report.json files, independently of
    mle_gym.batch: per competition, mean ± sem over seeds; overall, over per-seed means."""
    reports: dict[str, dict[int, dict]] = {}
    for path in run_dir.glob("episodes/*/seed-*/report.json"):
        reports.setdefault(path.parent.parent.name, {})[int(path.parent.name[5:])] = json.loads(
            path.read_text()
        )

    def value(report: dict, key: str) -> float:
        if key == "normalized_score":
            score = report["normalized_score"]
            return max(0.0, score) if report["valid_submission"] and score is not None else 0.0
        return 1.0 if report[key] else 0.0

    def mean_sem(values: list[float]) -> tuple[float, float | None]:
        array = np.array(values)
        sem = float(array.std(ddof=1) / math.sqrt(len(array))) if len(array) > 1 else None
        return float(array.mean()), sem

    out: dict[str, dict[str, tuple[float, float | None]]] = {}
    for competition, seeds in reports.items():
        out[competition] = {k: mean_sem([value(r, k) for r in seeds.values()]) for k, _ in FIGURES}
    all_seeds = sorted({s for seeds in reports.values() for s in seeds})
    out["overall"] = {
        k: mean_sem(
            [
                float(np.mean([value(seeds[s], k) for seeds in reports.values() if s in seeds]))
                for s in all_seeds
            ]
        )
        for k, _ in FIGURES
    }
    return out


def assert_figures_match(figures: dict, expected: dict[str, tuple[float, float | None]]) -> None:
    for key, (mean, sem) in expected.items():
        assert figures[key]["mean"] == pytest.approx(mean), key
        if sem is None:
            assert figures[key]["sem"] is None, key
        else:
            assert figures[key]["sem"] == pytest.approx(sem, abs=1e-12), key


def test_batch_run_keeps_each_episode_and_reports_like_mle_bench(
    local_batch: Path, digits_home: Path
) -> None:
    episodes = sorted(
        p.relative_to(local_batch / "episodes").as_posix()
        for p in local_batch.glob("episodes/*/*")
        if p.is_dir()
    )
    assert episodes == [EPISODE.format(s) for s in range(SEEDS)]
    comp = get_competition("sklearn-digits")
    for seed in range(SEEDS):
        directory = local_batch / "episodes" / EPISODE.format(seed)
        assert json.loads((directory / "status.json").read_text())["state"] == "done"
        lines = [
            json.loads(line) for line in (directory / "trajectory.jsonl").read_text().splitlines()
        ]
        assert lines[0]["event"] == "reset" and lines[0]["info"]["seed"] == seed
        assert [line["action"]["tool"] for line in lines[1:]] == [
            "bash",
            "create",
            "bash",
            "validate",
            "submit",
        ]
        assert lines[-1]["terminated"] and "report" in lines[-1]["info"]
        report = json.loads((directory / "report.json").read_text())
        assert report == lines[-1]["info"]["report"] and report["valid_submission"]
        # the kept submission is the file that was graded
        regraded = grade(comp, directory / "submission.csv", digits_home / comp.id / "private")
        assert regraded.score == report["score"]
        assert "episode sklearn-digits/seed-" in (directory / "episode.log").read_text()

    summary = json.loads(mle_gym("report", str(local_batch), "--json", home=digits_home).stdout)
    assert summary["episodes"] == {
        "done": 3,
        "failed": 0,
        "running": 0,
        "missing": 0,
        "competitions": 1,
    }
    expected = recompute(local_batch)
    assert summary["competitions"]["sklearn-digits"]["seeds"] == SEEDS
    assert_figures_match(summary["competitions"]["sklearn-digits"], expected["sklearn-digits"])
    assert_figures_match(summary["overall"], expected["overall"])
    assert summary["overall"]["valid_submission"]["mean"] == 1.0

    rows = list(
        csv.DictReader(
            io.StringIO(mle_gym("report", str(local_batch), "--csv", home=digits_home).stdout)
        )
    )
    assert [r["scope"] for r in rows] == ["sklearn-digits", "demo", "overall"]
    expected["demo"] = expected["overall"]
    for row in rows:
        for key, (mean, _) in expected[row["scope"]].items():
            assert float(row[f"{key}_mean"]) == pytest.approx(mean)
    assert json.loads((local_batch / "report.json").read_text()) == summary

    table = mle_gym("report", str(local_batch), home=digits_home).stdout
    assert "sklearn-digits" in table and "demo" in table and "any medal %" in table


def _processes_mentioning(text: str) -> list[str]:
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            args = cmdline.read_bytes().decode(errors="replace").split("\0")
        except OSError:
            continue
        if any(text in a for a in args):
            found.append(" ".join(args))
    return found


def _nothing_left(run_dir: Path, sandbox_tmp: Path) -> None:
    """No worker of the run, no sandbox process and no workspace remain (bounded wait)."""
    _wait_for(
        lambda: (
            not _processes_mentioning(str(run_dir)) and not _processes_mentioning(str(sandbox_tmp))
        ),
        60,
        "the workers to exit",
    )
    _wait_for(lambda: not any(sandbox_tmp.iterdir()), 10, "the workspaces to be removed")


@pytest.mark.timeout(900)
def test_a_killed_run_resumes_with_only_the_missing_episodes(
    digits_home: Path, tmp_path: Path
) -> None:
    require_bwrap()
    run_dir, sandbox_tmp = tmp_path / "run", tmp_path / "tmp"
    sandbox_tmp.mkdir()
    runner = subprocess.Popen(
        ["mle-gym", *batch_args(run_dir, "--workers", "1")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=mle_gym_env(digits_home, sandbox_tmp),
    )
    try:
        _wait_for(
            lambda: (_status(run_dir, 0) or {}).get("state") == "done" and _has_steps(run_dir, 1),
            600,
            "seed 0 done and seed 1 under way",
        )
    finally:
        runner.send_signal(signal.SIGKILL)
        runner.wait(30)
    assert _status(run_dir, 1)["state"] == "running" and _status(run_dir, 2) is None
    _nothing_left(run_dir, sandbox_tmp)  # the worker died with the runner and closed its sandbox
    first = _status(run_dir, 0)

    out = mle_gym(*batch_args(run_dir, "--workers", "1"), home=digits_home, tmp=sandbox_tmp).stdout
    assert "2 episode(s) run, 1 already done, 0 failed" in out
    assert "sklearn-digits/seed-0:" not in out  # not run again
    assert _status(run_dir, 0) == first
    assert [_status(run_dir, s)["attempt"] for s in range(SEEDS)] == [1, 2, 1]
    assert all(_status(run_dir, s)["state"] == "done" for s in range(SEEDS))
    summary = json.loads((run_dir / "report.json").read_text())
    assert summary["episodes"]["done"] == SEEDS
    assert_figures_match(summary["overall"], recompute(run_dir)["overall"])
    _nothing_left(run_dir, sandbox_tmp)


@pytest.mark.timeout(300)
def test_sigterm_stops_the_workers_and_leaves_the_episode_to_retry(
    digits_home: Path, tmp_path: Path
) -> None:
    require_bwrap()
    run_dir, sandbox_tmp = tmp_path / "run", tmp_path / "tmp"
    sandbox_tmp.mkdir()
    output = tmp_path / "output"
    with open(output, "w") as out:
        runner = subprocess.Popen(
            ["mle-gym", "run", "sklearn-digits", "--seeds", "1", "--run-dir", str(run_dir)],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=mle_gym_env(digits_home, sandbox_tmp),
        )
    try:
        _wait_for(lambda: _has_steps(run_dir, 0), 120, "the episode to start")
        runner.send_signal(signal.SIGTERM)
        assert runner.wait(60) == 128 + signal.SIGTERM
    finally:
        if runner.poll() is None:
            runner.kill()
    # the same closing line as Ctrl-C, with the command that resumes
    assert "run the same command again to resume" in output.read_text(), output.read_text()
    status = _status(run_dir, 0)
    assert status["state"] == "failed" and status["error"].startswith("interrupted")
    _nothing_left(run_dir, sandbox_tmp)
    summary = json.loads(mle_gym("report", str(run_dir), "--json", home=digits_home).stdout)
    assert summary["episodes"]["failed"] == 1 and summary["overall"]["seeds"] == 0


def test_resuming_with_other_settings_is_refused(local_batch: Path, digits_home: Path) -> None:
    result = mle_gym(*batch_args(local_batch, "--max-steps", "3"), home=digits_home, ok=False)
    assert result.returncode == 2 and "other settings" in result.stderr


def test_one_id_alone_still_runs_one_episode_live(digits_home: Path, tmp_path: Path) -> None:
    require_bwrap()
    result = subprocess.run(
        ["mle-gym", "run", "sklearn-digits", "--max-steps", "1"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env=mle_gym_env(digits_home),
    )
    assert result.returncode == 1  # no submission after one step
    assert "step 1: bash" in result.stdout and "valid_submission" in result.stdout
    assert list(tmp_path.iterdir()) == []  # no run directory


def _record(competition: str, seed: int, state: str = "done", **flags: object) -> EpisodeRecord:
    report = {
        "valid_submission": True,
        "above_median": False,
        "any_medal": False,
        "gold_medal": False,
        "silver_medal": False,
        "bronze_medal": False,
        "normalized_score": 0.2,
        **flags,
    }
    return EpisodeRecord(
        competition, seed, state, 1, report if state == "done" else None, None, None
    )


def _run(records: list[EpisodeRecord]) -> Run:
    return Run(
        Path("."),
        tuple(sorted({r.competition_id for r in records})),
        tuple(sorted({r.seed for r in records})),
        tuple(records),
        {},
    )


def test_aggregate_takes_means_over_seeds_of_per_seed_means() -> None:
    records = [
        _record("a", 0, gold_medal=True, any_medal=True, above_median=True, normalized_score=1.2),
        _record("a", 1, bronze_medal=True, any_medal=True, above_median=True, normalized_score=0.6),
        _record("a", 2, valid_submission=False, normalized_score=None),
        _record("b", 0, normalized_score=-0.5),
        _record("b", 1, silver_medal=True, any_medal=True, normalized_score=0.8),
        _record("b", 2, state="failed"),  # never graded: not counted
    ]
    summary = aggregate(_run(records))
    assert summary.episodes == {
        "done": 5,
        "failed": 1,
        "running": 0,
        "missing": 0,
        "competitions": 2,
    }
    a, b = summary.competitions
    assert (a.name, a.seeds, b.seeds) == ("a", 3, 2)
    medal_a = [1.0, 1.0, 0.0]
    assert a.figures["any_medal"].mean == pytest.approx(np.mean(medal_a))
    assert a.figures["any_medal"].sem == pytest.approx(np.std(medal_a, ddof=1) / math.sqrt(3))
    # scores floored at 0, and 0 without a valid submission
    assert a.figures["normalized_score"].mean == pytest.approx((1.2 + 0.6 + 0.0) / 3)
    assert b.figures["normalized_score"].mean == pytest.approx((0.0 + 0.8) / 2)
    # overall: seed 0 -> (1 + 0)/2, seed 1 -> (1 + 1)/2; seed 2 is dropped (b failed)
    per_seed = [0.5, 1.0]
    overall = summary.overall.figures["any_medal"]
    assert summary.overall.seeds == 2 and overall.mean == pytest.approx(np.mean(per_seed))
    assert overall.sem == pytest.approx(np.std(per_seed, ddof=1) / math.sqrt(2))
    assert summary.overall.account.dropped == {2: {"b": "failed"}}
    one = aggregate(_run([_record("a", 0)]))
    assert one.overall.figures["valid_submission"].sem is None


class _SubmitSample:
    """A policy that copies the sample submission, then submits, and reports a token count."""

    def __init__(self) -> None:
        self.last_step_info: dict | None = None

    def reset(self) -> None:
        self.turn = 0

    def act(self, observation: str, info: dict) -> object:
        self.turn += 1
        self.last_step_info = {"tokens": 10 * self.turn}
        if self.turn == 1:
            return f"cp /home/data/sample_submission.csv {info['paths']['submission_file']}"
        return {"tool": "submit"}


def test_recorder_writes_the_steps_as_they_come_and_keeps_the_graded_submission(
    digits_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gymnasium as gym

    from mle_gym.batch.recorder import TrajectoryRecorder
    from mle_gym.runner import run_episode

    require_bwrap()
    monkeypatch.setenv("MLE_GYM_HOME", str(digits_home))
    policy = _SubmitSample()
    path = tmp_path / "trajectory.jsonl"
    env = TrajectoryRecorder(gym.make("mle/sklearn-digits-v0"), path, policy)
    try:
        episode = run_episode(env, policy, seed=5)
        kept = env.kept_submission
        lines = [json.loads(line) for line in path.read_text().splitlines()]
        # written before close: a killed run keeps what happened so far
        assert [line["event"] for line in lines] == ["reset", "step", "step"]
    finally:
        env.close()
    assert lines[0]["info"]["seed"] == 5 and "Handwritten digits" in lines[0]["observation"]
    assert [line["policy_info"] for line in lines[1:]] == [{"tokens": 10}, {"tokens": 20}]
    assert lines[2]["info"]["report"] == episode.report and lines[2]["terminated"]
    sample = digits_home / "sklearn-digits" / "public" / "sample_submission.csv"
    assert kept == tmp_path / "submission.csv" and kept.read_bytes() == sample.read_bytes()


@pytest.mark.docker
@pytest.mark.timeout(300)
def test_local_workers_hand_their_episodes_their_own_gpus(
    docker_engine, digits_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Worker slot k gives its episode assign_gpus(devices, k, n). The scheduler is driven
    as run_batch drives it, without the check a run makes first (which refuses GPUs the
    engine cannot give before any episode): here the workers' gym.make refuses them, which
    shows the request reached Docker; with GPUs the episodes run."""
    from mle_gym.batch import BatchSpec, RunStore
    from mle_gym.batch.local import LocalScheduler

    monkeypatch.setenv("MLE_GYM_HOME", str(digits_home))
    run_dir = tmp_path / "run"
    store = RunStore(run_dir)
    spec = BatchSpec(("sklearn-digits",), (0, 1), "scripted", {}, {"backend": "docker"})
    scheduler = LocalScheduler(2, gpus=["0", "1"])
    outcomes = []
    with store.locked():
        store.open(spec)
        for task in spec.tasks():
            scheduler.start(task, store.begin(task))
        while scheduler.running():
            outcomes += scheduler.wait(1.0)
    logs = [
        (run_dir / "episodes" / EPISODE.format(s) / "episode.log").read_text() for s in range(2)
    ]
    assert "gpus ['0']" in logs[0] and "gpus ['1']" in logs[1]
    for log, (_, outcome) in zip(logs, sorted(outcomes, key=lambda o: o[0].seed), strict=True):
        assert outcome.ok or "[[gpu]]" in log
    # local sandboxes take GPUs too; this host has no NVIDIA driver: the run says so first
    refused = mle_gym(
        "run",
        "sklearn-digits",
        "--seeds",
        "1",
        "--gpus",
        "0",
        "--run-dir",
        str(tmp_path / "other"),
        home=digits_home,
        ok=False,
    )
    said = refused.stdout + refused.stderr
    assert refused.returncode != 0 and "no NVIDIA driver" in said, said[-2000:]
