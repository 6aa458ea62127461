"""Builds a sandbox backend by name, so the env never needs to know backend classes."""

from __future__ import annotations

from typing import Any

from mle_gym.sandbox.base import Sandbox

BACKENDS = ("local", "docker")


def make_sandbox(backend: str, **options: Any) -> Sandbox:
    if backend == "local":
        from mle_gym.sandbox.local import LocalSandbox

        return LocalSandbox(**options)
    if backend == "docker":
        from mle_gym.sandbox.docker import DockerSandbox

        return DockerSandbox(**options)
    raise ValueError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
