"""A process holding many descriptors still drives sandboxes (no select() ceiling at 1024).

RL trainers hold hundreds of envs in one process, so a sandbox's pty, pipe or socket often
gets a descriptor number above 1024, which select() refuses. Each test runs a fresh
interpreter whose soft open-files limit starts at 1024, so it also checks that making an env
(its sandbox) lifts that limit, and that importing the sandboxes alone leaves it be.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

SCRIPT = textwrap.dedent(
    """
    import json, os, resource, sys
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (1024, hard))
    import gymnasium as gym
    import mle_gym.sandbox
    imported = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    env = gym.make("mle/sklearn-digits-v0", backend=sys.argv[1])  # makes its sandbox
    lifted = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    held = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]
    env.reset(seed=0)
    obs, *_ = env.step("echo ready-$((40 + 2))")
    obs2, *_ = env.step("head -c 300000 /dev/zero | tr '\\\\0' x | wc -c")
    fds = sorted(int(n) for n in os.listdir("/proc/self/fd"))
    env.close()
    print(json.dumps({"imported": imported, "lifted": lifted, "hard": hard, "obs": obs,
                      "obs2": obs2, "top_fd": fds[-1]}))
    """
)


def test_sandboxes_work_above_descriptor_1024(backend: str, digits_home: Path) -> None:
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    if hard != resource.RLIM_INFINITY and hard < 1200:
        pytest.skip(f"the hard open-files limit ({hard}) leaves no room above 1024")
    env = {**os.environ, "MLE_GYM_HOME": str(digits_home)}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, backend],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["imported"] == 1024, "importing the sandboxes changed the open-files limit"
    assert result["lifted"] > 1024, "making a sandbox left the soft limit at 1024"
    assert result["top_fd"] > 1100, "the sandbox's descriptors did not land above 1024"
    assert "ready-42" in result["obs"], result["obs"][-2000:]
    assert "300000" in result["obs2"], result["obs2"][-2000:]
