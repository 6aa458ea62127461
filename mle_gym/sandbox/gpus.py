"""Which GPUs a container gets: Docker device requests and the per-env assignment.

`gpus` is None (no GPU), "all", a count, or a list of device ids. When several envs share a
machine, `assign_gpus` gives env i the devices i*per_env, i*per_env+1, ... of the listed
ones, wrapping around (round-robin), so envs spread over the devices evenly.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

GpuSpec = None | str | int | Sequence[int | str]


def device_requests(gpus: GpuSpec) -> list[Any]:
    """The `device_requests` argument of a container for a `gpus` setting (docker's
    DeviceRequest objects; imported here so the local backend loads no docker SDK)."""
    from docker.types import DeviceRequest

    if gpus is None:
        return []
    if gpus == "all":
        return [DeviceRequest(count=-1, capabilities=[["gpu"]])]
    if isinstance(gpus, (bool, str)):
        raise ValueError(f"gpus must be None, 'all', a count or a list of device ids, not {gpus!r}")
    if isinstance(gpus, int):
        if gpus < 0:
            raise ValueError("a GPU count cannot be negative")
        return [DeviceRequest(count=gpus, capabilities=[["gpu"]])] if gpus else []
    ids = [str(g) for g in gpus]
    if not ids:
        return []
    return [DeviceRequest(device_ids=ids, capabilities=[["gpu"]])]


def assign_gpus(devices: Sequence[int | str], env_index: int, per_env: int = 1) -> list[str]:
    """The devices env number `env_index` gets, round-robin over `devices`."""
    if not devices or per_env <= 0:
        return []
    if per_env > len(devices):
        raise ValueError(f"per_env={per_env} is more than the {len(devices)} listed devices")
    start = env_index * per_env
    return [str(devices[(start + k) % len(devices)]) for k in range(per_env)]
