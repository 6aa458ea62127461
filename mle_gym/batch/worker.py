"""The process that runs one episode: `python -m mle_gym.batch.worker EPISODE_DIR`.

Each episode runs in a fresh process, so a crash, a leak or a hang stays with one episode.
The worker ends when its parent (the runner, or a Ray task) dies, even by SIGKILL: Linux
sends it SIGTERM then (PR_SET_PDEATHSIG), and SIGTERM closes the env, which removes the
sandbox, before the worker exits.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import logging
import os
import signal
import sys
import traceback
from pathlib import Path
from typing import Any

from mle_gym.batch.launch import SECRETS_ENV
from mle_gym.batch.runners import EpisodeRunner
from mle_gym.batch.spec import HARNESS_RUNNER, POLICY_RUNNER, EpisodeTask
from mle_gym.runs.jsonfile import read_json
from mle_gym.runs.layout import TASK_FILE

_PR_SET_PDEATHSIG = 1


def _die_with(parent: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
    if os.getppid() != parent:  # the parent died before the line above took effect
        raise SystemExit("the process that started this worker is gone")


def _exit_on_term(signum: int, _frame: Any) -> None:
    # Once is enough: the parent-death signal can come more than once (the kernel sends it
    # as each thread of the parent exits), and a second one would cut the cleanup short.
    signal.signal(signum, signal.SIG_IGN)
    raise SystemExit(128 + signum)


def runner_for(task: EpisodeTask) -> EpisodeRunner:
    """The implementation of the task's runner (batch/runners.py), imported now: each
    brings its own heavy part (gym and a policy, or the harness's proxy)."""
    if task.runner == POLICY_RUNNER:
        from mle_gym.batch.episode import run_policy_task

        return run_policy_task
    if task.runner == HARNESS_RUNNER:
        from mle_gym.batch.harness_episode import run_harness_task

        return run_harness_task
    raise ValueError(f"unknown episode runner {task.runner!r}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mle_gym.batch.worker")
    parser.add_argument("directory", type=Path)
    parser.add_argument("--parent", type=int, required=True)
    parser.add_argument("--gpus", help="comma-separated device ids for the sandbox")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, _exit_on_term)
    _die_with(args.parent)
    logging.basicConfig(
        level=logging.INFO,
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    task = EpisodeTask.from_dict(read_json(args.directory / TASK_FILE))
    secrets = json.loads(os.environ.pop(SECRETS_ENV, "") or "{}")
    gpus = args.gpus.split(",") if args.gpus else None
    logging.info(
        "episode %s: %s runner, policy %s, env %s, gpus %s",
        task.key, task.runner, task.policy, task.env_kwargs, gpus,
    )  # fmt: skip
    try:
        result = runner_for(task)(task, args.directory, secrets=secrets, gpus=gpus)
    except Exception:
        traceback.print_exc()
        return 1
    logging.info("episode %s finished: %s", task.key, result.to_dict())
    return 0


if __name__ == "__main__":
    sys.exit(main())
