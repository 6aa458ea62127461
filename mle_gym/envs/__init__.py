"""Gymnasium environments: one per competition, registered as mle/<id>-v0.

`CompetitionEnv` is a thin `gym.Env` over its options (`EnvConfig`, envs/config.py), what
the agent is given (a `Task`, envs/task.py) and the episode (`Episode`, envs/episode.py:
sandbox, budget, tools, grading). They are imported on first use: registration needs only
the ids, and `import mle_gym` must stay cheap.
"""

from __future__ import annotations

from typing import Any

__all__ = ["CompetitionEnv", "EnvConfig", "Episode", "NotPrepared"]
_HOMES = {
    "CompetitionEnv": "competition_env",
    "NotPrepared": "competition_env",
    "EnvConfig": "config",
    "Episode": "episode",
}


def __getattr__(name: str) -> Any:
    if name in _HOMES:
        import importlib

        return getattr(importlib.import_module(f"mle_gym.envs.{_HOMES[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
