"""Builds a sandbox backend by name, so the env never needs to know backend classes."""

from __future__ import annotations

from typing import Any

from mle_gym.sandbox.base import Sandbox
from mle_gym.sandbox.fd_limit import raise_open_files_limit

BACKENDS = ("local", "docker")

#: The options each backend takes (sandbox_options), checked when an env is made.
OPTIONS = {
    "local": (
        "isolation",
        "memory",
        "cpus",
        "pids_limit",
        "disk",
        "uid",
        "files",
        "gpus",
        "runtime",
    ),
    "docker": (
        "image",
        "memory",
        "cpus",
        "pids_limit",
        "shm_size",
        "gpus",
        "user",
        "disk",
        "network_name",
        "files",
        "runtime",
    ),
}


def check_options(backend: str, options: dict[str, Any]) -> None:
    """Refuse unknown sandbox options now, naming the accepted ones, not at reset()."""
    if backend not in OPTIONS:
        raise ValueError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    unknown = sorted(set(options) - set(OPTIONS[backend]))
    if unknown:
        raise ValueError(
            f"unknown sandbox option(s) for backend={backend!r}: {', '.join(unknown)}; "
            f"it accepts: {', '.join(OPTIONS[backend])}"
        )


def make_sandbox(backend: str, **options: Any) -> Sandbox:
    """A new, unstarted sandbox of `backend`; the first one made lifts the process's
    open-files limit (fd_limit), which a trainer holding many envs needs."""
    raise_open_files_limit()
    if backend == "local":
        from mle_gym.sandbox.local import LocalSandbox

        return LocalSandbox(**options)
    if backend == "docker":
        from mle_gym.sandbox.docker import DockerSandbox

        return DockerSandbox(**options)
    raise ValueError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
