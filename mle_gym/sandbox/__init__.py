"""Isolated places to run the agent's commands: local (bubblewrap) and docker."""

from mle_gym.sandbox.base import (
    CommandResult,
    Sandbox,
    SandboxError,
    SandboxLost,
    SandboxPaths,
    SandboxSpec,
)
from mle_gym.sandbox.fd_limit import raise_open_files_limit
from mle_gym.sandbox.local import LocalSandbox

raise_open_files_limit()

__all__ = [
    "CommandResult",
    "LocalSandbox",
    "Sandbox",
    "SandboxError",
    "SandboxLost",
    "SandboxPaths",
    "SandboxSpec",
]
