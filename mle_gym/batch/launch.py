"""Starting the worker process of one episode (`mle_gym.batch.worker`)."""

from __future__ import annotations

import json
import os
import site
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from mle_gym.sandbox.host_limits import CONCURRENCY_VARIABLE

#: Policy secrets (API keys) travel in the worker's environment, never in a file.
SECRETS_ENV = "MLE_GYM_POLICY_SECRETS"


def _package_root() -> str | None:
    """The folder this mle_gym was imported from, unless it is an ordinary site directory
    (there the worker finds the package anyway, and putting a site directory first on the
    path could shadow the standard library)."""
    root = Path(__file__).resolve().parents[2]
    sites = {Path(p).resolve() for p in [*site.getsitepackages(), site.getusersitepackages()]}
    return None if root in sites else str(root)


def start_worker(
    directory: Path,
    log: IO[bytes],
    *,
    gpus: Sequence[str] | None = None,
    secrets: dict[str, Any] | None = None,
    tmpdir: Path | None = None,
    concurrent: int | None = None,
) -> subprocess.Popen:
    """Start the worker for the episode whose task.json is in `directory`; it ends when this
    process does. `tmpdir` is where its sandboxes' workspaces go (default: the usual one);
    `concurrent`: how many episodes share the host (their default limits divide it)."""
    # -P: the current directory does not go first on sys.path, so a folder there named
    # `mle_gym` (a clone, say) cannot shadow the installed package as a namespace package
    # that registers no envs. The episode directory is made absolute for the same reason.
    argv = [
        sys.executable,
        "-P",
        "-m",
        "mle_gym.batch.worker",
        str(Path(directory).resolve()),
        "--parent",
        str(os.getpid()),
    ]
    if gpus:
        argv += ["--gpus", ",".join(gpus)]
    env = {**os.environ, SECRETS_ENV: json.dumps(secrets or {})}
    root = _package_root()
    if root is not None:  # e.g. run from a source tree: the worker imports the same package
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, env.get("PYTHONPATH")]))
    if tmpdir is not None:
        env["TMPDIR"] = str(tmpdir)
    if concurrent is not None:
        env[CONCURRENCY_VARIABLE] = str(concurrent)
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
