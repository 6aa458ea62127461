"""mle_gym: every MLE-bench competition as a Gymnasium environment.

Importing the package registers `mle/<id>-v0` for every competition, so
`gym.make("mle_gym:mle/<id>-v0")` works in fresh worker processes too. Registration imports
only the competitions' specs; pandas, scikit-learn, the sandboxes and the grader load when an
env is made or a competition prepared, so the import costs little more than gymnasium's.
Registration happens once gymnasium is imported (now, if it already is; see `gym_hook`), so
that importing a layer below the envs (`import mle_gym.grading`) loads no gym.
"""

from __future__ import annotations

from typing import Any

from mle_gym.gym_hook import after_gymnasium_import
from mle_gym.version import __version__


def _register() -> list[str]:
    from mle_gym.envs.registration import register_all

    return register_all()


after_gymnasium_import(_register)

__all__ = [
    "ENV_IDS",
    "__version__",
    "action_from_tool_call",
    "evaluate",
    "evaluate_snapshots",
    "make_vec",
    "run_episode",
    "run_harness",
    "tool_schemas",
]


def __getattr__(name: str) -> Any:
    """`make_vec`, `run_episode`, `evaluate`, `evaluate_snapshots`, `run_harness`,
    `tool_schemas` and `action_from_tool_call`, imported on first use; `ENV_IDS`, the
    registered env ids."""
    if name == "ENV_IDS":
        return _register()
    if name == "make_vec":
        from mle_gym.vector import make_vec

        return make_vec
    if name == "run_episode":
        from mle_gym.runner import run_episode

        return run_episode
    if name in ("evaluate", "evaluate_snapshots"):
        from mle_gym import evaluation

        return getattr(evaluation, name)
    if name == "run_harness":
        from mle_gym.harness import run_harness

        return run_harness
    if name in ("tool_schemas", "action_from_tool_call"):
        from mle_gym.tools import schemas

        return getattr(schemas, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
