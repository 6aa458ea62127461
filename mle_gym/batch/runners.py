"""How a batch episode is run: one protocol, implemented by the policy runner
(batch/episode.py: a policy steps a gym env) and the harness runner
(batch/harness_episode.py: a black-box harness inside an episode's sandbox). A task names
its runner (`EpisodeTask.runner`); the worker picks the implementation by that name. Both
write the same report and result files, so resume, reports and Ray treat them alike."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from mle_gym.batch.spec import EpisodeTask
from mle_gym.runs.result import EpisodeResult


class EpisodeRunner(Protocol):
    """Runs one task into its episode directory and returns the result it wrote there."""

    def __call__(
        self,
        task: EpisodeTask,
        directory: Path,
        *,
        secrets: dict[str, Any] | None = None,
        gpus: Sequence[str] | None = None,
    ) -> EpisodeResult: ...


def with_gpus(env_kwargs: dict[str, Any], gpus: Sequence[str] | None) -> dict[str, Any]:
    """The env's arguments with the devices this episode was given."""
    if not gpus:
        return dict(env_kwargs)
    options = {**(env_kwargs.get("sandbox_options") or {}), "gpus": list(gpus)}
    return {**env_kwargs, "sandbox_options": options}
