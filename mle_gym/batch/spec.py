"""What a batch run is: a policy and env settings, over competitions × seeds."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

#: Policy options never written to a run directory (they reach the workers another way).
SECRET_OPTIONS = frozenset({"api_key"})


@dataclass(frozen=True)
class EpisodeTask:
    """One episode to run: the unit a worker process (or a Ray task) takes."""

    competition_id: str
    seed: int
    policy: str
    policy_options: dict[str, Any] = field(default_factory=dict)
    env_kwargs: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> str:
        """The episode's path under the run directory, e.g. `sklearn-digits/seed-2`."""
        return f"{self.competition_id}/seed-{self.seed}"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EpisodeTask:
        return cls(**data)


@dataclass(frozen=True)
class BatchSpec:
    """Every (competition, seed) episode of one policy with the same env settings."""

    competitions: tuple[str, ...]
    seeds: tuple[int, ...]
    policy: str
    policy_options: dict[str, Any] = field(default_factory=dict)
    env_kwargs: dict[str, Any] = field(default_factory=dict)

    def tasks(self) -> list[EpisodeTask]:
        """Seed by seed, so a partial run already covers every competition."""
        options = self.public_options()
        return [
            EpisodeTask(c, s, self.policy, options, dict(self.env_kwargs))
            for s in self.seeds
            for c in self.competitions
        ]

    def public_options(self) -> dict[str, Any]:
        return {k: v for k, v in self.policy_options.items() if k not in SECRET_OPTIONS}

    def secrets(self) -> dict[str, Any]:
        return {k: v for k, v in self.policy_options.items() if k in SECRET_OPTIONS}

    def settings(self) -> dict[str, Any]:
        """What must not change when a run is resumed (more seeds or competitions may come)."""
        return {
            "policy": self.policy,
            "policy_options": self.public_options(),
            "env_kwargs": self.env_kwargs,
        }
