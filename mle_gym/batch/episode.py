"""One episode of a batch, run into a directory: what a worker process does."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import gymnasium as gym

from mle_gym.batch.checkpoints import Checkpointer, checkpoint_path, earlier_reward, lineage
from mle_gym.batch.provenance import episode_provenance
from mle_gym.batch.recorder import TrajectoryRecorder
from mle_gym.batch.runners import with_gpus
from mle_gym.batch.spec import EpisodeTask
from mle_gym.competitions import get_competition
from mle_gym.data import require_prepared
from mle_gym.grading.bounded import grade_bounded
from mle_gym.policies import make_policy
from mle_gym.runner import Episode, Policy, Step, run_episode
from mle_gym.runs.jsonfile import write_json
from mle_gym.runs.layout import GRADED_SNAPSHOTS_FILE, TRAJECTORY_FILE
from mle_gym.runs.provenance import write_episode_provenance
from mle_gym.runs.result import EpisodeResult, write_result

logger = logging.getLogger(__name__)


def run_policy_task(
    task: EpisodeTask,
    directory: Path,
    *,
    secrets: dict[str, Any] | None = None,
    gpus: Sequence[str] | None = None,
) -> EpisodeResult:
    """The policy runner (batch/runners.py): run `task`'s registered policy with its
    trajectory, submission, report and result in `directory`."""
    comp = get_competition(task.competition_id)
    prepared = require_prepared(comp.id).preparation_record()
    policy = make_policy(task.policy or "", **task.policy_options, **(secrets or {}))
    write_episode_provenance(
        directory, episode_provenance(with_gpus(task.env_kwargs, gpus), prepared, policy)
    )
    env = TrajectoryRecorder(
        gym.make(comp.env_id, **with_gpus(task.env_kwargs, gpus)),
        directory / TRAJECTORY_FILE,
        policy,
    )
    started = time.monotonic()
    resume = checkpoint_path(task, directory)
    checkpointer = Checkpointer(task, directory)
    try:
        episode, error = play(
            env,
            policy,
            task.seed,
            {"checkpoint": str(resume)} if resume is not None else None,
            checkpointer.after_step,
        )
        if not env.unwrapped.started:  # the first step found no sandbox: nothing to grade
            raise SandboxNeverStarted((episode.report or {}).get("error") or "no sandbox")
        episode_state = env.unwrapped.episode
        clock = episode_state.time_limit - episode_state.time_left()  # its clock, resumes included
        kept = env.kept_submission
        snapshots = env.kept_snapshots
        code = env.kept_code or {}
    finally:
        close(env)
    graded_snapshots = grade_snapshots(task.competition_id, snapshots, directory)
    report = episode.report or {}
    last = episode.steps[-1] if episode.steps else None
    info = last.info if last else {}
    steps, seconds = len(episode.steps), round(time.monotonic() - started, 3)
    history = lineage(info.get("resumed_from"), info.get("step", steps), clock)
    total_reward = episode.total_reward
    if history is not None:  # the whole episode's, over its segments
        steps, seconds = history["steps"], history["seconds"]
        total_reward += earlier_reward(directory, history["checkpoints"][-1]["steps"])
    result = EpisodeResult.from_report(
        report,
        competition_id=task.competition_id,
        seed=task.seed,
        steps=steps,
        terminated=bool(last and last.terminated),
        truncated=bool(last and last.truncated),
        total_reward=total_reward,
        seconds=seconds,
        submission=kept.name if kept else None,
        details={
            "snapshots": graded_snapshots,
            "code": {
                "files": len(code.get("files", ())),
                "kept_bytes": code.get("kept_bytes"),
                "error": code.get("error"),
            },
            "sandbox": last.info.get("sandbox") if last else None,
            "episode_error": error,
            "integrity": integrity_record(task, info, history),
            **({"lineage": history} if history is not None else {}),
        },
    )
    write_result(directory, report, result)
    return result


class SandboxNeverStarted(RuntimeError):
    """The episode's sandbox could not start: the infrastructure failed, not the agent, so
    the episode is marked failed and run again rather than graded."""


def play(
    env: TrajectoryRecorder,
    policy: Policy,
    seed: int | None,
    options: dict[str, Any] | None = None,
    after_step: Callable[[gym.Env, bool], None] | None = None,
) -> tuple[Episode, str | None]:
    """`run_episode` (reset with `options`; `after_step(env, done)` after each step: the
    checkpoints), but an error of the policy or the env once the agent has acted (its
    sandbox started) cannot veto the grade: the submission present then is graded, and the
    error is returned with the episode. Before that, nothing the agent did can be lost, so
    the error is raised and the episode is run again."""
    steps: list[Step] = []

    def on_step(step: Step) -> None:
        steps.append(step)
        if after_step is not None:
            after_step(env, step.terminated or step.truncated)

    try:
        return run_episode(env, policy, seed=seed, options=options, on_step=on_step), None
    except Exception as exc:
        if not env.unwrapped.started:
            raise
        error = f"{type(exc).__name__}: {exc}"
        logger.exception(
            "episode error after %d step(s); grading the submission present", len(steps)
        )
    env.record_error(error)
    env.policy = None  # the grading step below is no choice of the policy's
    try:
        observation, reward, terminated, truncated, info = env.step({"tool": "submit"})
    except Exception as exc:
        observation, reward, terminated, truncated, info = "", 0.0, False, True, {}
        error += f"; grading then failed too: {type(exc).__name__}: {exc}"
    if "report" not in info:  # the env could not grade: an invalid submission, saying why
        info = {**info, "report": _ungraded(env, f"the episode ended by an error: {error}")}
    steps.append(Step({"tool": "submit"}, observation, float(reward), terminated, truncated, info))
    return Episode("", steps), error


def close(env: gym.Env) -> None:
    """Close the env; a failure to clean up is logged, and cannot undo a grade given."""
    try:
        env.close()
    except Exception:
        logger.exception("closing the episode's env failed")


def _ungraded(env: TrajectoryRecorder, reason: str) -> dict[str, Any]:
    competition = env.unwrapped.competition
    # the env's own answers: a development variant's, never the real ones, for data="dev"
    report = grade_bounded(competition.id, None, env.unwrapped.dirs.private)
    return replace(report, error=reason).to_dict()


def integrity_record(
    task: EpisodeTask, info: dict[str, Any], history: dict[str, Any] | None = None
) -> dict[str, Any] | None:
    """The env's integrity record (envs/integrity.py) with what the run adds: the task
    variant asked for, and the lineage of a resumed episode. Deliberate differences from
    MLE-bench are joined in by the report, which reads them per competition."""
    record = info.get("integrity")
    if record is None:
        return None
    lineage = {"lineage": history} if history is not None else {}
    return {**record, "task_variant": task.env_kwargs.get("task") or "default", **lineage}


def grade_snapshots(competition_id: str, snapshots: Path | None, directory: Path) -> int:
    """Grade the episode's snapshots now that it is over (snapshots.json); how many."""
    if snapshots is None:
        return 0
    from mle_gym.evaluation import evaluate_snapshots

    graded = evaluate_snapshots(competition_id, snapshots)
    for entry in graded:  # relative to the episode's folder, so the run directory can move
        entry["path"] = str(Path(entry["path"]).relative_to(directory))
    write_json(directory / GRADED_SNAPSHOTS_FILE, graded)
    return len(graded)
