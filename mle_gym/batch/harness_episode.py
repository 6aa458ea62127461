"""One harness episode of a batch (`mle-gym run --split lite --harness CMD`): the black-box
harness mode run into the episode's own directory, with the same report and result files
as a policy episode, so resume, reports and Ray treat both alike."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mle_gym.batch.runners import with_gpus
from mle_gym.batch.spec import EpisodeTask
from mle_gym.data import require_prepared
from mle_gym.runs.result import EpisodeResult, write_result

#: Inside an episode's directory: what `run_harness` writes (the model calls it recorded,
#: the harness's output, its own result).
HARNESS_DIR = "harness"


def run_harness_task(
    task: EpisodeTask,
    directory: Path,
    *,
    secrets: dict[str, Any] | None = None,
    gpus: Sequence[str] | None = None,
) -> EpisodeResult:
    """The harness runner (batch/runners.py): run the harness of `task.policy_options`
    (command, model_endpoint, harness_dir, max_requests, max_validations; api_key among
    `secrets`) on `task`'s competition and seed, and write the episode's report and result."""
    from mle_gym.harness.run import run_harness

    require_prepared(task.competition_id)
    options = dict(task.policy_options)
    command, endpoint = options.pop("command"), options.pop("model_endpoint")
    inner = directory / HARNESS_DIR
    shutil.rmtree(inner, ignore_errors=True)  # a retried episode starts clean
    result = run_harness(
        task.competition_id,
        command,
        endpoint,
        run_dir=inner,
        seed=task.seed,
        api_key=(secrets or {}).get("api_key"),
        **options,
        **with_gpus(task.env_kwargs, gpus),
    )
    summary = EpisodeResult.from_report(
        result.report,
        competition_id=task.competition_id,
        seed=task.seed,
        steps=0,
        terminated=not result.cut,
        truncated=result.cut,
        total_reward=result.reward,
        seconds=round(result.seconds, 3),
        submission=(
            str(result.submission_path.relative_to(directory)) if result.submission_path else None
        ),
        details={
            "harness": {
                "exit_code": result.exit_code,
                "cut": result.cut,
                "model_calls": result.requests,
                "refused": result.refused,
                "validations": result.validations,
            },
            "integrity": result.integrity,
        },
    )
    write_result(directory, result.report, summary)
    return summary
