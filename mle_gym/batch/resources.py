"""What one episode needs from the machine it runs on, and the docker limits that match it."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

_UNITS = {"": 1, "b": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4}


@dataclass(frozen=True)
class EpisodeResources:
    """CPUs, memory (bytes) and GPUs reserved for each episode (Ray's scheduling units)."""

    cpus: float = 1.0
    memory: int | None = None
    gpus: float = 0


def parse_size(text: str) -> int:
    """Bytes in a size written like Docker's: "512m", "16g", "1.5G", "2048"."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([bkmgt]?)i?b?\s*", text.lower())
    if match is None:
        raise ValueError(f"not a size: {text!r} (e.g. 512m, 16g)")
    return int(float(match.group(1)) * _UNITS[match.group(2)])


def with_limits(
    env_kwargs: dict[str, Any], cpus: float | None, memory: str | None
) -> dict[str, Any]:
    """Docker sandboxes get the CPUs and memory the episode reserves as their limits, so an
    episode cannot take more of a node than the scheduler counted for it; options already
    in `sandbox_options` win. Local sandboxes have no such limits and are left as they are."""
    if env_kwargs.get("backend") != "docker":
        return env_kwargs
    options = dict(env_kwargs.get("sandbox_options") or {})
    if cpus is not None:
        options.setdefault("cpus", cpus)
    if memory is not None:
        options.setdefault("memory", memory)
    return {**env_kwargs, "sandbox_options": options} if options else env_kwargs
