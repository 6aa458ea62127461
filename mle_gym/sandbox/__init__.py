"""Isolated places to run the agent's commands: local (bubblewrap) and docker."""

from mle_gym.sandbox.base import (
    CommandResult,
    Sandbox,
    SandboxError,
    SandboxLost,
    SandboxPaths,
    SandboxSpec,
)
from mle_gym.sandbox.local import LocalSandbox

__all__ = [
    "CommandResult",
    "LocalSandbox",
    "Sandbox",
    "SandboxError",
    "SandboxLost",
    "SandboxPaths",
    "SandboxSpec",
]
