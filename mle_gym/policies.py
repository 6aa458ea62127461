"""Policies by name: the registry `mle-gym run --policy NAME` and batches look names up in.

mle_gym ships no policy of its own here: packages join the registry, either through the
`mle_gym.policies` entry-point group of their distribution (how mle_gym_baselines adds
`scripted`, `llm` and the scaffolds, and how an outside package adds one without touching
mle_gym) or by calling `register_policy` in the running process. An entry point is loaded
only when its name is looked up, so listing the names imports no policy, and a factory
imports its policy (and its optional extra) only when called.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import EntryPoint, entry_points
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mle_gym.runner import Policy

#: The entry-point group a distribution declares its policies in: `name = module:factory`.
ENTRY_POINT_GROUP = "mle_gym.policies"

PolicyFactory = Callable[..., "Policy"]

_registered: dict[str, PolicyFactory] = {}


class UnknownPolicy(ValueError):
    """No registered policy or entry point has this name."""


def register_policy(name: str, factory: PolicyFactory) -> None:
    """Make `factory(**options)` the policy called `name` in this process; it takes the
    place of an entry point of the same name (a test's stand-in, a notebook's experiment)."""
    if not name or not callable(factory):
        raise ValueError(f"register_policy needs a name and a callable factory, got {name!r}")
    _registered[name] = factory


def unregister_policy(name: str) -> None:
    """Undo `register_policy` (entry points are the installed distributions' to change)."""
    _registered.pop(name, None)


def _entry_points(name: str | None = None) -> list[EntryPoint]:
    """The group's entry points, once each: the same distribution found twice on the path
    (an installed copy and a checkout) declares the same target, which is no conflict."""
    selected = entry_points(group=ENTRY_POINT_GROUP, **({"name": name} if name else {}))
    unique: dict[tuple[str, str], EntryPoint] = {}
    for point in selected:
        unique.setdefault((point.name, point.value), point)
    return list(unique.values())


def policy_names() -> list[str]:
    """Every name a policy can be asked for, sorted; imports none of them."""
    return sorted(set(_registered) | {point.name for point in _entry_points()})


def policy_factory(name: str) -> PolicyFactory:
    """The factory registered as `name`, loading its entry point now."""
    if name in _registered:
        return _registered[name]
    points = _entry_points(name)
    if not points:
        names = policy_names()
        available = (
            f"available: {', '.join(names)}"
            if names
            else "no policy is registered: reinstall mle-gym (`pip install -e .`), whose "
            f"baselines declare theirs in the {ENTRY_POINT_GROUP!r} entry-point group"
        )
        raise UnknownPolicy(f"unknown policy {name!r}; {available}")
    if len(points) > 1:
        targets = ", ".join(point.value for point in points)
        raise UnknownPolicy(
            f"policy {name!r} is declared by several installed packages ({targets}); "
            "uninstall all but one"
        )
    factory = points[0].load()
    if not callable(factory):
        raise TypeError(f"the entry point of policy {name!r} ({points[0].value}) is no callable")
    return factory


def make_policy(name: str, **options: Any) -> Policy:
    """A new policy `name`, given its options (endpoint, model, ...) as keyword arguments."""
    return policy_factory(name)(**options)
