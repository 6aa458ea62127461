"""A batch episode's periodic checkpoints and resuming from them.

While a policy episode runs, its worker takes a checkpoint (`env.unwrapped.checkpoint`) into
the episode's own store (`checkpoints/` in its folder) every N steps or M minutes, and keeps
the newest few. When a rerun finds an unfinished episode with one, the driver hands the
worker its newest checkpoint and the worker resumes the episode from it instead of from
step 0. The result then carries the episode's lineage: the checkpoints it went through,
each segment's steps and seconds, and the totals.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import replace
from itertools import pairwise
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mle_gym.batch.spec import EpisodeTask
from mle_gym.checkpoints.retention import newest, prune
from mle_gym.checkpoints.store import CheckpointStore
from mle_gym.runs.layout import CHECKPOINTS_DIR
from mle_gym.runs.trajectory import read_trajectory

if TYPE_CHECKING:
    import gymnasium as gym

logger = logging.getLogger(__name__)

#: Checkpoints kept per episode: the newest, and one before it should the newest be damaged.
KEEP = 2


def resume_point(task: EpisodeTask, directory: Path) -> EpisodeTask:
    """`task` set to resume from the newest intact checkpoint in `directory`, the episode's
    folder, if it has one (else `task` as it is)."""
    folder = newest(CheckpointStore(directory / CHECKPOINTS_DIR))
    return task if folder is None else replace(task, resume_checkpoint=folder.name)


def checkpoint_path(task: EpisodeTask, directory: Path) -> Path | None:
    """The checkpoint the task resumes from, as a path in the episode's folder."""
    if task.resume_checkpoint is None:
        return None
    return directory / CHECKPOINTS_DIR / task.resume_checkpoint


class Checkpointer:
    """Takes the running episode's checkpoints on the task's schedule: after a step, when
    `every_steps` steps or `every_minutes` minutes passed since the last one (or the start
    of this segment). A checkpoint that fails is logged and costs the episode nothing."""

    def __init__(self, task: EpisodeTask, directory: Path) -> None:
        self.every_steps = task.checkpoint_every_steps
        self.every_seconds = task.checkpoint_every_minutes * 60
        self.store = CheckpointStore(directory / CHECKPOINTS_DIR)
        self._steps = 0
        self._since = time.monotonic()
        self.taken = 0

    def after_step(self, env: gym.Env, done: bool) -> None:
        self._steps += 1
        if done or not self._due():
            return
        try:
            env.unwrapped.checkpoint(self.store.root)
            prune(self.store, KEEP)
            self.taken += 1
        except Exception:
            logger.exception("the episode's checkpoint failed; the episode goes on")
        self._steps, self._since = 0, time.monotonic()

    def _due(self) -> bool:
        by_steps = self.every_steps > 0 and self._steps >= self.every_steps
        by_time = self.every_seconds > 0 and time.monotonic() - self._since >= self.every_seconds
        return by_steps or by_time


def lineage(
    resumed_from: Mapping[str, Any] | None, steps: int, seconds: float
) -> dict[str, Any] | None:
    """The lineage of an episode that ended after `steps` steps and `seconds` of its clock,
    from the env's `resumed_from` chain (None for an episode that never resumed): the
    checkpoints it went through, oldest first, each segment's steps and seconds (a segment
    runs from one checkpoint to the next one resumed from; time an interrupted segment spent
    after its checkpoint was lost with it, and counts in no budget), and the totals."""
    chain = []
    link = resumed_from
    while isinstance(link, Mapping):
        chain.append(link)
        link = link.get("parent")
    if not chain:
        return None
    chain.reverse()
    marks = [(None, 0, 0.0)] + [(c["id"], c["steps"], c["seconds"]) for c in chain]
    marks.append(("end", steps, seconds))
    segments = [
        {
            "from": start[0],
            "steps": end[1] - start[1],
            "seconds": round(end[2] - start[2], 3),
        }
        for start, end in pairwise(marks)
    ]
    return {
        "checkpoints": [
            {"id": c["id"], "steps": c["steps"], "seconds": c["seconds"]} for c in chain
        ],
        "segments": segments,
        "steps": steps,
        "seconds": round(seconds, 3),
    }


def earlier_reward(directory: Path, steps: int) -> float:
    """The reward the episode's earlier segments paid for its first `steps` steps, from its
    trajectory: the last recorded reward of each step number (a resumed segment takes the
    steps after its checkpoint again)."""
    rewards: dict[int, float] = {}
    for event in read_trajectory(directory):
        step = event.get("step")
        if event.get("event") == "step" and isinstance(step, int) and step <= steps:
            rewards[step] = float(event.get("reward") or 0.0)
    return sum(rewards.values())
