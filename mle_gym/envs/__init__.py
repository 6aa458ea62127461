"""Gymnasium environments: one per competition, registered as mle/<id>-v0.

`CompetitionEnv` (and the sandboxes, tools and grader it wires together) is imported on
first use: registration needs only the ids, and `import mle_gym` must stay cheap.
"""

from __future__ import annotations

from typing import Any

__all__ = ["CompetitionEnv", "NotPrepared"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from mle_gym.envs import competition_env

        return getattr(competition_env, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
