"""What a run ran on and with, collected here and kept beside its episodes (as the records
layer files it, mle_gym.runs.provenance) so its figures can be reproduced.

Run level (provenance.json, one entry per `mle-gym run` invocation, since a resume may run on
another machine or version): mle_gym's version and git commit, Python and the grading
libraries, the host, the budgets, network setting, backend and policy, the policy's model and
endpoint host (never a key). Episode level (provenance.json in the episode's folder: what may
differ between episodes, e.g. on Ray): the host it ran on, the agent image's id and digests,
and whether the prepared data's checksums were verified.
"""

from __future__ import annotations

import os
import platform
import shutil
import socket
import subprocess
import time
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from mle_gym.sandbox.nvidia_devices import listed_gpus
from mle_gym.version import __version__

#: The libraries a grade depends on, whose versions are recorded.
LIBRARIES = ("pandas", "numpy", "scikit-learn", "pyarrow", "scipy", "gymnasium")


def _version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _git_commit() -> str | None:
    """The checkout's commit when mle_gym is imported from one (and whether it has edits)."""
    root = Path(__file__).resolve().parents[2]
    if not (root / ".git").exists() or shutil.which("git") is None:
        return None
    try:
        commit = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return commit + ("+local-edits" if dirty else "")


@cache
def software() -> dict[str, Any]:
    return {
        "mle_gym": __version__,
        "git_commit": _git_commit(),
        "python": platform.python_version(),
        "libraries": {name: _version(name) for name in LIBRARIES},
    }


def _cpu_model() -> str | None:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def _memory_bytes() -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return None


def _gpus() -> list[dict[str, str]]:
    """Each NVIDIA GPU's name and driver, from nvidia-smi when it is installed."""
    return [{"name": name, "driver": driver} for name, driver in listed_gpus()]


@cache
def host() -> dict[str, Any]:
    return {
        "hostname": socket.gethostname(),
        "platform": platform.platform(),
        "cpu_model": _cpu_model(),
        "cpu_count": os.cpu_count(),
        "memory_bytes": _memory_bytes(),
        "gpus": _gpus(),
    }


def endpoint_of(options: dict[str, Any], uses_model: bool = True) -> dict[str, Any]:
    """The policy's model and endpoint host, from its options or the variables it falls back
    on; the path and any credentials in the URL are left out. A policy that calls no model
    (the scripted one) has none, whatever the variables say."""
    if not uses_model:
        return {"model": None, "endpoint_host": None}
    base_url = options.get("base_url") or os.environ.get("OPENAI_BASE_URL")
    model = options.get("model") or os.environ.get("MLE_GYM_MODEL")
    return {"model": model, "endpoint_host": urlparse(base_url).hostname if base_url else None}


def effective_env(env_kwargs: dict[str, Any]) -> dict[str, Any]:
    """The budgets and isolation the episodes get: the run's settings, else the env's
    defaults (time_limit and step_timeout in seconds)."""
    from mle_gym.envs.config import RECORDED, option_defaults, option_names

    defaults = option_defaults()
    return {name: env_kwargs.get(name, defaults[name]) for name in option_names(RECORDED)}


def run_provenance(
    policy: str, policy_options: dict[str, Any], env_kwargs: dict[str, Any]
) -> dict[str, Any]:
    """One invocation's record (the caller passes options without secrets)."""
    return {
        "recorded_at": time.time(),
        "software": software(),
        "host": host(),
        "env": effective_env(env_kwargs),
        "policy": {"name": policy, **endpoint_of(policy_options, uses_model=policy != "scripted")},
    }


def image_of(env_kwargs: dict[str, Any]) -> dict[str, Any] | None:
    """The docker image an episode's sandbox runs: its tag, id and registry digests."""
    if env_kwargs.get("backend", "local") != "docker":
        return None
    from mle_gym.sandbox.docker import resolve_image
    from mle_gym.sandbox.engine import connect

    client = connect()
    try:
        tag = resolve_image(client, (env_kwargs.get("sandbox_options") or {}).get("image"))
        image = client.images.get(tag)
        return {"tag": tag, "id": image.id, "digests": image.attrs.get("RepoDigests", [])}
    finally:
        client.close()


def policy_endpoint(policy: Any) -> dict[str, Any] | None:
    """The model and endpoint host a policy resolved (its `endpoint`), never the key."""
    endpoint = getattr(policy, "endpoint", None)
    if endpoint is None:
        return None
    return {"model": endpoint.model, "endpoint_host": urlparse(endpoint.base_url).hostname}


def episode_provenance(
    env_kwargs: dict[str, Any], prepared: dict[str, Any], policy: Any
) -> dict[str, Any]:
    """What may differ between a run's episodes: host, image, the policy's resolved endpoint,
    the prepared data's record."""
    return {
        "policy": policy_endpoint(policy),
        "host": host(),
        "software": software(),
        "image": image_of(env_kwargs),
        "data": {
            "checksums_checked": bool(prepared.get("checksums_checked")),
            "mismatches": prepared.get("mismatches", []),
            "prepared_at": prepared.get("prepared_at"),
        },
    }
