"""Starting the worker process of one episode (`mle_gym.batch.worker`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

#: Policy secrets (API keys) travel in the worker's environment, never in a file.
SECRETS_ENV = "MLE_GYM_POLICY_SECRETS"


def start_worker(
    directory: Path,
    log: IO[bytes],
    *,
    gpus: Sequence[str] | None = None,
    secrets: dict[str, Any] | None = None,
    tmpdir: Path | None = None,
) -> subprocess.Popen:
    """Start the worker for the episode whose task.json is in `directory`; it ends when this
    process does. `tmpdir` is where its sandboxes' workspaces go (default: the usual one)."""
    argv = [
        sys.executable,
        "-m",
        "mle_gym.batch.worker",
        str(directory),
        "--parent",
        str(os.getpid()),
    ]
    if gpus:
        argv += ["--gpus", ",".join(gpus)]
    env = {**os.environ, SECRETS_ENV: json.dumps(secrets or {})}
    if tmpdir is not None:
        env["TMPDIR"] = str(tmpdir)
    # A session of its own: a Ctrl-C in the terminal reaches the runner, which stops the
    # workers in order, rather than every worker at once.
    return subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env,
        start_new_session=True,
    )
