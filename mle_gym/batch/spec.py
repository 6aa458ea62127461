"""What a batch run is: who acts (a policy, or a harness) and env settings, over
competitions × seeds."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

#: Policy options never written to a run directory (they reach the workers another way).
SECRET_OPTIONS = frozenset({"api_key"})
#: The runners of a batch's episodes (batch/runners.py): a registered policy steps the env,
#: or a black-box harness runs inside the episode (its options are `run_harness`'s).
POLICY_RUNNER = "policy"
HARNESS_RUNNER = "harness"
#: How often a batch's policy episodes take a checkpoint by default: every this many steps,
#: or this many minutes, whichever comes first (0 turns either off).
CHECKPOINT_EVERY_STEPS = 10
CHECKPOINT_EVERY_MINUTES = 30.0
#: Where a rerun starts an unfinished episode: its newest checkpoint, or step 0.
RESUME_FROM = ("checkpoint", "start")


def _check_runner(policy: str | None, runner: str) -> None:
    """A policy episode names its policy; another runner's names none."""
    if (policy is None) == (runner == POLICY_RUNNER):
        wants = "needs a policy name" if policy is None else f"takes no policy ({policy!r})"
        raise ValueError(f"an episode of the {runner!r} runner {wants}")


@dataclass(frozen=True)
class EpisodeTask:
    """One episode to run: the unit a worker process (or a Ray task) takes. `runner` names
    how it runs (batch/runners.py); `policy` is the registered policy's name for the policy
    runner and None for the others, whose options are `policy_options` all the same."""

    competition_id: str
    seed: int
    policy: str | None
    policy_options: dict[str, Any] = field(default_factory=dict)
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    runner: str = POLICY_RUNNER
    #: The checkpoint schedule (0: off); how the episode runs, not what it is.
    checkpoint_every_steps: int = 0
    checkpoint_every_minutes: float = 0.0
    #: The checkpoint (a folder of the episode's checkpoints/) this attempt resumes from.
    resume_checkpoint: str | None = None

    def __post_init__(self) -> None:
        _check_runner(self.policy, self.runner)

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
    """Every (competition, seed) episode of one policy (or harness) with the same env
    settings."""

    competitions: tuple[str, ...]
    seeds: tuple[int, ...]
    policy: str | None
    policy_options: dict[str, Any] = field(default_factory=dict)
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    runner: str = POLICY_RUNNER
    #: Periodic checkpoints of each policy episode, and where a rerun starts an unfinished
    #: one (`RESUME_FROM`): per invocation, so not among the `settings` a resume must match.
    checkpoint_every_steps: int = CHECKPOINT_EVERY_STEPS
    checkpoint_every_minutes: float = CHECKPOINT_EVERY_MINUTES
    resume_from: str = "checkpoint"

    def __post_init__(self) -> None:
        _check_runner(self.policy, self.runner)
        if self.resume_from not in RESUME_FROM:
            raise ValueError(f"resume_from is one of {RESUME_FROM}, not {self.resume_from!r}")
        if self.checkpoint_every_steps < 0 or self.checkpoint_every_minutes < 0:
            raise ValueError("checkpoint intervals are 0 (off) or more")

    @property
    def agent(self) -> str:
        """Who acts, for titles, run-directory names and provenance: the policy's name, or
        the runner's (e.g. "harness")."""
        return self.policy or self.runner

    def tasks(self) -> list[EpisodeTask]:
        """Seed by seed, so a partial run already covers every competition."""
        options = self.public_options()
        return [
            EpisodeTask(
                c,
                s,
                self.policy,
                options,
                dict(self.env_kwargs),
                self.runner,
                self.checkpoint_every_steps,
                self.checkpoint_every_minutes,
            )
            for s in self.seeds
            for c in self.competitions
        ]

    def public_options(self) -> dict[str, Any]:
        return {k: v for k, v in self.policy_options.items() if k not in SECRET_OPTIONS}

    def secrets(self) -> dict[str, Any]:
        return {k: v for k, v in self.policy_options.items() if k in SECRET_OPTIONS}

    def settings(self) -> dict[str, Any]:
        """What must not change when a run is resumed (more seeds or competitions may come).
        A policy batch records no runner, as run directories always did, so they resume."""
        runner = {} if self.runner == POLICY_RUNNER else {"runner": self.runner}
        return {
            "policy": self.policy,
            "policy_options": self.public_options(),
            "env_kwargs": self.env_kwargs,
            **runner,
        }
