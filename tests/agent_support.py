"""What the agent-policy tests share: one episode with a policy, and `mle-gym run` with one."""

from __future__ import annotations

import os
import subprocess
import sys

import gymnasium as gym

import mle_gym
from mle_gym.runner import Episode, Policy
from tests.conftest import REPO


def run_policy_episode(env_id: str, backend: str, policy: Policy, max_steps: int) -> Episode:
    with gym.make(env_id, backend=backend, max_steps=max_steps) as env:
        return mle_gym.run_episode(env, policy, seed=0)


def run_cli_policy(
    policy: str,
    base_url: str,
    model: str,
    *extra: str,
    python: str = sys.executable,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess:
    """`mle-gym run sklearn-digits --policy POLICY` against an endpoint, as a user runs it."""
    command = [
        python,
        "-m",
        "mle_gym.cli",
        "run",
        "sklearn-digits",
        "--policy",
        policy,
        "--base-url",
        base_url,
        "--model",
        model,
        *extra,
    ]
    return subprocess.run(
        command,
        check=False,
        capture_output=True,
        text=True,
        timeout=240,
        cwd=REPO,
        env={**os.environ, "COLUMNS": "200", **(env or {})},
    )
