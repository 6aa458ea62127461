"""Policies by name, for `mle-gym run --policy NAME` and the batch runner."""

from __future__ import annotations

from typing import Any, Callable

from mle_gym.runner import Policy


def _scripted(**_options: Any) -> Policy:
    from baselines.scripted import ScriptedTabularPolicy

    return ScriptedTabularPolicy()


#: name -> factory taking the policy's options (endpoint, model, ...) as keyword arguments.
POLICIES: dict[str, Callable[..., Policy]] = {
    "scripted": _scripted,
}


def make_policy(name: str, **options: Any) -> Policy:
    try:
        factory = POLICIES[name]
    except KeyError:
        raise ValueError(f"unknown policy {name!r}; available: {', '.join(POLICIES)}") from None
    return factory(**options)
