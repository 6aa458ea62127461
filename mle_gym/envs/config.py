"""`EnvConfig`: every option of a competition env, documented and validated in one place.

`gym.make("mle/<id>-v0", **options)`, the CLI, batches, the RL adapters and the harness all
name the same options; they take the names from here (`option_names`) instead of keeping
copies, so an option added here reaches all of them. The dataclass is frozen: an env's
options do not change under a running episode (the step budget a `TimeLimit` wrapper asks for
is the episode's, see `Episode.reset`).
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, get_type_hints

from mle_gym.envs.messages import OBSERVATION_FORMATS
from mle_gym.envs.mlebench_task import TASKS, VALIDATION_MODES
from mle_gym.grading.budget import DEFAULT_GRADING_CPU_BUDGET, GradingBudget
from mle_gym.grading.rewards import DEV_ONLY_REWARD_MODES, REWARD_MODES
from mle_gym.sandbox.factory import BACKENDS, check_options

#: The env's render modes (gym's `metadata["render_modes"]`).
RENDER_MODES = ("ansi", "human")

#: Option groups a consumer asks for by tag: "adapter" options are those an RL adapter takes
#: from its configuration or a dataset row; "recorded" ones are a run's budgets and isolation,
#: written to its provenance.
ADAPTER = "adapter"
RECORDED = "recorded"

#: The data an episode runs on: "test", the competition's own split (graded on its real
#: answers, no score before the end); "dev", its development variant carved from the public
#: files (data/dev_variant.py), with a development score on validate and a dense reward.
DATA_VARIANTS = ("test", "dev")


def _tagged(*tags: str) -> dict[str, Any]:
    return {"tags": tags}


@dataclass(frozen=True)
class EnvConfig:
    """The options of one competition env (the competition itself is the env's id)."""

    #: Sandbox: "local" (bubblewrap) or "docker".
    backend: str = field(default="local", metadata=_tagged(ADAPTER, RECORDED))
    #: Wall-clock budget of an episode in seconds, counted from the sandbox's start.
    time_limit: float = field(default=24 * 3600.0, metadata=_tagged(ADAPTER, RECORDED))
    #: Step budget of an episode; a `TimeLimit` wrapper's smaller one wins.
    max_steps: int = field(default=1000, metadata=_tagged(ADAPTER, RECORDED))
    #: Longest one command may run, in seconds (never past the wall clock).
    step_timeout: float = field(default=3600.0, metadata=_tagged(ADAPTER, RECORDED))
    #: Characters of a command's output the agent sees (head and tail).
    max_output_chars: int = field(default=20_000, metadata=_tagged(ADAPTER))
    #: The data: "test" (the competition's split) or "dev" (its development variant: the
    #: agent's /home/data is carved from the public files, grading uses the variant's answers,
    #: and validate reports the development score).
    data: str = field(default="test", metadata=_tagged(ADAPTER, RECORDED))
    #: How the final grade becomes the reward (grading/rewards.py); "dense" needs data="dev".
    reward_mode: str = field(default="normalized", metadata=_tagged(ADAPTER, RECORDED))
    #: False: no network; True: open outbound; "proxy": only through a logging egress proxy.
    network: bool | str = field(default=False, metadata=_tagged(ADAPTER, RECORDED))
    #: The egress proxy's policy (a preset's name or a dict); only with network="proxy".
    network_policy: str | dict[str, Any] | None = field(
        default=None, metadata=_tagged(ADAPTER, RECORDED)
    )
    #: The sandbox's own options (memory, cpus, gpus, runtime, ...); memory "auto" is this
    #: episode's share of the host.
    sandbox_options: dict[str, Any] | None = field(default=None, metadata=_tagged(ADAPTER))
    #: Gymnasium render mode: "ansi" returns the last observation, "human" prints a glance.
    render_mode: str | None = field(default=None, metadata=_tagged())
    #: "text" (one string per observation) or "messages" (chat messages).
    observation_format: str = field(default="text", metadata=_tagged())
    #: How many episodes share the host (make_vec's num_envs, a batch's workers): the default
    #: memory limits are one episode's share.
    concurrent_episodes: int | None = field(default=None, metadata=_tagged(ADAPTER))
    #: "mle_gym" (our statement) or MLE-bench's instructions ("mlebench",
    #: "mlebench-obfuscated") read from the user's checkout.
    task: str = field(default="mle_gym", metadata=_tagged())
    #: The user's MLE-bench checkout for task="mlebench..." (default: found as documented).
    mlebench_dir: str | Path | None = field(default=None, metadata=_tagged())
    #: Keep the submission's versions during the episode: True, False, or bounds
    #: {"max_count": N, "max_bytes": N}.
    snapshots: bool | dict[str, int] = field(default=True, metadata=_tagged())
    #: Whether an action that does not parse counts against max_steps (False: the adapters'
    #: rule, where it spends none).
    malformed_action_costs_step: bool = field(default=True, metadata=_tagged())
    #: Host CPU seconds for all of an episode's grades (grading/budget.py).
    grading_cpu_budget: float = field(default=DEFAULT_GRADING_CPU_BUDGET, metadata=_tagged())
    #: How MLE-bench's /validate decides: "format" (the format check) or "metric" (the metric
    #: runs for the verdict, as MLE-bench's server does); only with task="mlebench...".
    mlebench_validation: str = field(default="format", metadata=_tagged())

    def __post_init__(self) -> None:
        """Every check at construction, so a bad option fails at `gym.make`, with the reason."""
        if self.backend not in BACKENDS:
            raise ValueError(
                f"unknown backend {self.backend!r}; choose one of {', '.join(BACKENDS)}"
            )
        if self.reward_mode not in REWARD_MODES:
            raise ValueError(
                f"unknown reward_mode {self.reward_mode!r}; choose one of {REWARD_MODES}"
            )
        if self.data not in DATA_VARIANTS:
            raise ValueError(f"data must be one of {', '.join(DATA_VARIANTS)}, got {self.data!r}")
        if self.reward_mode in DEV_ONLY_REWARD_MODES and self.data != "dev":
            raise ValueError(
                f"reward_mode={self.reward_mode!r} scores the submission during the episode, "
                "which on the test data would be test-set feedback: it needs data='dev'"
            )
        if self.observation_format not in OBSERVATION_FORMATS:
            raise ValueError(
                f"observation_format must be one of {', '.join(OBSERVATION_FORMATS)}, "
                f"got {self.observation_format!r}"
            )
        if self.task not in TASKS:
            raise ValueError(f"task must be one of {', '.join(TASKS)}, got {self.task!r}")
        if self.render_mode is not None and self.render_mode not in RENDER_MODES:
            raise ValueError(f"render_mode must be one of {list(RENDER_MODES)}")
        for name in ("time_limit", "step_timeout", "max_steps", "max_output_chars"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise TypeError(f"{name} must be a number, got {value!r}")
            if value <= 0:
                raise ValueError(f"{name} must be positive, got {value}")
        if isinstance(self.max_steps, bool) or not isinstance(self.max_steps, numbers.Integral):
            raise TypeError(f"max_steps must be a whole number, got {self.max_steps!r}")
        if not isinstance(self.network, bool) and self.network != "proxy":
            raise TypeError(f"network must be False, True or 'proxy', got {self.network!r}")
        if self.network_policy is not None and self.network != "proxy":
            raise ValueError("network_policy governs network='proxy'; pass both")
        if not isinstance(self.malformed_action_costs_step, bool):
            raise TypeError(
                f"malformed_action_costs_step must be True or False, got "
                f"{self.malformed_action_costs_step!r}"
            )
        if self.sandbox_options is not None and not isinstance(self.sandbox_options, dict):
            raise TypeError(
                "sandbox_options must be a dict of options, e.g. {'memory': '4g'}, got "
                f"{self.sandbox_options!r}"
            )
        check_options(self.backend, self.sandbox_options or {})
        if self.mlebench_validation not in VALIDATION_MODES:
            raise ValueError(
                f"mlebench_validation must be one of {', '.join(VALIDATION_MODES)}, "
                f"got {self.mlebench_validation!r}"
            )
        if self.mlebench_validation != "format" and self.task == "mle_gym":
            raise ValueError(
                "mlebench_validation chooses how MLE-bench's /validate answers: it needs "
                "task='mlebench' or 'mlebench-obfuscated'"
            )
        grading = GradingBudget(self.grading_cpu_budget).seconds
        snapshot_bounds(self.snapshots)
        # the numbers as the episode uses them
        object.__setattr__(self, "grading_cpu_budget", grading)
        object.__setattr__(self, "time_limit", float(self.time_limit))
        object.__setattr__(self, "step_timeout", float(self.step_timeout))
        object.__setattr__(self, "max_steps", int(self.max_steps))
        object.__setattr__(self, "max_output_chars", int(self.max_output_chars))

    @property
    def mlebench(self) -> bool:
        """Whether the task is MLE-bench's (plain or obfuscated) rather than mle_gym's."""
        return self.task != "mle_gym"


def option_names(tag: str | None = None) -> tuple[str, ...]:
    """The env's option names, in `EnvConfig`'s order; with `tag`, those tagged so."""
    return tuple(f.name for f in fields(EnvConfig) if tag is None or tag in f.metadata["tags"])


def option_types(tag: str | None = None) -> dict[str, Any]:
    """Each option's type (resolved annotation), for a consumer that declares the options
    in its own schema (NeMo-Gym's pydantic config)."""
    hints = get_type_hints(EnvConfig)
    return {name: hints[name] for name in option_names(tag)}


def option_defaults() -> dict[str, Any]:
    """Each option's default."""
    return {f.name: f.default for f in fields(EnvConfig)}


def snapshot_bounds(snapshots: bool | dict[str, int]) -> dict[str, int] | None:
    """The snapshot keeper's bounds from the `snapshots` option (None: keep none)."""
    if snapshots is True:
        return {}
    if snapshots is False:
        return None
    if not isinstance(snapshots, dict) or not set(snapshots) <= {"max_count", "max_bytes"}:
        raise ValueError(
            "snapshots must be True, False or a dict with max_count and/or max_bytes, "
            f"got {snapshots!r}"
        )
    for name, value in snapshots.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"snapshots[{name!r}] must be a positive integer, got {value!r}")
    return dict(snapshots)
